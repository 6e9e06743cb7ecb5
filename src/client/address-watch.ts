import type { ApiClient } from './api-client.js';
import type { WatchedAddress } from '../wire/watch.js';
import type { DeliveryStatus, WebhookDelivery, WebhookEventFilters } from '../wire/webhooks.js';

export type { WatchedAddress } from '../wire/watch.js';
export type { DeliveryStatus, WebhookAttempt, WebhookDelivery, WebhookEventFilters } from '../wire/webhooks.js';

/** Address Watch shapes as clients see them; the server presents exactly these. */

export interface WatchAccount {
  slots_total: number;
  slots_used: number;
  slots_free: number;
  webhook_configured: boolean;
  webhook_enabled: boolean;
}

export type WatchEventType = 'payment' | 'payout' | 'other' | 'block';

/** A feed item and a webhook body. Wallet hits and block events carry different fields. */
export interface WatchEvent {
  id: string;
  type: WatchEventType;
  network: string;
  /** Block number; Stellar ledger sequence; Solana slot. */
  block_height: number;
  block_hash: string;
  created_at: string;
  watch_id?: string;
  address?: string;
  /** Transaction hash; Bitcoin txid; Solana transaction signature. */
  tx_hash?: string;
  direction?: 'in' | 'out';
  from?: string | null;
  to?: string | null;
  /** ERC-20 or TRC-20 contract, Stellar CODE:ISSUER, Solana SPL mint; null for the native coin. */
  token?: string | null;
  /** Raw integer amount in the smallest unit (wei, sat, sun, stroops, lamports; a token's base units). */
  amount?: string;
  log_index?: number | null;
  tx_count?: number;
  transactions?: string[];
  /** Present (true) on samples sent by the webhook test. */
  test?: boolean;
}

export interface WebhookSettings {
  url: string | null;
  enabled: boolean;
  events: WebhookEventFilters;
  egress_ips: string[];
}

type Ok<T> = { ok: true } & T;

/** Typed calls of the Address Watch routes, so `rpcctl watch|events|webhook` stay thin. */
export class AddressWatchClient {
  readonly #api: ApiClient;
  constructor(api: ApiClient) {
    this.#api = api;
  }

  account(): Promise<Ok<WatchAccount>> {
    return this.#api.request('GET', '/v1/address-watch/account');
  }
  list(q: { network_slug?: string; address?: string; page?: number; per_page?: number } = {}): Promise<Ok<{ addresses: WatchedAddress[]; page: number; per_page: number; total: number }>> {
    return this.#api.request('GET', '/v1/address-watch/addresses', { query: q });
  }
  /** Every watch, page by page. */
  async *all(q: { network_slug?: string; address?: string } = {}): AsyncGenerator<WatchedAddress> {
    for (let page = 1; ; page++) {
      const r = await this.list({ ...q, page, per_page: 200 });
      yield* r.addresses;
      if (page * r.per_page >= r.total || r.addresses.length === 0) return;
    }
  }
  /**
   * Idempotent: the same address again returns the existing watch with `created: false`.
   * `address` in its network's form: EVM 0x, Stellar G…, Bitcoin-style, Tron T…, or a Solana
   * public key (base58, kept as given).
   */
  add(networkSlug: string, address: string): Promise<Ok<WatchedAddress & { watch: WatchedAddress; created: boolean }>> {
    return this.#api.request('POST', '/v1/address-watch/addresses', { body: { network_slug: networkSlug, address } });
  }
  remove(watchId: string): Promise<Ok<{ watch_id: string }>> {
    return this.#api.request('DELETE', '/v1/address-watch/addresses', { body: { watch_id: watchId } });
  }
  /** `after: 'latest'` returns no events and the newest id as `next_after`: where a follower starts. */
  events(
    q: { after?: string; limit?: number; network?: string; type?: WatchEventType; watch_id?: string } = {},
    opts: { signal?: AbortSignal } = {},
  ): Promise<Ok<{ events: WatchEvent[]; next_after: string | null; retention_days: number | null }>> {
    return this.#api.request('GET', '/v1/address-watch/events', { query: q, signal: opts.signal });
  }
  webhook(): Promise<Ok<WebhookSettings>> {
    return this.#api.request('GET', '/v1/address-watch/webhook');
  }
  /** `events` keys given replace, keys left out keep their value; omit it to keep all filters. */
  /** Answers the saved configuration; `egress_ips` comes with webhook() (GET) only. */
  setWebhook(input: { url: string; enabled: boolean; events?: Partial<WebhookEventFilters> }): Promise<Ok<Omit<WebhookSettings, 'egress_ips'>>> {
    return this.#api.request('PUT', '/v1/address-watch/webhook', { body: input });
  }
  testWebhook(type: WatchEventType, network: string): Promise<Ok<{ queued: true; webhook_id: string; body: string }>> {
    return this.#api.request('POST', '/v1/address-watch/webhook/test', { body: { type, network } });
  }
  deliveries(q: { limit?: number; before?: string; status?: DeliveryStatus; event_id?: string } = {}): Promise<Ok<{ deliveries: WebhookDelivery[]; next_before: string | null; retention_days: number | null }>> {
    return this.#api.request('GET', '/v1/address-watch/deliveries', { query: q });
  }
  /** Sends a delivery again now: same X-Webhook-Id, next attempt number (our extension). */
  redeliver(deliveryId: string): Promise<Ok<{ delivery: WebhookDelivery }>> {
    return this.#api.request('POST', `/v1/address-watch/deliveries/${encodeURIComponent(deliveryId)}/redeliver`);
  }
}

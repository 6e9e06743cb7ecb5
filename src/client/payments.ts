import type { ApiClient } from './api-client.js';

/** Payment orders as clients see them; the server presents exactly these (decisions.md, "Payment orders"). */

export type PaymentStatus = 'pending' | 'seen' | 'aml_check' | 'paid' | 'failed' | 'underpaid' | 'expired';
export type PaymentEvent = Exclude<PaymentStatus, 'pending'>;

export interface AmlResult {
  provider: string;
  score: number;
  risk_level: 'low' | 'medium' | 'high' | 'severe' | 'unknown';
  details: Array<{ category: string; address: string; source: string }>;
  report_url: string | null;
  checked_at: string;
}

export interface Payment {
  payment_id: string;
  order_id: string;
  status: PaymentStatus;
  network: string;
  asset: string;
  asset_symbol: string;
  decimals: number;
  address: string;
  watch_id: string;
  derivation_index: number | null;
  amount: string;
  amount_raw: string;
  amount_received: string;
  amount_received_raw: string;
  tx_hashes: string[];
  confirmations: number;
  expires_at: string;
  created_at: string;
  updated_at: string;
  webhook_url: string | null;
  metadata: unknown;
  aml: AmlResult | null;
  reason: string | null;
  late: boolean;
  overpaid: boolean;
  lifecycle: string;
  /** The hosted checkout page for the customer (`{api_base}/pay/{payment_id}`); the payment id is its only credential. */
  checkout_url: string;
}

export interface CreatePayment {
  order_id: string;
  network_slug: string;
  amount: string;
  asset?: string;
  address?: string;
  expires_in?: number;
  webhook_url?: string;
  metadata?: Record<string, unknown>;
}

export interface PaymentSettings {
  /** Extended public keys per chain family: `evm` (xpub), `utxo` (zpub/ypub/xpub, v/u/tpub on test networks), `tron` (xpub of m/44'/195'/0'). */
  xpubs: { evm?: string; utxo?: string; tron?: string };
  aml_fail_at: 'medium' | 'high' | 'severe';
  underpaid_tolerance_bps: number;
  accept_late: boolean;
  /** The merchant's name on the checkout page; null: none. */
  display_name: string | null;
  /** Where the checkout page sends a paid customer, with `?order_id=` (https); null: nowhere. */
  redirect_url: string | null;
  derived: {
    evm?: { first_address: string; next_index: number };
    /** `network`: the network whose prefixes `first_address` is written in. */
    utxo?: { first_address: string; network: string; next_index: number };
    tron?: { first_address: string; next_index: number };
  };
}

/** A `payment_order` webhook body. */
export interface PaymentWebhook {
  id: string;
  product: 'payments';
  type: 'payment_order';
  event: PaymentEvent;
  status: PaymentEvent;
  payment_id: string;
  order_id: string;
  watch_id: string;
  network: string;
  address: string;
  amount: string;
  amount_raw: string;
  tx_hash: string | null;
  lifecycle: string;
  aml: AmlResult | null;
  reason: string | null;
  late: boolean;
  overpaid: boolean;
  sequence: number;
  created_at: string;
}

type Ok<T> = T & { ok: true };

export class PaymentsClient {
  readonly #api: ApiClient;
  constructor(api: ApiClient) {
    this.#api = api;
  }

  create(body: CreatePayment, signal?: AbortSignal): Promise<Ok<{ payment: Payment; created: boolean }>> {
    return this.#api.request('POST', '/v1/payments', { body, signal });
  }
  get(paymentId: string, signal?: AbortSignal): Promise<Ok<{ payment: Payment }>> {
    return this.#api.request('GET', `/v1/payments/${encodeURIComponent(paymentId)}`, { signal });
  }
  list(q: { order_id?: string; status?: string; network?: string; page?: number; per_page?: number } = {}): Promise<Ok<{ payments: Payment[]; page: number; per_page: number; total: number }>> {
    return this.#api.request('GET', '/v1/payments', { query: q });
  }
  cancel(paymentId: string): Promise<Ok<{ payment: Payment }>> {
    return this.#api.request('POST', `/v1/payments/${encodeURIComponent(paymentId)}/cancel`);
  }
  settings(): Promise<Ok<PaymentSettings>> {
    return this.#api.request('GET', '/v1/payments/settings');
  }
  putSettings(body: Partial<Omit<PaymentSettings, 'derived'>>): Promise<Ok<PaymentSettings>> {
    return this.#api.request('PUT', '/v1/payments/settings', { body });
  }
}

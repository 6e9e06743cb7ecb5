import type { ApiClient } from './api-client.js';
import type { CreatePayout, CreateRefund, Payout, PayoutLineEntry, PayoutLineInput, PayoutStatus, Refund, SubmitTransaction } from '../wire/payouts.js';

/**
 * Refunds of orders and payouts as clients see them (docs/payments.md "Refunds and payouts"):
 * the server's schemas in wire/ (types only). rpcctl prepares and checks; the merchant's own
 * wallet signs (a payment request's URI, or the PSBT) and `submitTransaction` records it.
 */

export type { CreatePayout, CreateRefund, Payout, PayoutLineEntry, PayoutLineInput, PayoutStatus, Refund, SubmitTransaction } from '../wire/payouts.js';

type Ok<T> = T & { ok: true };
const id = (s: string) => encodeURIComponent(s);

export class RefundsClient {
  readonly #api: ApiClient;
  constructor(api: ApiClient) {
    this.#api = api;
  }

  /** Without `address` the answer's `refund_link.url` is for the customer (shown this once). */
  create(paymentId: string, body: CreateRefund = {}, signal?: AbortSignal): Promise<Ok<{ refund: Refund }>> {
    return this.#api.request('POST', `/v1/payments/${id(paymentId)}/refunds`, { body, signal });
  }
  list(paymentId: string, signal?: AbortSignal): Promise<Ok<{ refunds: Refund[] }>> {
    return this.#api.request('GET', `/v1/payments/${id(paymentId)}/refunds`, { signal });
  }
}

export class PayoutsClient {
  readonly #api: ApiClient;
  constructor(api: ApiClient) {
    this.#api = api;
  }

  create(body: CreatePayout, signal?: AbortSignal): Promise<Ok<{ payout: Payout }>> {
    return this.#api.request('POST', '/v1/payouts', { body, signal });
  }
  /** One payout, or a refund by its `rf_` id, with its lines and payment requests. */
  get(payoutId: string, signal?: AbortSignal): Promise<Ok<{ payout: Payout }>> {
    return this.#api.request('GET', `/v1/payouts/${id(payoutId)}`, { signal });
  }
  list(q: { status?: PayoutStatus; page?: number; per_page?: number } = {}): Promise<Ok<{ payouts: Payout[]; page: number; per_page: number; total: number }>> {
    return this.#api.request('GET', '/v1/payouts', { query: q });
  }
  approve(payoutId: string): Promise<Ok<{ payout: Payout }>> {
    return this.#api.request('POST', `/v1/payouts/${id(payoutId)}/approve`);
  }
  cancel(payoutId: string): Promise<Ok<{ payout: Payout }>> {
    return this.#api.request('POST', `/v1/payouts/${id(payoutId)}/cancel`);
  }
  /** An unsigned BIP174 PSBT (base64) paying the lines awaiting payment; `fee_rate` in sat/vB. */
  psbt(payoutId: string, q: { fee_rate?: string } = {}): Promise<Ok<{ psbt: string; fee_raw: string | null }>> {
    return this.#api.request('GET', `/v1/payouts/${id(payoutId)}/psbt`, { query: q });
  }
  /** A signed transaction (hex, or a finalized PSBT in base64): checked against the lines, broadcast unless `broadcast: false`. */
  submitTransaction(payoutId: string, body: SubmitTransaction): Promise<Ok<{ payout: Payout; tx_hash: string }>> {
    return this.#api.request('POST', `/v1/payouts/${id(payoutId)}/transaction`, { body });
  }
}

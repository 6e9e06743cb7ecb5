import type { ApiClient } from './api-client.js';
import type { AmlResult, CreatePayment, Payment, PaymentSettings, PaymentSettingsInput, PaymentStatus } from '../wire/payments.js';

/**
 * Payment orders as clients see them: the server's schemas in wire/ (types only), so the server
 * presents exactly these (decisions.md, "Payment orders"). Settings are keyed by the families
 * that derive addresses (`evm`: xpub, `utxo`: zpub/ypub/xpub or v/u/tpub on test networks,
 * `tron`: xpub of m/44'/195'/0'; the server names them in openapi.json).
 */

export type { AmlResult, CreatePayment, Payment, PaymentSettings, PaymentSettingsInput, PaymentStatus } from '../wire/payments.js';
export type PaymentEvent = Exclude<PaymentStatus, 'pending'>;

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
  putSettings(body: PaymentSettingsInput): Promise<Ok<PaymentSettings>> {
    return this.#api.request('PUT', '/v1/payments/settings', { body });
  }
}

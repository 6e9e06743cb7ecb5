import type { Config } from '../config/index.js';
import type { Store } from '../store/index.js';
import { fromBaseUnits } from './amounts.js';
import { assetOfRow } from './assets.js';
import type { AmlResult } from './aml/types.js';
import type { OrderRow, PaymentStatus } from './orders.js';

/** The order as the API shows it; `publicUrl` is the API's base as customers reach it (AppContext.publicUrl). */
export function presentOrder(config: Config, store: Store, o: OrderRow, txHashes: string[], publicUrl: string) {
  const env = store.catalog.environment(o.network_environment_id);
  const asset = assetOfRow(config, env, o.asset, o.decimals);
  return {
    payment_id: o.payment_id, order_id: o.order_id, status: o.status as PaymentStatus, network: o.network,
    asset: o.asset, asset_symbol: asset.symbol, decimals: o.decimals, address: o.address, reference: o.reference, watch_id: o.watch_id,
    derivation_index: o.derivation_index,
    amount: fromBaseUnits(o.amount_raw, o.decimals), amount_raw: o.amount_raw,
    amount_received: fromBaseUnits(o.received_raw, o.decimals), amount_received_raw: o.received_raw,
    // A fiat price and the rate locked at creation (null for orders priced in the asset).
    price_amount: o.price_amount, price_currency: o.price_currency, rate: o.rate, rate_source: o.rate_source as 'static' | 'http' | null, rate_at: o.rate_at,
    tx_hashes: txHashes, confirmations: env?.confirmations ?? 1,
    expires_at: o.expires_at, created_at: o.created_at, updated_at: o.updated_at,
    webhook_url: o.webhook_url, metadata: o.metadata === null ? null : JSON.parse(o.metadata) as unknown,
    aml: o.aml === null ? null : JSON.parse(o.aml) as AmlResult, reason: o.reason, late: o.late === 1, overpaid: o.overpaid === 1,
    lifecycle: o.lifecycle,
    checkout_url: checkoutUrl(publicUrl, o.payment_id),
  };
}

/** The order's hosted checkout page: its payment id (96 random bits) is the only credential. */
export function checkoutUrl(publicUrl: string, paymentId: string): string {
  return `${publicUrl}/pay/${paymentId}`;
}

export type PaymentObject = ReturnType<typeof presentOrder>;


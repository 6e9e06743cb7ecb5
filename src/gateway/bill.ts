import { priceRpc, usageMethodName, type PricedNetwork } from '../pricing/credits.js';
import type { UsageMeter } from './meter.js';

/**
 * Meters one JSON-RPC call of an endpoint: its price on `network` times `units` (calls.ts counts
 * an eth_getLogs range or a batch-priced call as more than one). HTTP and WebSocket bill alike.
 * Returns the credits, for the request log.
 */
export function bill(meter: Pick<UsageMeter, 'record'>, ep: { id: number; accountId: number }, network: PricedNetwork, method: string, units: number): number {
  const credits = priceRpc(network, method) * units;
  meter.record(ep.id, ep.accountId, usageMethodName(network, method), credits);
  return credits;
}

import type { Network } from '../store/index.js';

/**
 * Credits of the Horizon-like REST family, from the contract's table. `{x}` matches one path
 * segment. Anything else costs the network's `credits.default`.
 */
const HORIZON_ROUTES: Array<[method: 'GET' | 'POST' | '*', template: string, credits: number]> = [
  ['*', '/', 5],
  ['GET', '/ledgers', 20],
  ['GET', '/ledgers/{sequence}', 20],
  ['GET', '/ledgers/{sequence}/transactions', 30],
  ['GET', '/ledgers/{sequence}/operations', 30],
  ['GET', '/ledgers/{sequence}/payments', 30],
  ['GET', '/accounts/{account_id}', 15],
  ['GET', '/accounts/{account_id}/balances', 15],
  ['GET', '/accounts/{account_id}/transactions', 30],
  ['GET', '/accounts/{account_id}/operations', 30],
  ['GET', '/accounts/{account_id}/payments', 30],
  ['GET', '/accounts/{account_id}/offers', 25],
  ['GET', '/accounts/{account_id}/trades', 25],
  ['GET', '/transactions/{hash}', 25],
  ['GET', '/transactions/{hash}/operations', 30],
  ['GET', '/operations/{id}', 20],
  ['GET', '/payments', 30],
  ['GET', '/offers/{offer_id}', 20],
  ['GET', '/order_book', 25],
  ['GET', '/trade_aggregations', 30],
  ['GET', '/paths/strict-send', 35],
  ['GET', '/paths/strict-receive', 35],
  ['GET', '/assets', 20],
  ['GET', '/fee_stats', 10],
  ['POST', '/transactions', 150],
];

interface CompiledRoute { method: string; segments: string[]; template: string; credits: number }
const compiled: CompiledRoute[] = HORIZON_ROUTES.map(([method, template, credits]) => ({
  method, template, credits, segments: template === '/' ? [] : template.slice(1).split('/'),
}));

export interface RestPrice {
  /** What usage shows as the method: `GET /ledgers/{sequence}`, or `GET (other)`. */
  method: string;
  credits: number;
}

/** Prices a REST call by its route; `GET /` and `POST /` cost 5 as the contract says. */
export function priceRest(network: Network, method: string, path: string): RestPrice {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const segments = trimmed === '/' || trimmed === '' ? [] : trimmed.slice(1).split('/');
  for (const r of compiled) {
    if (r.segments.length !== segments.length) continue;
    if (r.method !== '*' ? r.method !== method : method !== 'GET' && method !== 'POST') continue;
    let ok = true;
    for (let i = 0; i < segments.length; i++) {
      const s = r.segments[i]!;
      if (s.charCodeAt(0) !== 123 /* { */ && s !== segments[i]) { ok = false; break; }
    }
    if (ok) {
      const label = `${method} ${r.template}`;
      return { method: label, credits: network.credits.methods[label] ?? r.credits };
    }
  }
  return { method: `${method} (other)`, credits: network.credits.default };
}

/** Credits of one JSON-RPC call: the network's table, else its default. */
export function priceRpc(network: Network, method: string): number {
  return network.credits.methods[method] ?? network.credits.default;
}

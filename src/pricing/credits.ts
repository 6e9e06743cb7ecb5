import { traitsOf } from '../chains/traits.js';
import type { RouteCredits } from '../chains/family.js';

/**
 * The fields of a catalog network (store/catalog.ts `Network`) that prices read. pricing/ sits
 * below store/ (the gateway and the webhooks both price calls), so it names them rather than
 * import the store's type; a `Network` is one.
 */
export interface PricedNetwork {
  family: string;
  credits: { default: number; methods: Record<string, number> };
}

interface CompiledRoute { method: string; segments: string[]; template: string; credits: number }
const compile = (routes: RouteCredits): CompiledRoute[] => routes.map(([method, template, credits]) => ({
  method, template, credits, segments: template === '/' ? [] : template.slice(1).split('/'),
}));
const compiledRoutes = new Map<string, CompiledRoute[]>();

/** A REST family's route table, compiled once. */
function routesOf(family: string): CompiledRoute[] {
  let routes = compiledRoutes.get(family);
  if (!routes) compiledRoutes.set(family, (routes = compile(traitsOf(family).credits.routes ?? [])));
  return routes;
}

export interface RestPrice {
  /** What usage shows as the method: `GET /ledgers/{sequence}`, or `GET (other)`. */
  method: string;
  credits: number;
}

/** Prices a REST call by its route (the network family's table); `GET /` and `POST /` cost 5 as the contract says. */
export function priceRest(network: PricedNetwork, method: string, path: string): RestPrice {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const segments = trimmed === '/' || trimmed === '' ? [] : trimmed.slice(1).split('/');
  for (const r of routesOf(network.family)) {
    if (r.segments.length !== segments.length) continue;
    if (r.method !== '*' ? r.method !== method : method !== 'GET' && method !== 'POST') continue;
    let ok = true;
    for (let i = 0; i < segments.length; i++) {
      const s = r.segments[i]!;
      if (s.charCodeAt(0) !== 123 /* { */ && s !== segments[i]) { ok = false; break; }
    }
    if (ok) {
      const label = `${method} ${r.template}`;
      return { method: label, credits: Object.hasOwn(network.credits.methods, label) ? network.credits.methods[label]! : r.credits };
    }
  }
  return { method: `${method} (other)`, credits: network.credits.default };
}

/** Credits of one JSON-RPC call: the network's table, else its default. */
export function priceRpc(network: PricedNetwork, method: string): number {
  // Own keys only: `constructor` or `__proto__` must not price a call with Object.prototype's.
  return Object.hasOwn(network.credits.methods, method) ? network.credits.methods[method]! : network.credits.default;
}

export const OTHER_METHOD = 'other';

/**
 * The name usage is recorded under: the method itself when it is one of the family's standard
 * methods (`gateway.methods.isStandard`) or the network prices it, else `other`, so clients cannot
 * grow the usage tables with made-up method names.
 */
export function usageMethodName(network: PricedNetwork, method: string): string {
  return Object.hasOwn(network.credits.methods, method) || traitsOf(network.family).gateway.methods.isStandard(method) ? method : OTHER_METHOD;
}

/** What a webhook for a watched address's hit costs. */
export const WALLET_HIT_CREDITS = 30;

/** About how many blocks a day a network makes, and what block webhooks for them cost: an estimate. */
export function blockWebhooksPerDay(network: PricedNetwork & { slug: string }): { blocks: number; credits: number } {
  const blocks = Math.round(86_400 / traitsOf(network.family).credits.blockSeconds(network.slug));
  return { blocks, credits: blocks * blockCredits(network) };
}

/** A block webhook costs what fetching the block costs on that network. */
export function blockCredits(network: PricedNetwork): number {
  const fetch = traitsOf(network.family).credits.block;
  return fetch.path === undefined ? priceRpc(network, fetch.method) : priceRest(network, fetch.method, fetch.path).credits;
}

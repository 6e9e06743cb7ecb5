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

/**
 * Standard JSON-RPC methods of EVM nodes. Usage is broken down by these and by the network's
 * own priced methods; any other name a client sends is counted as `other`, so clients cannot
 * grow the usage tables with made-up method names.
 */
const STANDARD_METHODS = new Set([
  'web3_clientVersion', 'web3_sha3', 'net_version', 'net_listening', 'net_peerCount',
  'eth_protocolVersion', 'eth_syncing', 'eth_coinbase', 'eth_chainId', 'eth_mining', 'eth_hashrate', 'eth_gasPrice',
  'eth_maxPriorityFeePerGas', 'eth_blobBaseFee', 'eth_feeHistory', 'eth_accounts', 'eth_blockNumber', 'eth_getBalance',
  'eth_getStorageAt', 'eth_getTransactionCount', 'eth_getBlockTransactionCountByHash', 'eth_getBlockTransactionCountByNumber',
  'eth_getUncleCountByBlockHash', 'eth_getUncleCountByBlockNumber', 'eth_getCode', 'eth_sign', 'eth_signTransaction',
  'eth_sendTransaction', 'eth_sendRawTransaction', 'eth_call', 'eth_estimateGas', 'eth_createAccessList',
  'eth_getBlockByHash', 'eth_getBlockByNumber', 'eth_getBlockReceipts', 'eth_getTransactionByHash',
  'eth_getTransactionByBlockHashAndIndex', 'eth_getTransactionByBlockNumberAndIndex', 'eth_getTransactionReceipt',
  'eth_getUncleByBlockHashAndIndex', 'eth_getUncleByBlockNumberAndIndex', 'eth_newFilter', 'eth_newBlockFilter',
  'eth_newPendingTransactionFilter', 'eth_uninstallFilter', 'eth_getFilterChanges', 'eth_getFilterLogs', 'eth_getLogs',
  'eth_getProof', 'eth_subscribe', 'eth_unsubscribe', 'eth_simulateV1',
  'debug_traceTransaction', 'debug_traceCall', 'debug_traceBlockByNumber', 'debug_traceBlockByHash',
  'trace_block', 'trace_transaction', 'trace_call', 'trace_filter', 'trace_replayTransaction', 'trace_replayBlockTransactions',
  'txpool_status', 'txpool_content', 'txpool_inspect',
]);

export const OTHER_METHOD = 'other';

/** The name usage is recorded under: the method itself when known, else `other`. */
export function usageMethodName(network: PricedNetwork, method: string): string {
  return STANDARD_METHODS.has(method) || Object.hasOwn(network.credits.methods, method) ? method : OTHER_METHOD;
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

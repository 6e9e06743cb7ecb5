/**
 * The fields of a catalog network (store/catalog.ts `Network`) that prices read. pricing/ sits
 * below store/ (the gateway and the webhooks both price calls), so it names them rather than
 * import the store's type; a `Network` is one.
 */
export interface PricedNetwork {
  family: string;
  credits: { default: number; methods: Record<string, number> };
}

/**
 * Credits of the REST-style families (Horizon, the Tron HTTP API), per route: Horizon's from the contract's table. `{x}` matches one path
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

/**
 * The Tron HTTP API (java-tron, TronGrid). Nodes take GET and POST alike for most routes;
 * `/walletsolidity/...` are the same reads on solidified blocks.
 */
const TRON_ROUTES: Array<[method: 'GET' | 'POST' | '*', template: string, credits: number]> = [
  ['*', '/', 5],
  ...(['wallet', 'walletsolidity'] as const).flatMap((api): Array<['*', string, number]> => [
    ['*', `/${api}/getnowblock`, 10],
    ['*', `/${api}/getblockbynum`, 25],
    ['*', `/${api}/getblockbyid`, 25],
    ['*', `/${api}/getblock`, 25],
    ['*', `/${api}/getblockbylimitnext`, 75],
    ['*', `/${api}/getblockbylatestnum`, 75],
    ['*', `/${api}/gettransactionbyid`, 15],
    ['*', `/${api}/gettransactioninfobyid`, 15],
    ['*', `/${api}/gettransactioninfobyblocknum`, 75],
    ['*', `/${api}/getaccount`, 15],
    ['*', `/${api}/getassetissuebyid`, 10],
    ['*', `/${api}/triggerconstantcontract`, 26],
    ['*', `/${api}/estimateenergy`, 30],
  ]),
  ['*', '/wallet/getaccountresource', 15],
  ['*', '/wallet/getaccountnet', 15],
  ['*', '/wallet/getcontract', 15],
  ['*', '/wallet/getcontractinfo', 15],
  ['*', '/wallet/getchainparameters', 5],
  ['*', '/wallet/getnodeinfo', 5],
  ['*', '/wallet/validateaddress', 5],
  ['*', '/wallet/createtransaction', 20],
  ['*', '/wallet/transferasset', 20],
  ['*', '/wallet/triggersmartcontract', 26],
  ['POST', '/wallet/broadcasttransaction', 100],
  ['POST', '/wallet/broadcasthex', 100],
  ['GET', '/v1/accounts/{address}', 15],
  ['GET', '/v1/accounts/{address}/transactions', 30],
  ['GET', '/v1/accounts/{address}/transactions/trc20', 30],
  ['GET', '/v1/transactions/{hash}/events', 20],
  ['GET', '/v1/blocks/{number}/events', 50],
  ['GET', '/v1/contracts/{address}/events', 50],
  ['POST', '/jsonrpc', 20],
];

interface CompiledRoute { method: string; segments: string[]; template: string; credits: number }
const compile = (routes: typeof HORIZON_ROUTES): CompiledRoute[] => routes.map(([method, template, credits]) => ({
  method, template, credits, segments: template === '/' ? [] : template.slice(1).split('/'),
}));
const compiledHorizon = compile(HORIZON_ROUTES);
const compiledTron = compile(TRON_ROUTES);

export interface RestPrice {
  /** What usage shows as the method: `GET /ledgers/{sequence}`, or `GET (other)`. */
  method: string;
  credits: number;
}

/** Prices a REST call by its route; `GET /` and `POST /` cost 5 as the contract says. */
export function priceRest(network: PricedNetwork, method: string, path: string): RestPrice {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const segments = trimmed === '/' || trimmed === '' ? [] : trimmed.slice(1).split('/');
  for (const r of network.family === 'tron' ? compiledTron : compiledHorizon) {
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

/** A block webhook costs what fetching the block costs on that network. */
export function blockCredits(network: PricedNetwork): number {
  if (network.family === 'stellar') return network.credits.methods['GET /ledgers/{sequence}'] ?? 20;
  if (network.family === 'tron') return priceRest(network, 'POST', '/wallet/getblockbynum').credits;
  if (network.family === 'utxo') return network.credits.methods.getblock ?? network.credits.default;
  return network.credits.methods.eth_getBlockByNumber ?? network.credits.default;
}

// What the gateway knows of EVM JSON-RPC: which calls read the head, which may be sent twice,
// which answers are final, how each node's head is probed, and eth_subscribe.

import { SubscribeParamsError, type CacheDecision, type CachePlan, type CallClass, type ChainView, type HeadProbe, type MethodClasses, type ProbeReading, type RangeQuery, type WsProtocol } from '../gateway.js';

const HEX_QUANTITY = /^0x[0-9a-f]{1,14}$/i;
/** A canonical block number (no leading zeros): the cache keys by the params as written. */
const HEX_NUMBER = /^0x(0|[1-9a-f][0-9a-f]{0,13})$/i;

/** Reads whose null may only mean "this node has not seen it yet". */
const NULL_MAY_LAG = new Set([
  'eth_getTransactionByHash', 'eth_getTransactionReceipt', 'eth_getBlockByHash', 'eth_getBlockByNumber', 'eth_getBlockReceipts',
]);
const BY_HASH = new Set(['eth_getTransactionByHash', 'eth_getTransactionReceipt', 'eth_getBlockByHash', 'eth_getBlockTransactionCountByHash']);
/** Methods that change something or hand out node-local state: never sent twice at once. */
const NOT_IDEMPOTENT = new Set([
  'eth_sendRawTransaction', 'eth_sendTransaction', 'eth_sign', 'eth_signTransaction', 'eth_newFilter', 'eth_newBlockFilter',
  'eth_newPendingTransactionFilter', 'eth_uninstallFilter', 'eth_getFilterChanges', 'eth_subscribe', 'eth_unsubscribe',
]);

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

const CLASSES = {
  head: { needsHead: true, idempotent: true, retry: true },
  headOnce: { needsHead: true, idempotent: false, retry: true },
  anyHead: { needsHead: false, idempotent: true, retry: true },
  anyHeadOnce: { needsHead: false, idempotent: false, retry: true },
} as const satisfies Record<string, CallClass>;

/** By-hash reads and reads at a given block number may go to a lagging node. */
function classOf(method: string, params: unknown): CallClass {
  const idempotent = !NOT_IDEMPOTENT.has(method);
  if (BY_HASH.has(method)) return idempotent ? CLASSES.anyHead : CLASSES.anyHeadOnce;
  if (Array.isArray(params) && params.length > 0) {
    const last = params[params.length - 1];
    const first = params[0];
    if ((typeof last === 'string' && HEX_QUANTITY.test(last)) || (typeof first === 'string' && HEX_QUANTITY.test(first) && method.includes('ByNumber'))) {
      return idempotent ? CLASSES.anyHead : CLASSES.anyHeadOnce;
    }
  }
  return idempotent ? CLASSES.head : CLASSES.headOnce;
}

interface LogsFilter { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown; [k: string]: unknown }

function bound(v: unknown, view: ChainView | undefined): number | undefined {
  if (v === undefined || v === null || v === 'latest' || v === 'pending' || v === 'safe') return view?.head;
  if (v === 'finalized') return view?.finalized;
  if (v === 'earliest') return 0;
  return typeof v === 'string' && HEX_QUANTITY.test(v) ? Number.parseInt(v, 16) : undefined;
}

const hex = (n: number) => `0x${n.toString(16)}`;

/** `eth_getLogs`: guarded by range, priced per block unit, split when the network says so. */
export const evmLogsQuery: RangeQuery = {
  method: 'eth_getLogs',
  filterMethod: 'eth_newFilter',
  label: 'eth_getLogs',
  range(params, view) {
    const f = Array.isArray(params) ? params[0] as LogsFilter | undefined : undefined;
    if (!f || typeof f !== 'object') return undefined;
    if (f.blockHash !== undefined) return undefined;
    const from = bound(f.fromBlock, view);
    const to = bound(f.toBlock, view);
    return from === undefined || to === undefined ? undefined : { from, to };
  },
  withRange: (params, from, to) => [{ ...(params as LogsFilter[])[0], fromBlock: hex(from), toBlock: hex(to) }],
};

export const evmMethods: MethodClasses = {
  classOf,
  nullMayLag: (method) => NULL_MAY_LAG.has(method),
  isStandard: (method) => STANDARD_METHODS.has(method),
  rangeQuery: evmLogsQuery,
};

const BY_HASH_BLOCK = new Set(['eth_getBlockByHash']);
const BY_HASH_TX = new Set(['eth_getTransactionByHash', 'eth_getTransactionReceipt']);
const CONSTANT = new Set(['eth_chainId', 'net_version']);
/** State reads whose last parameter is a block: final when it is a number at or below the finalized height. */
const STATE_AT_BLOCK = new Set(['eth_getCode', 'eth_call', 'eth_getBalance', 'eth_getStorageAt', 'eth_getTransactionCount']);

function blockNumberParam(v: unknown): number | undefined {
  return typeof v === 'string' && HEX_NUMBER.test(v) ? Number.parseInt(v, 16) : undefined;
}

const CONSTANT_DECISION: CacheDecision = { height: undefined, resultBlock: undefined };
const BLOCK_BY_HASH: CacheDecision = { height: undefined, resultBlock: 'block' };
const TX_BY_HASH: CacheDecision = { height: undefined, resultBlock: 'tx' };

/**
 * What a by-hash lookup found in a final block, blocks and state at or below the finalized
 * height, logs of a final range, the chain id. Never `latest`, `pending` or `safe`.
 */
export const evmCachePlan: CachePlan = {
  decide(method, p, view) {
    if (CONSTANT.has(method)) return CONSTANT_DECISION;
    // Without a finalized height nothing else is known to be final.
    if (!view) return undefined;
    if (BY_HASH_BLOCK.has(method) && typeof p[0] === 'string') return BLOCK_BY_HASH;
    if (BY_HASH_TX.has(method) && typeof p[0] === 'string') return TX_BY_HASH;
    if (method === 'eth_getBlockByNumber' || method === 'eth_getBlockReceipts') {
      const n = blockNumberParam(p[0]);
      return n !== undefined && n <= view.finalized ? { height: n, resultBlock: method === 'eth_getBlockByNumber' ? 'block' : undefined } : undefined;
    }
    if (STATE_AT_BLOCK.has(method)) {
      const n = blockNumberParam(p[p.length - 1]);
      return p.length >= 2 && n !== undefined && n <= view.finalized ? { height: n, resultBlock: undefined } : undefined;
    }
    if (method === 'eth_getLogs') {
      const f = p[0] as LogsFilter | undefined;
      if (!f || typeof f !== 'object' || f.blockHash !== undefined) return undefined;
      const from = blockNumberParam(f.fromBlock);
      const to = blockNumberParam(f.toBlock);
      return from !== undefined && to !== undefined && to <= view.finalized ? { height: to, resultBlock: undefined } : undefined;
    }
    return undefined;
  },
  finalOf(decision, result, view) {
    if (result === null || result === undefined) return undefined;
    if (decision.resultBlock === undefined) return { height: decision.height, hash: undefined };
    if (typeof result !== 'object' || !view) return undefined;
    const r = result as Record<string, unknown>;
    const n = blockNumberParam(decision.resultBlock === 'block' ? r.number : r.blockNumber);
    const hash = decision.resultBlock === 'block' ? r.hash : r.blockHash;
    // A pending transaction (no block yet) or one in a block that is not final yet.
    if (n === undefined || n > view.finalized) return undefined;
    return { height: n, hash: typeof hash === 'string' ? hash.toLowerCase() : undefined };
  },
};

function hexNumber(v: unknown): number | undefined {
  return typeof v === 'string' && HEX_QUANTITY.test(v) ? Number.parseInt(v, 16) : undefined;
}

type RpcAnswer = { id?: unknown; result?: unknown };

function answersOf(status: number, text: string): RpcAnswer[] {
  if (status >= 400) throw new Error(`upstream answered ${status}`);
  const v = JSON.parse(text) as unknown;
  if (!Array.isArray(v)) throw new Error('upstream did not answer the batch with an array');
  return v as RpcAnswer[];
}

const jsonPost = (body: string) => ({ method: 'POST', path: '', body, contentType: 'application/json' }) as const;

/** Version, head and `finalized` in one batch per upstream; the head alone where batches are refused. */
export const evmProbe: HeadProbe = {
  request: jsonPost(JSON.stringify([
    { jsonrpc: '2.0', id: 1, method: 'web3_clientVersion', params: [] },
    { jsonrpc: '2.0', id: 2, method: 'eth_blockNumber', params: [] },
    { jsonrpc: '2.0', id: 3, method: 'eth_getBlockByNumber', params: ['finalized', false] },
  ])),
  read(status, text): ProbeReading {
    const list = answersOf(status, text);
    const version = list.find((a) => a.id === 1)?.result;
    const fin = list.find((a) => a.id === 3)?.result as { number?: unknown } | null | undefined;
    return { version: typeof version === 'string' ? version : null, head: hexNumber(list.find((a) => a.id === 2)?.result), finalized: hexNumber(fin?.number) };
  },
  fallback: {
    request: jsonPost('{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber","params":[]}'),
    read(status, text) {
      if (status >= 400) throw new Error(`upstream answered ${status}`);
      return { version: null, head: hexNumber((JSON.parse(text) as RpcAnswer).result) };
    },
  },
  blockHash: {
    request: (height) => jsonPost(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: [hex(height), false] })),
    read: (text) => {
      const hash = (JSON.parse(text) as { result?: { hash?: unknown } | null }).result?.hash;
      return typeof hash === 'string' ? hash.toLowerCase() : undefined;
    },
  },
};

const SUBSCRIBE = { subscribe: 'eth_subscribe', unsubscribe: 'eth_unsubscribe', notification: 'eth_subscription' } as const;
const FEED_TYPES = ['newHeads', 'logs', 'newPendingTransactions'] as const;

/**
 * Checks and normalises `eth_subscribe` params into a feed: the same filter written two ways
 * (address case, one address vs a one-element list) shares one upstream subscription.
 */
export function normaliseEvmSubscribe(params: unknown): { type: string; params: unknown[] } {
  const bad = (message: string) => new SubscribeParamsError(-32602, message);
  if (!Array.isArray(params) || typeof params[0] !== 'string') throw bad('eth_subscribe needs a subscription type as its first parameter');
  const type = params[0];
  if (!(FEED_TYPES as readonly string[]).includes(type)) {
    throw bad(`unsupported subscription type "${type.slice(0, 40)}" (supported: ${FEED_TYPES.join(', ')})`);
  }
  if (type !== 'logs') {
    if (params.length > 1 && !(type === 'newPendingTransactions' && params.length === 2 && typeof params[1] === 'boolean')) {
      throw bad(`${type} takes no filter`);
    }
    return { type, params: params.slice(0, 2) };
  }
  const filter = (params[1] ?? {}) as Record<string, unknown>;
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) throw bad('logs filter must be an object');
  const out: { address?: string | string[]; topics?: unknown[] } = {};
  for (const k of Object.keys(filter)) {
    if (k !== 'address' && k !== 'topics') throw bad(`logs filter: unsupported key "${k.slice(0, 40)}" (address, topics)`);
  }
  if (filter.address !== undefined && filter.address !== null) {
    const list = Array.isArray(filter.address) ? filter.address : [filter.address];
    if (!list.every((a) => typeof a === 'string' && /^0x[0-9a-fA-F]{40}$/.test(a))) throw bad('logs filter: address must be a 20-byte hex address or a list of them');
    const lower = [...new Set((list as string[]).map((a) => a.toLowerCase()))].sort();
    out.address = lower.length === 1 ? lower[0]! : lower;
  }
  if (filter.topics !== undefined && filter.topics !== null) {
    if (!Array.isArray(filter.topics) || filter.topics.length > 4) throw bad('logs filter: topics must be a list of at most 4 entries');
    const topic = (t: unknown) => typeof t === 'string' && /^0x[0-9a-fA-F]{64}$/.test(t);
    out.topics = filter.topics.map((t) => {
      if (t === null) return null;
      if (topic(t)) return (t as string).toLowerCase();
      if (Array.isArray(t) && t.every(topic)) return (t as string[]).map((x) => x.toLowerCase());
      throw bad('logs filter: each topic must be null, a 32-byte hex value or a list of them');
    });
    while (out.topics.length > 0 && out.topics[out.topics.length - 1] === null) out.topics.pop();
    if (out.topics.length === 0) delete out.topics;
  }
  return { type: 'logs', params: ['logs', out] };
}

function randomHex(): string {
  return crypto.getRandomValues(Buffer.alloc(16)).toString('hex');
}

/** `eth_subscribe` on the endpoint's URL; newHeads and logs polled over HTTP where no WebSocket node is left. */
export const evmWebSocket: WsProtocol = {
  kinds: [SUBSCRIBE],
  normalise: (_kind, params) => normaliseEvmSubscribe(params),
  newId: () => `0x${randomHex()}`,
  polling: {
    types: ['newHeads', 'logs'],
    head: 'eth_blockNumber', blockByNumber: 'eth_getBlockByNumber', blockByHash: 'eth_getBlockByHash', logs: 'eth_getLogs',
  },
};

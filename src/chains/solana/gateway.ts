// What the gateway knows of Solana's JSON-RPC and PubSub: slots instead of blocks, commitment
// levels instead of confirmations, its own node errors, and a WebSocket protocol of a
// subscribe/unsubscribe pair per kind of feed.

import { SubscribeParamsError, type CacheDecision, type CachePlan, type CallClass, type HeadProbe, type MethodClasses, type NodeErrorRule, type ProbeReading, type SubscriptionKind, type WsProtocol } from '../gateway.js';

const HEAD: CallClass = { needsHead: true, idempotent: true, retry: true };
/** A read of one slot or signature: any node that has it answers the same (a lagging one's null is asked again further ahead). */
const ANY_HEAD: CallClass = { needsHead: false, idempotent: true, retry: true };
/**
 * A transaction sent (or an airdrop asked): one try on the best upstream. Sent twice it would
 * only be the same signature, but a client that retries knows its blockhash and when to stop.
 */
const SEND: CallClass = { needsHead: true, idempotent: false, retry: false };

const SENDS = new Set(['sendTransaction', 'requestAirdrop']);
const BY_SLOT_OR_SIGNATURE = new Set(['getTransaction', 'getBlock', 'getBlockTime', 'getBlockCommitment']);
/** A null here may only mean "this node has not seen it yet". */
const NULL_MAY_LAG = new Set(['getTransaction']);

/** Methods of Agave's JSON-RPC that usage names as they are (the credit table names the priced ones). */
const STANDARD_METHODS = new Set([
  'getAccountInfo', 'getBalance', 'getBlock', 'getBlockCommitment', 'getBlockHeight', 'getBlockProduction', 'getBlockTime',
  'getBlocks', 'getBlocksWithLimit', 'getClusterNodes', 'getEpochInfo', 'getEpochSchedule', 'getFeeForMessage',
  'getFirstAvailableBlock', 'getGenesisHash', 'getHealth', 'getHighestSnapshotSlot', 'getIdentity', 'getInflationGovernor',
  'getInflationRate', 'getInflationReward', 'getLargestAccounts', 'getLatestBlockhash', 'getLeaderSchedule',
  'getMaxRetransmitSlot', 'getMaxShredInsertSlot', 'getMinimumBalanceForRentExemption', 'getMultipleAccounts',
  'getProgramAccounts', 'getRecentPerformanceSamples', 'getRecentPrioritizationFees', 'getSignatureStatuses',
  'getSignaturesForAddress', 'getSlot', 'getSlotLeader', 'getSlotLeaders', 'getStakeMinimumDelegation', 'getSupply',
  'getTokenAccountBalance', 'getTokenAccountsByDelegate', 'getTokenAccountsByOwner', 'getTokenLargestAccounts',
  'getTokenSupply', 'getTransaction', 'getTransactionCount', 'getVersion', 'getVoteAccounts', 'isBlockhashValid',
  'minimumLedgerSlot', 'requestAirdrop', 'sendTransaction', 'simulateTransaction',
  'accountSubscribe', 'accountUnsubscribe', 'signatureSubscribe', 'signatureUnsubscribe', 'slotSubscribe', 'slotUnsubscribe',
  'logsSubscribe', 'logsUnsubscribe', 'programSubscribe', 'programUnsubscribe',
  'accountNotification', 'signatureNotification', 'slotNotification', 'logsNotification', 'programNotification',
]);

export const solanaMethods: MethodClasses = {
  classOf: (method) => (SENDS.has(method) ? SEND : BY_SLOT_OR_SIGNATURE.has(method) ? ANY_HEAD : HEAD),
  nullMayLag: (method) => NULL_MAY_LAG.has(method),
  isStandard: (method) => STANDARD_METHODS.has(method),
  rangeQuery: undefined,
};

/** The commitment a call's config object asks for; a node's default is `finalized`. */
function commitmentOf(config: unknown): string {
  const c = typeof config === 'object' && config !== null ? (config as { commitment?: unknown }).commitment : undefined;
  return typeof c === 'string' ? c : 'finalized';
}

const CONSTANT: CacheDecision = { height: undefined, resultBlock: undefined };
const TX: CacheDecision = { height: undefined, resultBlock: 'tx' };

/**
 * Conservative: only what a finalized slot holds. `getBlock` of a slot at or below the finalized
 * slot, and `getTransaction` whose answer says its slot is, both asked at `finalized` (the
 * default); the genesis hash. Nothing at `confirmed` or `processed` (a confirmed slot may still
 * be dropped), no account state (it changes every slot), no errors (-32007 skipped is final, but
 * -32004 "not available" is not).
 */
export const solanaCachePlan: CachePlan = {
  decide(method, p, view) {
    if (method === 'getGenesisHash') return CONSTANT;
    if (!view) return undefined;
    if (method === 'getBlock') {
      const slot = p[0];
      if (typeof slot !== 'number' || !Number.isSafeInteger(slot) || slot < 0 || slot > view.finalized) return undefined;
      return commitmentOf(p[1]) === 'finalized' ? { height: slot, resultBlock: 'block' } : undefined;
    }
    if (method === 'getTransaction' && typeof p[0] === 'string') return commitmentOf(p[1]) === 'finalized' ? TX : undefined;
    return undefined;
  },
  finalOf(decision, result, view) {
    if (result === null || result === undefined) return undefined;
    if (decision.resultBlock === undefined) return { height: decision.height, hash: undefined };
    if (typeof result !== 'object' || !view) return undefined;
    const r = result as { slot?: unknown; blockhash?: unknown };
    if (decision.resultBlock === 'block') {
      return typeof r.blockhash === 'string' ? { height: decision.height, hash: r.blockhash } : undefined;
    }
    return typeof r.slot === 'number' && r.slot <= view.finalized ? { height: r.slot, hash: undefined } : undefined;
  },
};

type RpcAnswer = { id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown } };

const jsonPost = (body: string) => ({ method: 'POST', path: '', body, contentType: 'application/json' }) as const;

/**
 * Per upstream: `getHealth` (-32005 while the node is behind its cluster), `getVersion`, and
 * `getSlot` at `confirmed` (its head: the commitment the scanners follow, the same on every
 * upstream) and at `finalized` (what the cache may keep).
 */
export const solanaProbe: HeadProbe = {
  request: jsonPost(JSON.stringify([
    { jsonrpc: '2.0', id: 1, method: 'getHealth' },
    { jsonrpc: '2.0', id: 2, method: 'getVersion' },
    { jsonrpc: '2.0', id: 3, method: 'getSlot', params: [{ commitment: 'confirmed' }] },
    { jsonrpc: '2.0', id: 4, method: 'getSlot', params: [{ commitment: 'finalized' }] },
  ])),
  read(status, text): ProbeReading {
    if (status >= 400) throw new Error(`upstream answered ${status}`);
    const answers = JSON.parse(text) as RpcAnswer[];
    if (!Array.isArray(answers)) throw new Error('upstream did not answer the batch with an array');
    const at = (id: number) => answers.find((a) => a.id === id);
    const health = at(1);
    const version = at(2)?.result as { 'solana-core'?: unknown } | undefined;
    const slot = at(3)?.result;
    const finalized = at(4)?.result;
    return {
      version: typeof version?.['solana-core'] === 'string' ? version['solana-core'] : null,
      head: typeof slot === 'number' ? slot : undefined,
      finalized: typeof finalized === 'number' ? finalized : undefined,
      unhealthy: health?.result === 'ok' ? undefined : String(health?.error?.message ?? 'getHealth did not answer ok').slice(0, 200),
    };
  },
  fallback: undefined,
  blockHash: {
    request: (slot) => jsonPost(JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'getBlock',
      params: [slot, { commitment: 'finalized', transactionDetails: 'none', rewards: false, maxSupportedTransactionVersion: 0 }],
    })),
    read: (text) => {
      const hash = (JSON.parse(text) as { result?: { blockhash?: unknown } | null }).result?.blockhash;
      return typeof hash === 'string' ? hash : undefined;
    },
  },
};

/**
 * Solana's own node errors. -32005 (node unhealthy: behind its cluster) and -32016 (minimum
 * context slot not reached: this node is behind) are the node's: tried elsewhere. A slot that
 * was skipped (-32007), is not available (-32004) or is gone from long-term storage (-32009),
 * a failed preflight (-32002) and a bad signature (-32003) are the chain's or the caller's truth:
 * relayed as answered, never failed over.
 */
export const SOLANA_ERROR_RULES: readonly NodeErrorRule[] = [
  { code: -32005, class: 'upstream' },
  { code: -32016, class: 'upstream' },
  { code: -32002, class: 'caller' },
  { code: -32003, class: 'caller' },
  { code: -32004, class: 'caller' },
  { code: -32007, class: 'caller' },
  { code: -32009, class: 'caller' },
];

const kind = (name: string): SubscriptionKind => ({ subscribe: `${name}Subscribe`, unsubscribe: `${name}Unsubscribe`, notification: `${name}Notification` });
/** The kinds of feed and what their first parameter must be. */
const FEEDS: Array<[name: string, first: 'address' | 'signature' | 'filter' | 'none']> = [
  ['account', 'address'], ['signature', 'signature'], ['slot', 'none'], ['logs', 'filter'], ['program', 'address'],
];
const KINDS = FEEDS.map(([name]) => kind(name));
const FIRST = new Map(FEEDS.map(([name, first]) => [`${name}Subscribe`, first]));

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;

function normalise(k: SubscriptionKind, params: unknown): { type: string; params: unknown[] } {
  const type = k.subscribe.slice(0, -'Subscribe'.length);
  const p = params === undefined ? [] : params;
  if (!Array.isArray(p)) throw new SubscribeParamsError(-32602, `${k.subscribe} params must be a list`);
  const first = FIRST.get(k.subscribe);
  const bad = (what: string) => new SubscribeParamsError(-32602, `${k.subscribe}: ${what}`);
  if (first === 'none') {
    if (p.length > 0) throw bad('takes no parameters');
    return { type, params: [] };
  }
  const [target, config, ...rest] = p as unknown[];
  if (rest.length > 0) throw bad('takes at most two parameters');
  if (config !== undefined && (typeof config !== 'object' || config === null || Array.isArray(config))) throw bad('the second parameter must be a config object');
  if (first === 'address' && !(typeof target === 'string' && BASE58.test(target) && target.length >= 32 && target.length <= 44)) throw bad('the first parameter must be a base58 address');
  if (first === 'signature' && !(typeof target === 'string' && BASE58.test(target) && target.length >= 64 && target.length <= 88)) throw bad('the first parameter must be a base58 transaction signature');
  if (first === 'filter' && !(target === 'all' || target === 'allWithVotes' || (typeof target === 'object' && target !== null && !Array.isArray(target)))) {
    throw bad('the first parameter must be "all", "allWithVotes" or { mentions: [address] }');
  }
  return { type, params: config === undefined ? [target] : [target, config] };
}

let lastId = 0;

/** Solana PubSub on the endpoint's URL: a subscribe/unsubscribe pair per feed, numeric ids, nothing polled. */
export const solanaWebSocket: WsProtocol = {
  kinds: KINDS,
  normalise,
  newId: () => ++lastId,
  polling: undefined,
};

import type { Environment } from '../store/index.js';
import { finalHeightOf, planCache, type CachePlan, type ChainView, type ResponseCache } from './cache.js';
import { chunks, logsUnits, rangeTooLarge, resultTooLarge, type LogsPolicy } from './logs.js';
import { parseJson, type ParsedRpc, type RpcCall } from './jsonrpc.js';
import { RPC_ERRORS, rpcError } from './errors.js';
import { UpstreamError, type RouteHints, type Upstream, type UpstreamDirectory, type UpstreamSet } from './upstreams/index.js';
import { answerKey, type IntegrityChecks, type IntegrityPolicy } from './integrity.js';
import { traitsOf } from '../chains/traits.js';
import type { CallClass, MethodClasses, RangeQuery } from '../chains/gateway.js';
import { networkLabels } from './metrics.js';
import type { CallTrace } from './trace.js';

/** An answer the gateway wrote itself (from the cache, merged chunks, a refusal) or read whole from an upstream. */
export interface CallAnswer {
  status: number;
  body: Buffer;
  /** Whether it is a call the merchant pays for (false for our own refusals). */
  metered: boolean;
  /** Price multiplier (a range query costs per started `blockUnit` blocks). */
  units: number;
  cached: boolean;
  /** The upstream's, when the body is the upstream's. */
  contentType?: string | undefined;
  /** The JSON-RPC error code of an upstream's answer read here (request logs). */
  rpcCode?: number | undefined;
}

const SPLIT_CONCURRENCY = 4;

/**
 * How to route a batch: by the head, to upstreams serving all its methods, and tried on another
 * upstream only when every element may be (one send of a transaction is a one-try batch).
 */
export function batchHints(methods: MethodClasses, calls: readonly RpcCall[]): RouteHints {
  const names = calls.map((c) => c.method);
  return calls.every((c) => methods.classOf(c.method, c.params).retry) ? { needsHead: true, methods: names } : { needsHead: true, methods: names, retry: false };
}

/**
 * How to route a call, by its family's method classes (`gateway.methods` of its traits): which
 * reads may go to a lagging node, which may be hedged, which may be tried on another upstream.
 */
export function routeHints(family: string, call: RpcCall): CallClass {
  return traitsOf(family).gateway.methods.classOf(call.method, call.params);
}

/**
 * The single-call paths that need the answer in hand: the finality cache, null answers retried
 * on a node further ahead, and the range query's guards. Anything else returns undefined and is
 * streamed through unchanged by the server.
 */
export class CallHandler {
  readonly #upstreams: UpstreamDirectory;
  readonly #cache: ResponseCache | undefined;
  readonly #views: Map<number, ChainView>;
  readonly #logsPolicy: (network: Environment['network']) => LogsPolicy;
  readonly #maxBytes: number;
  /** Undefined when no network has an integrity policy. */
  readonly #integrity: IntegrityChecks | undefined;

  constructor(deps: {
    upstreams: UpstreamDirectory; cache: ResponseCache | undefined; views: Map<number, ChainView>;
    logsPolicy: (network: Environment['network']) => LogsPolicy; maxResponseBytes: number; integrity?: IntegrityChecks | undefined;
  }) {
    this.#upstreams = deps.upstreams;
    this.#cache = deps.cache;
    this.#views = deps.views;
    this.#logsPolicy = deps.logsPolicy;
    this.#maxBytes = deps.maxResponseBytes;
    this.#integrity = deps.integrity;
  }

  view(envId: number): ChainView | undefined {
    return this.#views.get(envId);
  }

  /** Price multiplier of a call (batch elements too). */
  units(env: Environment, call: RpcCall): number {
    const query = traitsOf(env.network.family).gateway.methods.rangeQuery;
    return call.method === query?.method ? logsUnits(query, this.#logsPolicy(env.network), call.params, this.#views.get(env.id)) : 1;
  }

  /** A refusal for the family's range query or its filter over the range limit (batch elements, filters), or undefined. */
  refuseInBatch(env: Environment, call: RpcCall): ReturnType<typeof rangeTooLarge> | undefined {
    const query = traitsOf(env.network.family).gateway.methods.rangeQuery;
    if (!query || (call.method !== query.method && call.method !== query.filterMethod)) return undefined;
    const policy = this.#logsPolicy(env.network);
    const r = query.range(call.params, this.#views.get(env.id));
    if (!r || r.to - r.from + 1 <= policy.maxRange) return undefined;
    // Splitting inside a batch would multiply one element into many: batches get the refusal either way.
    return rangeTooLarge(policy, r.to - r.from + 1, call.id ?? null);
  }

  /** Moves batch elements we refuse (a range query over the limit) from `valid` to `rejected`. */
  screenBatch(env: Environment, parsed: Extract<ParsedRpc, { kind: 'batch' }>): void {
    for (let i = parsed.calls.length - 1; i >= 0; i--) {
      const refusal = this.refuseInBatch(env, parsed.calls[i]!);
      if (!refusal) continue;
      parsed.calls.splice(i, 1);
      parsed.valid.splice(i, 1);
      parsed.rejected.push(refusal);
    }
  }

  /**
   * A batch with at least one element the cache may answer: hits are answered here, the rest
   * goes upstream as one batch, and its final answers are cached. Undefined: forward as usual.
   */
  async batch(env: Environment, parsed: Extract<ParsedRpc, { kind: 'batch' }>, trace?: CallTrace): Promise<BatchAnswer | undefined> {
    // --- integrity policy (integrity.ts): one Map lookup when the network has none.
    const checked = this.#integrity?.inBatch(env.network.slug, parsed.calls);
    if (checked) return this.#batchChecked(env, parsed, checked, trace);
    // --- end integrity policy
    const cache = this.#cache;
    const view = this.#views.get(env.id);
    if (!cache) return undefined;
    const rules = traitsOf(env.network.family).gateway.cache;
    if (!rules) return undefined;
    const plans = parsed.calls.map((c) => (c.id === undefined ? undefined : planCache(env.id, rules, c.method, c.params, view)));
    if (!plans.some((p) => p !== undefined)) return undefined;
    const answered: string[] = [];
    const rest: number[] = [];
    for (let i = 0; i < plans.length; i++) {
      const hit = plans[i] ? cache.get(plans[i]!.key) : undefined;
      if (hit !== undefined) answered.push(`{"jsonrpc":"2.0","id":${JSON.stringify(parsed.calls[i]!.id)},"result":${hit}}`);
      else rest.push(i);
    }
    for (const r of parsed.rejected) answered.push(JSON.stringify(r));
    if (rest.length === 0) {
      return { status: 200, body: Buffer.from(`[${answered.join(',')}]`), meteredCalls: parsed.calls, hits: parsed.calls.length };
    }
    const set = this.#upstreams.for(env.id, env.upstreams);
    const body = Buffer.from(JSON.stringify(rest.map((i) => parsed.valid[i])));
    const res = await set.send({ method: 'POST', path: '', body, contentType: 'application/json', rpcMethod: '', trace },
      { needsHead: true, methods: rest.map((i) => parsed.calls[i]!.method) });
    const text = await readCapped(res.body, this.#maxBytes);
    const hitCalls = parsed.calls.filter((_, i) => !rest.includes(i));
    const restCalls = rest.map((i) => parsed.calls[i]!);
    const ok = res.status >= 200 && res.status < 300;
    let list: unknown;
    try {
      list = text === undefined ? undefined : parseJson(text.toString('utf8'));
    } catch { /* not JSON */ }
    if (!Array.isArray(list)) {
      // Not a batch answer (a node refusing batches, an error page): pass it on as the upstream said it.
      if (text === undefined) throw new UpstreamError(false, new Error('batch answer over max_logs_response_bytes'));
      return { status: res.status, body: text, contentType: res.contentType, meteredCalls: ok ? restCalls : [], hits: 0 };
    }
    // Match answers to calls by id, where the id is unique in what was sent.
    const byId = new Map<string, number>();
    const dup = new Set<string>();
    for (const i of rest) {
      const k = JSON.stringify(parsed.calls[i]!.id);
      if (byId.has(k)) dup.add(k);
      byId.set(k, i);
    }
    for (const a of list as Array<{ id?: unknown; result?: unknown; error?: unknown }>) {
      answered.push(JSON.stringify(a));
      if (typeof a !== 'object' || a === null || a.error !== undefined) continue;
      const k = JSON.stringify(a.id);
      const i = dup.has(k) ? undefined : byId.get(k);
      const plan = i === undefined ? undefined : plans[i];
      if (!plan) continue;
      const final = finalHeightOf(plan, a.result, this.#views.get(env.id));
      if (final) cache.set(plan.key, JSON.stringify(a.result), env.id, final.height, final.hash);
    }
    return { status: res.status, body: Buffer.from(`[${answered.join(',')}]`), meteredCalls: ok ? parsed.calls : hitCalls, hits: hitCalls.length };
  }

  /** `trace`: the client call's (tracing on), whose attempts these are (trace.ts). */
  async single(env: Environment, call: RpcCall, body: Buffer, trace?: CallTrace): Promise<CallAnswer | undefined> {
    const set = this.#upstreams.for(env.id, env.upstreams);
    const view = this.#views.get(env.id);
    const gateway = traitsOf(env.network.family).gateway;
    const query = gateway.methods.rangeQuery;
    if (query) {
      // Guarded even without an id: a notification would still make the node do the work.
      if (call.method === query.method) return this.#logs(env, query, set, call.id === undefined ? { ...call, id: null } : call, body, view, trace);
      // A filter over the same range would let its changes return what the query may not; it cannot be split.
      if (call.method === query.filterMethod) {
        const refusal = this.refuseInBatch(env, call);
        return refusal ? answer(200, Buffer.from(JSON.stringify(refusal)), false, 1, false) : undefined;
      }
    }
    if (call.id === undefined) return undefined; // a notification: nothing to answer from here
    const plan = this.#cache ? planCache(env.id, gateway.cache, call.method, call.params, view) : undefined;
    // --- integrity policy (integrity.ts): a Map lookup, undefined when the network has none.
    const integrity = this.#integrity?.policyFor(env.network.slug, call);
    // Null retries need somewhere to go; with one upstream the answer streams through.
    if (!plan && !integrity && (set.upstreams.length < 2 || !gateway.methods.nullMayLag(call.method))) return undefined;
    if (plan) {
      const hit = this.#cache!.get(plan.key) ?? await this.#cache!.getShared(plan.key);
      if (hit !== undefined) return answer(200, resultBody(call.id, hit), true, 1, true);
    }
    if (integrity) return this.#checked(env, set, call, body, integrity, plan, trace);
    // --- end integrity policy
    const got = await this.#fetch(env, set, call, body, this.#maxBytes, trace);
    if (got.kind === 'raw') return answer(got.status, got.body, got.status < 300, 1, false, got.contentType);
    if (got.kind === 'too-large') {
      return answer(200, Buffer.from(JSON.stringify(rpcError(-32012, `answer too large: over ${this.#maxBytes} bytes`, call.id))), false, 1, false);
    }
    if (plan && got.json.error === undefined) {
      const final = finalHeightOf(plan, got.json.result, this.#views.get(env.id));
      if (final) this.#cache!.set(plan.key, JSON.stringify(got.json.result), env.id, final.height, final.hash);
    }
    return answer(got.status, got.body, true, 1, false, got.contentType, codeOf(got.json));
  }

  /**
   * A call under an integrity policy: the answer `m` upstreams agree on, cached like any final
   * answer and billed once; a disagreement is the gateway's own error, not billed.
   */
  async #checked(env: Environment, set: UpstreamSet, call: RpcCall, body: Buffer, policy: IntegrityPolicy, plan: CachePlan | undefined, trace: CallTrace | undefined): Promise<CallAnswer> {
    const got = await this.#integrity!.check(set, networkLabels(env), call.method, policy, body, checkHints(env, call), this.#maxBytes, trace);
    if (got.kind === 'disagreed') return answer(200, disagreement(call.id), false, 1, false);
    if (plan && got.json.error === undefined) {
      const final = finalHeightOf(plan, got.json.result, this.#views.get(env.id));
      if (final) this.#cache!.set(plan.key, JSON.stringify(got.json.result), env.id, final.height, final.hash);
    }
    // Bitcoin Core's errors (HTTP 500) are relayed, not billed, as on the unchecked path.
    return answer(got.status, got.body, got.status < 300, 1, false, got.contentType, codeOf(got.json));
  }

  /**
   * A batch with elements under an integrity policy: those are checked one by one (as single
   * calls, in parallel), the others answered as any batch (cache, then upstream as one batch),
   * and the answers merged into one array. Each element is billed as its single call would be.
   */
  async #batchChecked(env: Environment, parsed: Extract<ParsedRpc, { kind: 'batch' }>, checked: number[], trace: CallTrace | undefined): Promise<BatchAnswer> {
    const set = this.#upstreams.for(env.id, env.upstreams);
    const isChecked = new Set(checked);
    const restAt = parsed.calls.map((_, i) => i).filter((i) => !isChecked.has(i));
    const rest: Extract<ParsedRpc, { kind: 'batch' }> = {
      kind: 'batch', valid: restAt.map((i) => parsed.valid[i]), calls: restAt.map((i) => parsed.calls[i]!), rejected: parsed.rejected,
    };
    const one = async (i: number): Promise<{ text: string; metered: RpcCall | undefined }> => {
      const call = parsed.calls[i]!;
      try {
        const a = await this.single(env, call, Buffer.from(JSON.stringify(parsed.valid[i])), trace);
        const text = a?.body.toString('utf8');
        // A JSON-RPC answer (Bitcoin Core's errors come with HTTP 500), not an error page.
        if (a && text && answerKey(text) !== undefined) return { text, metered: a.metered ? call : undefined };
      } catch (err) {
        if (!(err instanceof UpstreamError)) throw err;
        return { text: JSON.stringify(upstreamFailed(err, call.id)), metered: undefined };
      }
      return { text: JSON.stringify(rpcError(RPC_ERRORS.upstreamFailed.code, RPC_ERRORS.upstreamFailed.message, call.id)), metered: undefined };
    };
    const [answers, others] = await Promise.all([
      Promise.all(checked.map(one)),
      restAt.length === 0 ? undefined : this.#restOfBatch(env, set, rest, trace),
    ]);
    const texts = answers.map((a) => a.text);
    const metered = answers.flatMap((a) => (a.metered ? [a.metered] : []));
    if (others) {
      texts.push(...others.texts);
      metered.push(...others.metered);
    } else texts.push(...parsed.rejected.map((r) => JSON.stringify(r)));
    return { status: 200, body: Buffer.from(`[${texts.join(',')}]`), meteredCalls: metered, hits: others?.hits ?? 0 };
  }

  /** The elements of a batch not under a policy (and our refusals): from the cache path, else upstream as one batch. */
  async #restOfBatch(env: Environment, set: UpstreamSet, rest: Extract<ParsedRpc, { kind: 'batch' }>, trace: CallTrace | undefined): Promise<{ texts: string[]; metered: RpcCall[]; hits: number }> {
    const failed = (err: UpstreamError | undefined) => ({
      texts: [...rest.calls.filter((c) => c.id !== undefined).map((c) => JSON.stringify(err ? upstreamFailed(err, c.id) : rpcError(RPC_ERRORS.upstreamFailed.code, RPC_ERRORS.upstreamFailed.message, c.id))),
        ...rest.rejected.map((r) => JSON.stringify(r))],
      metered: [], hits: 0,
    });
    let list: unknown;
    try {
      // No element of `rest` is under a policy: this is the usual cache path, or undefined.
      const cached = await this.batch(env, rest, trace);
      if (cached) {
        list = cached.status >= 200 && cached.status < 300 ? parseJson(cached.body.toString('utf8')) : undefined;
        return Array.isArray(list) ? { texts: list.map((a) => JSON.stringify(a)), metered: cached.meteredCalls, hits: cached.hits } : failed(undefined);
      }
      const res = await set.send({ method: 'POST', path: '', body: Buffer.from(JSON.stringify(rest.valid)), contentType: 'application/json', trace }, { needsHead: true });
      const text = await readCapped(res.body, this.#maxBytes);
      list = text === undefined || res.status < 200 || res.status >= 300 ? undefined : parseJson(text.toString('utf8'));
    } catch (err) {
      if (err instanceof UpstreamError) return failed(err);
      if (!(err instanceof SyntaxError)) throw err;
    }
    if (!Array.isArray(list)) return failed(undefined);
    return { texts: [...list.map((a) => JSON.stringify(a)), ...rest.rejected.map((r) => JSON.stringify(r))], metered: rest.calls, hits: 0 };
  }

  async #logs(env: Environment, query: RangeQuery, set: UpstreamSet, call: RpcCall, body: Buffer, view: ChainView | undefined, trace: CallTrace | undefined): Promise<CallAnswer> {
    const policy = this.#logsPolicy(env.network);
    const range = query.range(call.params, view);
    const units = this.units(env, call);
    const blocks = range ? range.to - range.from + 1 : 0;
    if (!range || blocks <= policy.maxRange) {
      const one = await this.#logsChunk(env, set, call, body, policy, trace);
      if (one.kind === 'disagreed') return answer(200, disagreement(call.id), false, 1, false);
      if (one.kind === 'too-large') return answer(200, Buffer.from(JSON.stringify(resultTooLarge(query, policy, call.id))), false, 1, false);
      return answer(one.status, one.body, one.status < 300, units, one.cached, one.contentType, one.kind === 'json' ? codeOf(one.json) : undefined);
    }
    if (policy.overRange === 'refuse') return answer(200, Buffer.from(JSON.stringify(rangeTooLarge(policy, blocks, call.id))), false, 1, false);

    const parts = chunks(range.from, range.to, policy.maxRange);
    const results: string[] = new Array<string>(parts.length);
    let bytes = 0;
    let logs = 0;
    let failure: Buffer | undefined;
    let next = 0;
    const worker = async () => {
      while (next < parts.length && failure === undefined) {
        const i = next++;
        const [a, b] = parts[i]!;
        const params = query.withRange(call.params, a, b);
        const sub: RpcCall = { method: query.method, params, id: 1 };
        const got = await this.#logsChunk(env, set, sub, Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: query.method, params })), policy, trace);
        if (got.kind === 'too-large' || got.kind === 'disagreed') {
          failure = got.kind === 'disagreed' ? disagreement(call.id) : Buffer.from(JSON.stringify(resultTooLarge(query, policy, call.id)));
          return;
        }
        if (got.kind === 'raw' || got.json.error !== undefined || !Array.isArray(got.json.result)) {
          // The first error is the answer, under the client's id.
          const err = got.kind === 'json' && got.json.error !== undefined ? got.json.error : { code: -32010, message: 'upstream failed' };
          failure = Buffer.from(JSON.stringify({ jsonrpc: '2.0', error: err, id: call.id }));
          return;
        }
        const text = got.resultText;
        bytes += text.length;
        logs += got.json.result.length;
        if (bytes > policy.maxBytes || logs > policy.maxResults) {
          failure = Buffer.from(JSON.stringify(resultTooLarge(query, policy, call.id)));
          return;
        }
        results[i] = text.length > 2 ? text.slice(1, -1) : '';
      }
    };
    await Promise.all(Array.from({ length: Math.min(SPLIT_CONCURRENCY, parts.length) }, worker));
    if (failure) return answer(200, failure, false, 1, false);
    const merged = results.filter((r) => r.length > 0).join(',');
    return answer(200, resultBody(call.id, `[${merged}]`), true, units, false);
  }

  /** One range query within the limit: from the cache when final, else upstream, with the result caps. */
  async #logsChunk(env: Environment, set: UpstreamSet, call: RpcCall, body: Buffer, policy: LogsPolicy, trace: CallTrace | undefined): Promise<LogsChunk> {
    const plan = this.#cache ? planCache(env.id, traitsOf(env.network.family).gateway.cache, call.method, call.params, this.#views.get(env.id)) : undefined;
    if (plan) {
      const hit = this.#cache!.get(plan.key) ?? await this.#cache!.getShared(plan.key);
      if (hit !== undefined) {
        const result = JSON.parse(hit) as unknown[];
        return { kind: 'json', status: 200, body: resultBody(call.id, hit), json: { result }, resultText: hit, cached: true };
      }
    }
    // --- integrity policy (integrity.ts): each chunk of a split query is checked on its own.
    const integrity = this.#integrity?.policyFor(env.network.slug, call);
    const got = integrity
      ? await this.#integrity!.check(set, networkLabels(env), call.method, integrity, body, checkHints(env, call), policy.maxBytes, trace)
      : await this.#fetch(env, set, call, body, policy.maxBytes, trace);
    if (got.kind === 'disagreed') return got;
    if (got.kind === 'agreed') return this.#logsResult(env, plan, policy, { ...got, kind: 'json' });
    // --- end integrity policy
    if (got.kind !== 'json') return got.kind === 'raw' ? { ...got, cached: false } : got;
    return this.#logsResult(env, plan, policy, got);
  }

  /** A whole range query's answer: over `max_logs_results` refused, final ones cached. */
  #logsResult(env: Environment, plan: CachePlan | undefined, policy: LogsPolicy, got: { kind: 'json'; status: number; body: Buffer; json: RpcAnswer; contentType: string | undefined }): LogsChunk {
    const result = got.json.result;
    if (Array.isArray(result) && result.length > policy.maxResults) return { kind: 'too-large' };
    const resultText = JSON.stringify(result ?? null);
    if (plan && got.json.error === undefined && Array.isArray(result)) {
      const final = finalHeightOf(plan, result, this.#views.get(env.id));
      if (final) this.#cache!.set(plan.key, resultText, env.id, final.height, final.hash);
    }
    return { ...got, resultText, cached: false };
  }

  /**
   * Sends a single call and reads the answer whole (at most `maxBytes`). A null for a read that
   * a lagging node may not have yet is asked again of a node further ahead.
   */
  async #fetch(env: Environment, set: UpstreamSet, call: RpcCall, body: Buffer, maxBytes: number, trace: CallTrace | undefined):
  Promise<{ kind: 'too-large' } | { kind: 'raw'; status: number; body: Buffer; contentType: string | undefined }
    | { kind: 'json'; status: number; body: Buffer; json: RpcAnswer; contentType: string | undefined }> {
    const methods = traitsOf(env.network.family).gateway.methods;
    const hints = methods.classOf(call.method, call.params);
    const tried = new Set<Upstream>();
    // The head of the first node that answered null: any node further ahead may know better.
    let floor: number | undefined;
    const further = (u: Upstream) => !tried.has(u) && (u.head ?? 0) > (floor ?? 0);
    // The asking again is a try of the same client call: within its deadline.
    const deadline = performance.now() + set.deadlineMs;
    for (;;) {
      const res = await set.send({ method: 'POST', path: '', body, contentType: 'application/json', rpcMethod: call.method, trace },
        floor === undefined ? hints : { ...hints, only: further, deadline });
      tried.add(res.upstream);
      const text = await readCapped(res.body, maxBytes);
      if (text === undefined) return { kind: 'too-large' };
      let json: RpcAnswer | undefined;
      try {
        const v = JSON.parse(text.toString('utf8')) as unknown;
        if (typeof v === 'object' && v !== null && !Array.isArray(v)) json = v as RpcAnswer;
      } catch { /* not JSON: relay as is */ }
      if (!json || res.status >= 300) return { kind: 'raw', status: res.status, body: text, contentType: res.contentType };
      if (json.result === null && methods.nullMayLag(call.method)) {
        floor ??= res.upstream.head ?? 0;
        if (set.upstreams.some((u) => further(u) && !u.down && u.methods.serves(call.method))) continue;
      }
      return { kind: 'json', status: res.status, body: text, json, contentType: res.contentType };
    }
  }
}

interface RpcAnswer { result?: unknown; error?: unknown }

type LogsChunk = { kind: 'too-large' } | { kind: 'disagreed' } | { kind: 'raw'; status: number; body: Buffer; cached: false; contentType?: string | undefined }
  | { kind: 'json'; status: number; body: Buffer; json: RpcAnswer; resultText: string; cached: boolean; contentType?: string | undefined };

function disagreement(id: unknown): Buffer {
  return Buffer.from(JSON.stringify(rpcError(RPC_ERRORS.disagreement.code, RPC_ERRORS.disagreement.message, id)));
}

export interface BatchAnswer {
  status: number;
  body: Buffer;
  contentType?: string | undefined;
  /** The calls to meter: cache hits always, the others when the upstream answered 2xx. */
  meteredCalls: RpcCall[];
  hits: number;
}

function checkHints(env: Environment, call: RpcCall): { needsHead: boolean; rpcErrorsAre500: boolean } {
  return { needsHead: routeHints(env.network.family, call).needsHead, rpcErrorsAre500: traitsOf(env.network.family).gateway.rpcErrorsAre500 };
}

function upstreamFailed(err: UpstreamError, id: unknown): ReturnType<typeof rpcError> {
  const e = err.code === 'E_UPSTREAM_TIMEOUT' ? RPC_ERRORS.upstreamTimeout : RPC_ERRORS.upstreamFailed;
  return rpcError(e.code, e.message, id);
}

function answer(status: number, body: Buffer, metered: boolean, units: number, cached: boolean, contentType?: string, rpcCode?: number): CallAnswer {
  return { status, body, metered, units, cached, contentType, rpcCode };
}

function codeOf(json: RpcAnswer): number | undefined {
  const code = (json.error as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

function resultBody(id: unknown, resultJson: string): Buffer {
  return Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`);
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, max: number): Promise<Buffer | undefined> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      return undefined;
    }
    parts.push(chunk);
  }
  return Buffer.concat(parts, size);
}

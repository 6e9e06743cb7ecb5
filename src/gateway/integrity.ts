import type { Config } from '../config/index.js';
import { upstreamLabel, type FastCounter, type Metrics } from '../metrics/index.js';
import { rank } from './health.js';
import type { RpcCall } from './jsonrpc.js';
import type { NetworkLabels } from './metrics.js';
import type { CallTrace } from './trace.js';
import { UpstreamError, type Upstream, type UpstreamRequest, type UpstreamSet } from './upstreams/index.js';

/**
 * Answers checked across upstreams (docs/gateway.md, "Integrity policy"): for the methods a
 * network lists, `k` upstreams are asked at once and the answer is one that `m` of them gave, by
 * a canonical form of the result (an error by its code). An upstream whose answers differ from
 * the agreed one too often is demoted in selection for a while.
 */

export interface IntegrityPolicy {
  k: number;
  m: number;
  /** `on_disagreement: error`: every answer received must agree; else the first answer m agree on wins. */
  strict: boolean;
  /** `when: fixed_block`. */
  fixedBlockOnly: boolean;
  timeoutMs: number;
}

/** Demotion: this many disagreements within the last minute, at least RATE of the upstream's compared answers there. */
const DEMOTE_AFTER = 3;
const DEMOTE_RATE = 0.1;
const DEMOTE_MS = 60_000;
/** The minute is counted in 6 buckets of 10 s: constant memory and time whatever the call rate. */
const BUCKET_MS = 10_000;
const BUCKETS = 6;
/** At most one disagreement line per upstream this often (the metric counts every one). */
const LOG_EVERY_MS = 10_000;

/** Where a method's block parameter is, for `when: fixed_block`; methods not listed have none. */
const BLOCK_PARAM: Readonly<Record<string, number>> = {
  eth_getBlockByNumber: 0, eth_getBlockReceipts: 0, eth_getBlockTransactionCountByNumber: 0, eth_getUncleCountByBlockNumber: 0,
  eth_getTransactionByBlockNumberAndIndex: 0, eth_getUncleByBlockNumberAndIndex: 0,
  eth_getBalance: 1, eth_getCode: 1, eth_getTransactionCount: 1, eth_call: 1, eth_estimateGas: 1, eth_createAccessList: 1,
  eth_getStorageAt: 2, eth_getProof: 2,
};
const HEX = /^0x[0-9a-fA-F]*$/;
const HEX_NUMBER = /^0x[0-9a-fA-F]{1,16}$/;
const BLOCK_HASH = /^0x[0-9a-fA-F]{64}$/;

/** A block parameter every node answers the same for: a number, a hash (EIP-1898 too), `earliest`, `finalized`. */
export function isFixedBlock(v: unknown): boolean {
  if (typeof v === 'string') return v === 'earliest' || v === 'finalized' || HEX_NUMBER.test(v) || BLOCK_HASH.test(v);
  if (typeof v !== 'object' || v === null) return false;
  const o = v as { blockHash?: unknown; blockNumber?: unknown };
  return (typeof o.blockHash === 'string' && BLOCK_HASH.test(o.blockHash)) || (typeof o.blockNumber === 'string' && isFixedBlock(o.blockNumber));
}

/**
 * One text for equal answers however a node writes them: object keys sorted, hex strings in
 * lower case. `0x01` and `0x1` stay different (a node that pads a quantity breaks the spec).
 */
export function canonical(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(HEX.test(v) ? v.toLowerCase() : v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** What one upstream said, keyed for comparison; undefined when it is not a JSON-RPC answer (counted as a failure). */
export function answerKey(text: string): string | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const a = v as { result?: unknown; error?: { code?: unknown } };
  if (a.error !== undefined) return typeof a.error === 'object' && a.error !== null && typeof a.error.code === 'number' ? `e${a.error.code}` : undefined;
  return 'result' in a ? `r${canonical(a.result)}` : undefined;
}

interface Answer { up: Upstream; key: string; status: number; body: Buffer; contentType: string | undefined }

export type Checked =
  | { kind: 'agreed'; status: number; body: Buffer; contentType: string | undefined; json: { result?: unknown; error?: unknown } }
  | { kind: 'disagreed' };

/** One upstream's compared and disagreeing answers over the last minute, by 10 s bucket. */
class Tally {
  readonly compared = new Uint32Array(BUCKETS);
  readonly disagreed = new Uint32Array(BUCKETS);
  #bucket = 0;
  loggedAt = 0;
  unlogged = 0;

  /** Counts one compared answer now; returns the minute's totals. */
  add(now: number, disagreed: boolean): { compared: number; disagreed: number } {
    const b = Math.floor(now / BUCKET_MS);
    if (b - this.#bucket >= BUCKETS) this.clear();
    else for (let x = this.#bucket + 1; x <= b; x++) this.compared[x % BUCKETS] = this.disagreed[x % BUCKETS] = 0;
    this.#bucket = b;
    this.compared[b % BUCKETS]!++;
    if (disagreed) this.disagreed[b % BUCKETS]!++;
    let c = 0;
    let d = 0;
    for (let i = 0; i < BUCKETS; i++) {
      c += this.compared[i]!;
      d += this.disagreed[i]!;
    }
    return { compared: c, disagreed: d };
  }

  clear(): void {
    this.compared.fill(0);
    this.disagreed.fill(0);
  }
}

export class IntegrityChecks {
  /** Network slug → method → policy: the hot path's one lookup for a network without policies. */
  readonly #policies: Map<string, Map<string, IntegrityPolicy>>;
  readonly #records = new WeakMap<Upstream, Tally>();
  readonly #log: (line: string) => void;
  readonly #checks: FastCounter<'network' | 'env' | 'outcome'>;
  readonly #disagreements: FastCounter<'network' | 'env' | 'upstream'>;
  readonly #demotions: FastCounter<'network' | 'env' | 'upstream'>;

  /** Undefined when no network has a policy: the call path then asks nothing more. */
  static from(config: Config, metrics: Metrics, log: (line: string) => void): IntegrityChecks | undefined {
    const policies = new Map<string, Map<string, IntegrityPolicy>>();
    for (const n of config.networks) {
      if (!n.integrity?.length) continue;
      const byMethod = new Map<string, IntegrityPolicy>();
      for (const p of n.integrity) {
        const policy: IntegrityPolicy = {
          k: p.k, m: p.m, strict: p.on_disagreement === 'error', fixedBlockOnly: p.when === 'fixed_block', timeoutMs: p.timeout_ms ?? config.gateway.upstream_timeout_ms,
        };
        for (const method of p.methods) byMethod.set(method, policy);
      }
      policies.set(n.slug, byMethod);
    }
    return policies.size === 0 ? undefined : new IntegrityChecks(policies, metrics, log);
  }

  constructor(policies: Map<string, Map<string, IntegrityPolicy>>, metrics: Metrics, log: (line: string) => void) {
    this.#policies = policies;
    this.#log = log;
    this.#checks = metrics.fastCounter('integrity_checks_total', 'Calls answered under an integrity policy, by outcome (agreed, disagreed, insufficient: fewer than m answers)', ['network', 'env', 'outcome']);
    this.#disagreements = metrics.fastCounter('upstream_disagreements_total', 'Answers of the upstream that differed from the answer the others agreed on (integrity policy)', ['network', 'env', 'upstream']);
    this.#demotions = metrics.fastCounter('upstream_demotions_total', 'Times the upstream was demoted in selection for disagreeing too often (integrity policy)', ['network', 'env', 'upstream']);
  }

  /** The policy this call is under, if any. */
  policyFor(networkSlug: string, call: RpcCall): IntegrityPolicy | undefined {
    const p = this.#policies.get(networkSlug)?.get(call.method);
    if (!p || !p.fixedBlockOnly) return p;
    const at = BLOCK_PARAM[call.method];
    // Methods without a block parameter (by-hash reads) name one fixed object already.
    if (at === undefined) return p;
    return Array.isArray(call.params) && isFixedBlock(call.params[at]) ? p : undefined;
  }

  /** The batch elements under a policy (not notifications: nothing to answer), or undefined when none is. */
  inBatch(networkSlug: string, calls: readonly RpcCall[]): number[] | undefined {
    if (!this.#policies.has(networkSlug)) return undefined;
    const at: number[] = [];
    for (let i = 0; i < calls.length; i++) if (calls[i]!.id !== undefined && this.policyFor(networkSlug, calls[i]!)) at.push(i);
    return at.length > 0 ? at : undefined;
  }

  /**
   * Asks the `k` best upstreams (the usual ranking: demoted and down ones last; all of them when
   * fewer) at once. Majority: answers as soon as `m` agree; the slower ones are still compared
   * when they come, until the policy's timeout. Strict: waits for all `k` (or the timeout).
   * Fewer than `m` answers at all: the upstream failure (UpstreamError), as for any call.
   * `trace`: the client call's (tracing on): each upstream asked is an attempt of it.
   */
  check(set: UpstreamSet, labels: NetworkLabels, method: string, p: IntegrityPolicy, body: Buffer, hints: { needsHead: boolean; rpcErrorsAre500: boolean }, maxBytes: number, trace?: CallTrace): Promise<Checked> {
    const order = rank(set.upstreams, hints.needsHead, set.maxLagBlocks).slice(0, p.k);
    if (order.length === 0) return Promise.reject(new UpstreamError(false, new Error('no upstream configured')));
    const ac = new AbortController();
    const req: UpstreamRequest = { method: 'POST', path: '', body, contentType: 'application/json', signal: ac.signal, rpcErrorsAre500: hints.rpcErrorsAre500, trace };
    const answers: Answer[] = [];
    const groups = new Map<string, Answer[]>();
    let failure: unknown;
    let pending = order.length;
    let timedOut = false;
    let decided: Answer[] | undefined;
    return new Promise<Checked>((resolve, reject) => {
      const timer = setTimeout(() => {
        timedOut = true;
        ac.abort(new Error('integrity policy timeout'));
      }, p.timeoutMs);
      // Answers still compared after the client has its own must not hold a stopping worker.
      timer.unref();
      const settle = () => {
        clearTimeout(timer);
        if (!decided) {
          const biggest = [...groups.values()].sort((a, b) => b.length - a.length);
          if (answers.length < p.m) {
            this.#checks.inc({ ...labels, outcome: 'insufficient' });
            const timeout = timedOut || (failure instanceof UpstreamError && failure.code === 'E_UPSTREAM_TIMEOUT');
            reject(new UpstreamError(timeout, failure ?? new Error(`${answers.length} of ${order.length} upstreams answered, the integrity policy needs ${p.m}`)));
          } else if (p.strict && groups.size === 1) {
            decided = answers;
            resolve(agreed(answers[0]!));
          } else {
            this.#checks.inc({ ...labels, outcome: 'disagreed' });
            resolve({ kind: 'disagreed' });
          }
          // Without an agreed answer the odd ones out are those outside a group larger than any other.
          const ref = decided ?? (biggest.length > 1 && biggest[0]!.length > biggest[1]!.length ? biggest[0] : undefined);
          if (ref) this.#account(labels, method, answers, ref[0]!.key);
          if (decided) this.#checks.inc({ ...labels, outcome: 'agreed' });
          return;
        }
        this.#account(labels, method, answers, decided[0]!.key);
      };
      for (const up of order) {
        this.#ask(set, up, req, maxBytes).then((a) => {
          if (a === undefined) return;
          answers.push(a);
          const g = groups.get(a.key);
          if (g) g.push(a);
          else groups.set(a.key, [a]);
          const group = groups.get(a.key)!;
          if (!p.strict && !decided && group.length >= p.m) {
            decided = group;
            this.#checks.inc({ ...labels, outcome: 'agreed' });
            resolve(agreed(group[0]!));
          }
        }, (err: unknown) => {
          failure ??= err;
        }).finally(() => {
          if (--pending === 0) settle();
        });
      }
    });
  }

  /**
   * One upstream's answer read whole; undefined (a failure) when it is not a JSON-RPC answer
   * within `maxBytes`, with HTTP 2xx (or 500 where the family answers errors so: Bitcoin Core).
   */
  async #ask(set: UpstreamSet, up: Upstream, req: UpstreamRequest, maxBytes: number): Promise<Answer | undefined> {
    const res = await set.sendTo(up, req);
    const parts: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        res.body.destroy();
        return undefined;
      }
      parts.push(chunk as Buffer);
    }
    if ((res.status < 200 || res.status >= 300) && !(req.rpcErrorsAre500 && res.status === 500)) return undefined;
    const body = Buffer.concat(parts, size);
    // A node's own failure (`header not found`, a provider's rate limit) is no answer to compare,
    // and counts against it as on the unchecked path.
    const verdict = set.judge(body);
    if (verdict) {
      if (verdict.class === 'upstream') up.markFailed('rpc_error', verdict.detail);
      return undefined;
    }
    const key = answerKey(body.toString('utf8'));
    return key === undefined ? undefined : { up, key, status: res.status, body, contentType: res.contentType };
  }

  /** Counts each compared answer for or against its upstream, and demotes one that disagrees too often. */
  #account(labels: NetworkLabels, method: string, answers: Answer[], ref: string): void {
    const now = Date.now();
    for (const a of answers) {
      let r = this.#records.get(a.up);
      if (!r) this.#records.set(a.up, r = new Tally());
      const minute = r.add(now, a.key !== ref);
      if (a.key === ref) continue;
      const upstream = upstreamLabel(a.up.url);
      this.#disagreements.inc({ ...labels, upstream });
      if (now - r.loggedAt >= LOG_EVERY_MS) {
        const more = r.unlogged > 0 ? ` (and ${r.unlogged} more since the last line)` : '';
        this.#log(`gateway: warn: integrity: ${labels.network}/${labels.env}: upstream ${upstream} answered ${method} unlike the others${more}`);
        r.loggedAt = now;
        r.unlogged = 0;
      } else r.unlogged++;
      if (minute.disagreed >= DEMOTE_AFTER && minute.disagreed >= DEMOTE_RATE * minute.compared && a.up.demotedUntil <= now) {
        a.up.demotedUntil = now + DEMOTE_MS;
        this.#demotions.inc({ ...labels, upstream });
        this.#log(`gateway: warn: integrity: ${labels.network}/${labels.env}: upstream ${upstream} demoted for ${DEMOTE_MS / 1000} s: ${minute.disagreed} of its ${minute.compared} compared answers in the last minute disagreed`);
        // A fresh count after the demotion: it must disagree again to be demoted again.
        r.clear();
      }
    }
  }
}

function agreed(a: Answer): Checked {
  const json = JSON.parse(a.body.toString('utf8')) as { result?: unknown; error?: unknown };
  return { kind: 'agreed', status: a.status, body: a.body, contentType: a.contentType, json };
}

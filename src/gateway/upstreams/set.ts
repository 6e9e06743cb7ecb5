import { rank, type UpstreamSnapshot } from '../health.js';
import type { GatewayMetrics, NetworkLabels } from '../metrics.js';
import { UpstreamError, type RouteHints, type UpstreamRequest, type UpstreamResponse } from './call.js';
import { dispatchTo } from './call-handler.js';
import { hedged } from './hedge.js';
import type { MethodRules } from './methods.js';
import { ErrorClassifier, type ErrorRule, type Verdict } from './rpc-errors.js';
import { Upstream } from './upstream.js';
import { upstreamLabel } from '../../metrics/index.js';

export interface UpstreamSetOptions {
  timeoutMs: number;
  /** Blocks an upstream may lag behind the best head and still serve calls that read the head. */
  maxLagBlocks: number;
  /** Hedge idempotent reads after this latency quantile of the chosen upstream (0..1); undefined: never. */
  hedgeQuantile: number | undefined;
  /** One deadline for a call across all its tries (default: 2.5 × `timeoutMs`); answered -32011 when it passes. */
  deadlineMs?: number | undefined;
  /** How long an upstream that answered "method not found" is skipped for that method (default 10 min). */
  unsupportedMethodTtlMs?: number | undefined;
  /** The network's own JSON-RPC error classes, checked before the built-in table (rpc-errors.ts). */
  errorClasses?: readonly ErrorRule[] | undefined;
  /** The family's error classes (its traits' `gateway.errorRules`): after the network's, before the built-in table. */
  familyErrorClasses?: readonly ErrorRule[] | undefined;
  /** The methods each upstream serves, by its URL as configured; absent: all. */
  upstreamMethods?: Readonly<Record<string, MethodRules>> | undefined;
  /** Where learnt method skips are told. */
  log?: ((line: string) => void) | undefined;
}

const NO_HINTS: RouteHints = {};
const DEFAULT_METHOD_TTL_MS = 10 * 60_000;

/** One client call's tries: the last failure and the last node's own error answer. */
interface Tries { lastError: unknown; answer: UpstreamResponse | undefined }

/**
 * The upstreams of one network environment. Each call goes to the best one by health, latency
 * and lag (see health.ts) among those that serve its method; a connection error, a timeout, a
 * 5xx or a JSON-RPC error that is the node's fault (rpc-errors.ts) moves on to the next, within
 * one deadline for the call. Down ones are still tried last, so a full outage answers with the
 * last upstream's failure instead of nothing.
 */
export class UpstreamSet {
  readonly upstreams: Upstream[];
  readonly #opts: UpstreamSetOptions;
  readonly #judge: ErrorClassifier;
  readonly #deadlineMs: number;
  readonly #methodTtlMs: number;
  readonly #log: (line: string) => void;
  /** Some upstream has configured method rules: batches are routed by them too. */
  readonly #configuredRouting: boolean;

  constructor(urls: readonly string[], opts: UpstreamSetOptions, metrics?: GatewayMetrics, network?: NetworkLabels) {
    this.upstreams = urls.map((u) => new Upstream(u, opts.timeoutMs, metrics, network, opts.upstreamMethods?.[u]));
    this.#opts = opts;
    this.#judge = new ErrorClassifier(opts.familyErrorClasses ? [...opts.errorClasses ?? [], ...opts.familyErrorClasses] : opts.errorClasses);
    this.#deadlineMs = opts.deadlineMs ?? Math.round(2.5 * opts.timeoutMs);
    this.#methodTtlMs = opts.unsupportedMethodTtlMs ?? DEFAULT_METHOD_TTL_MS;
    this.#log = opts.log ?? (() => {});
    this.#configuredRouting = this.upstreams.some((u) => u.methods.restricted);
  }

  get maxLagBlocks(): number {
    return this.#opts.maxLagBlocks;
  }

  /** One client call's time across all its tries. */
  get deadlineMs(): number {
    return this.#deadlineMs;
  }

  async send(req: UpstreamRequest, hints: RouteHints = NO_HINTS): Promise<UpstreamResponse> {
    const deadline = hints.deadline ?? performance.now() + this.#deadlineMs;
    const candidates = this.#candidates(req, hints);
    const order = rank(candidates, hints.needsHead ?? false, this.#opts.maxLagBlocks);
    const judge = req.rpcMethod === undefined ? undefined : this.#judge;
    const tries: Tries = { lastError: undefined, answer: undefined };
    let i = 0;
    const q = this.#opts.hedgeQuantile;
    if (hints.idempotent && q !== undefined && order.length > 1 && !order[1]!.down) {
      const delay = order[0]!.latencyQuantile(q);
      const timeout = this.#timeoutFor(deadline);
      if (delay !== undefined && timeout !== 0) {
        try {
          return await hedged(order[0]!, order[1]!, req, delay, judge, timeout, (up, err) => this.#failedTry(up, req, err, tries));
        } catch (err) {
          if (req.signal?.aborted) throw err;
          i = 2;
        }
      }
    }
    // One try only: the rest of the order is never asked.
    const end = hints.retry === false ? Math.min(1, order.length) : order.length;
    for (; i < end; i++) {
      const timeout = this.#timeoutFor(deadline);
      if (timeout === 0) throw new UpstreamError(true, new Error('upstream deadline exceeded'));
      try {
        return await dispatchTo(order[i]!, req, undefined, judge, timeout);
      } catch (err) {
        // Cancelled by the caller (shutdown): no next upstream, nobody's fault.
        if (req.signal?.aborted) throw err;
        this.#failedTry(order[i]!, req, err, tries);
      }
    }
    // A node's own error answer says more to the client than our "upstream failed".
    if (tries.answer) return tries.answer;
    const last = tries.lastError;
    throw last instanceof UpstreamError ? last : new UpstreamError(false, last);
  }

  /**
   * What is left of the deadline for the next try: undefined while that is more than the
   * pool's own timeout, 0 when it has passed.
   */
  #timeoutFor(deadline: number): number | undefined {
    const left = deadline - performance.now();
    if (left >= this.#opts.timeoutMs) return undefined;
    return left < 1 ? 0 : Math.ceil(left);
  }

  /** The upstreams that may take the call: those serving its method (when any is restricted). */
  #candidates(req: UpstreamRequest, hints: RouteHints): Upstream[] {
    let candidates = hints.only ? this.upstreams.filter(hints.only) : this.upstreams;
    if (candidates.length === 0) throw new UpstreamError(false, new Error('no upstream configured'));
    const method = req.rpcMethod;
    if (method) {
      if (candidates.some((u) => u.methods.restricted)) {
        const now = Date.now();
        candidates = candidates.filter((u) => u.methods.serves(method, now));
        if (candidates.length === 0) throw new UpstreamError('method', new Error(`no upstream serves ${method}`));
      }
    } else if (hints.methods && this.#configuredRouting) {
      // A batch goes where all its methods are served, if anywhere; else to any (each element is answered).
      const methods = hints.methods;
      const serving = candidates.filter((u) => methods.every((m) => u.methods.serves(m)));
      if (serving.length > 0) candidates = serving;
    }
    return candidates;
  }

  #failedTry(up: Upstream, req: UpstreamRequest, err: unknown, tries: Tries): void {
    tries.lastError = err;
    this.#logFailure(up, err);
    if (!(err instanceof UpstreamError) || !err.answer) return;
    tries.answer = err.answer;
    if (err.code === 'E_METHOD_UNSUPPORTED' && req.rpcMethod) {
      up.skipMethod(req.rpcMethod, this.#methodTtlMs);
      this.#log(`gateway: upstream ${upstreamLabel(up.url)} answered "method not found" for ${req.rpcMethod.replace(/[^\w.-]/g, '?').slice(0, 64)}; skipped for it for ${Math.round(this.#methodTtlMs / 1000)} s`);
    }
  }

  /**
   * The cause of a failed client call, for the operator: clients get only -32010 (the upstream's
   * URL often holds a provider key), so without this line nobody can tell why. At most one line
   * per upstream per FAILURE_LOG_MS in this set (one per gateway worker), saying how many were left out.
   */
  #logFailure(up: Upstream, err: unknown): void {
    const now = Date.now();
    if (now - up.failureLoggedAt < FAILURE_LOG_MS) {
      up.failuresUnlogged++;
      return;
    }
    const more = up.failuresUnlogged > 0 ? ` (and ${up.failuresUnlogged} more since the last line)` : '';
    up.failureLoggedAt = now;
    up.failuresUnlogged = 0;
    this.#log(`gateway: upstream ${upstreamLabel(up.url)} failed a client call: ${failureCause(err, up)}${more}`);
  }

  /** Whose fault a JSON-RPC answer's error is, by this network's table (rpc-errors.ts); undefined: no node-side error. */
  judge(body: Buffer): Verdict {
    return this.#judge.judge(body);
  }

  /** One request to one upstream, bypassing selection: the probe's way to reach every node. */
  sendTo(up: Upstream, req: UpstreamRequest): Promise<UpstreamResponse> {
    return dispatchTo(up, req, undefined);
  }

  snapshot(): UpstreamSnapshot[] {
    return this.upstreams.map((u) => u.snapshot(this.#opts.maxLagBlocks));
  }

  async close(): Promise<void> {
    await Promise.all(this.upstreams.map((u) => u.pool.close().catch(() => {})));
  }
}

const FAILURE_LOG_MS = 10_000;

/** The innermost error's message, the upstream's URL in it cut to scheme://host:port (its path and query may hold a key). */
function failureCause(err: unknown, up: Upstream): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  const message = e instanceof Error ? e.message : String(e);
  return message.split(up.url).join(upstreamLabel(up.url)).replace(/\s+/g, ' ').slice(0, 300);
}

import { createClient } from 'redis';
import { MemoryReplayCache, type ReplayCache } from './replay.js';
import { MemoryWindowLimiter, type Limits, type WindowLimiter } from './window.js';
import { shareOf } from './instances.js';

/**
 * Counts and decides in one atomic round trip. ARGV: cost, limit, ttl ms, `partial` ('1': take as
 * much of cost as still fits, as a batch admitted in part does; else all or nothing, so a refused
 * request takes nothing), and `carry`: what this instance admitted from memory in this window
 * while Redis could not decide, counted first whatever the limit (it was admitted). Returns
 * {taken, count after}. The key carries its window's number and expires with it.
 */
const TAKE = `
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
local carry = tonumber(ARGV[5] or '0')
if carry > 0 then
  c = redis.call('INCRBY', KEYS[1], carry)
  if c == carry then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
end
local cost = tonumber(ARGV[1])
local room = tonumber(ARGV[2]) - c
if room < cost then
  if ARGV[4] ~= '1' or room <= 0 then return {0, c} end
  cost = room
end
local before = c
c = redis.call('INCRBY', KEYS[1], cost)
if before == 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return {cost, c}
`;

/**
 * A decision waits no longer than this for Redis (unless `redis.decision_timeout_ms` says
 * otherwise); after it, the instance's memory decides. Also the bound of the PING that checks
 * whether Redis is back.
 */
const DECISION_TIMEOUT_MS = 250;
/**
 * After Redis failed or did not answer, decisions go straight to memory for this long and then
 * one decision asks Redis again: a frozen Redis costs one request 250 ms a second, not each.
 */
const RETRY_AFTER_MS = 1000;
const TIMED_OUT = Symbol('timed out');

/**
 * A Redis command bounded in time: its reply, or why there is none (an error, or no answer
 * within `ms`; a late reply is dropped). The caller counts it and serves without Redis.
 */
export async function boundedCall<T>(call: Promise<T>, ms: number): Promise<{ reply: T } | { failed: string }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<typeof TIMED_OUT>((r) => { timer = setTimeout(() => r(TIMED_OUT), ms); });
    const reply = await Promise.race([call, timeout]);
    if (reply !== TIMED_OUT) return { reply };
    call.catch(() => {});
    return { failed: `no answer within ${ms} ms` };
  } catch (err) {
    return { failed: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * After a command failed or timed out, asks PING every `RETRY_AFTER_MS` until Redis answers,
 * then calls `recovered`. A part that degraded on one slow answer and then saw no traffic held
 * its outage open for minutes, and the process, which reports one outage for all its parts,
 * never reported the real one that followed. Stops once `degraded()` is false (the client's
 * `ready` or another command found Redis back) or the client is closed.
 */
export function pingUntilBack(client: RedisClient, degraded: () => boolean, recovered: () => void, timeoutMs = DECISION_TIMEOUT_MS): void {
  const check = async (): Promise<void> => {
    if (!degraded() || !client.isOpen) return;
    if (client.isReady && 'reply' in await boundedCall(client.ping(), timeoutMs)) {
      if (degraded()) recovered();
      return;
    }
    setTimeout(check, RETRY_AFTER_MS).unref();
  };
  setTimeout(check, RETRY_AFTER_MS).unref();
}

/** A Redis client as every shared part of the service uses it (limits, the gateway's cache). */
export function connectRedis(url: string) {
  return createClient({
    url,
    // Commands fail at once while disconnected instead of queueing behind the outage.
    disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000) },
  });
}

export type RedisClient = ReturnType<typeof connectRedis>;

export interface RedisLimitsOptions {
  url: string;
  keyPrefix: string;
  log: (line: string) => void;
  /**
   * Told when Redis stops or starts answering this client. Given, it replaces the log lines:
   * the process reports one outage however many clients (threads, parts) saw it (outage.ts).
   */
  onOutage?: (down: boolean, reason: string) => void;
  /** How long start-up waits for the first connection before it serves on memory limits. */
  connectWaitMs?: number;
  /** How long a decision waits for Redis before memory decides (`redis.decision_timeout_ms`). */
  decisionTimeoutMs?: number;
}

/**
 * Limits shared through Redis (proxyd/eRPC style fixed windows). Redis unreachable, slow or
 * failing: each decision falls back to this instance's memory windows at its share of the
 * limit (limit / live instances, see instances.ts) — never an error to the client and never
 * unlimited — with one warning per outage and a counter (`fallbacks`) for metrics; shared
 * counting resumes by itself once Redis answers again.
 */
export class RedisLimits implements Limits {
  readonly kind = 'redis' as const;
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #log: (line: string) => void;
  readonly #onOutage: ((down: boolean, reason: string) => void) | undefined;
  readonly #decisionTimeoutMs: number;
  #sha: string | undefined;
  readonly #windows: RedisWindow[] = [];
  #degraded = false;
  #retryAt = 0;
  #retrying = false;
  /** Decisions taken from memory because Redis did not answer. */
  fallbacks = 0;
  /** Instances of the fleet alive now (heartbeats); each decides its share while Redis is away. */
  liveInstances = 1;

  private constructor(client: RedisClient, o: RedisLimitsOptions) {
    this.#client = client;
    this.#prefix = o.keyPrefix;
    this.#log = o.log;
    this.#onOutage = o.onOutage;
    this.#decisionTimeoutMs = o.decisionTimeoutMs ?? DECISION_TIMEOUT_MS;
  }

  static async open(o: RedisLimitsOptions): Promise<RedisLimits> {
    const client = connectRedis(o.url);
    const limits = new RedisLimits(client, o);
    client.on('error', (err: Error) => limits.#degrade(err.message));
    client.on('ready', () => limits.#recover());
    let timer: NodeJS.Timeout | undefined;
    const connected = client.connect().then(() => true, () => false);
    const ok = await Promise.race([connected, new Promise<false>((r) => { timer = setTimeout(() => r(false), o.connectWaitMs ?? 2000); })]);
    clearTimeout(timer);
    if (!ok) limits.#degrade('no connection at start-up');
    return limits;
  }

  /** What this instance may admit of a fleet-wide `limit` while Redis cannot count for the fleet. */
  share(limit: number): number {
    return shareOf(limit, this.liveInstances);
  }

  /** True while decisions are shared (Redis answering). */
  get shared(): boolean {
    return this.#client.isReady && !this.#degraded;
  }

  /** `fallback`: what decides while Redis cannot (default: this thread's memory). */
  window(name: string, windowMs: number, fallback?: WindowLimiter): WindowLimiter {
    const w = new RedisWindow(this, `${this.#prefix}${name}:`, windowMs, fallback);
    this.#windows.push(w);
    return w;
  }

  replayCache(): ReplayCache {
    return new RedisReplayCache(this, `${this.#prefix}replay:`);
  }

  /**
   * @internal Sets `key` only if absent (`SET NX PX`): true when this call set it, false when it
   * was there; undefined when Redis could not say (the caller falls back to its memory).
   */
  async setOnce(key: string, ttlMs: number): Promise<boolean | undefined> {
    const reply = await this.#ask(() => this.#client.set(key, '1', { NX: true, PX: ttlMs }));
    return reply === undefined ? undefined : reply === 'OK';
  }

  async close(): Promise<void> {
    try {
      if (this.#client.isOpen) await this.#client.close();
    } catch {
      this.#client.destroy();
    }
  }

  /**
   * @internal One atomic decision; undefined when Redis could not decide (the caller falls back).
   * `carry`: admitted from memory in this window meanwhile, counted before deciding.
   */
  async decide(key: string, cost: number, limit: number, ttlMs: number, partial = false, carry = 0): Promise<[taken: number, count: number] | undefined> {
    const args = [String(cost), String(limit), String(ttlMs), partial ? '1' : '0', String(carry)];
    const reply = await this.#ask(() => this.#eval(key, args));
    return reply === undefined ? undefined : [Number(reply[0]), Number(reply[1])];
  }

  /**
   * The command's reply, or undefined when Redis is not asked (disconnected, or failing and not
   * yet due for a retry) or failed or did not answer in time: counted as a fallback.
   */
  async #ask<T>(command: () => Promise<T>): Promise<T | undefined> {
    const retry = this.#degraded && this.#client.isReady;
    if (!this.#client.isReady || (retry && (this.#retrying || Date.now() < this.#retryAt))) {
      this.fallbacks++;
      return undefined;
    }
    if (retry) this.#retrying = true;
    try {
      const r = await boundedCall(command(), this.#decisionTimeoutMs);
      if ('reply' in r) {
        if (this.#degraded && this.#client.isReady) this.#recover();
        return r.reply;
      }
      this.fallbacks++;
      this.#retryAt = Date.now() + RETRY_AFTER_MS;
      this.#degrade(r.failed);
      return undefined;
    } finally {
      if (retry) this.#retrying = false;
    }
  }

  async #eval(key: string, args: string[]): Promise<[number, number]> {
    if (this.#sha) {
      try {
        return await this.#client.evalSha(this.#sha, { keys: [key], arguments: args }) as [number, number];
      } catch (err) {
        if (!String((err as Error).message).includes('NOSCRIPT')) throw err;
      }
    }
    this.#sha = await this.#client.scriptLoad(TAKE);
    return await this.#client.evalSha(this.#sha, { keys: [key], arguments: args }) as [number, number];
  }

  #degrade(reason: string): void {
    if (this.#degraded) return;
    this.#degraded = true;
    if (this.#onOutage) this.#onOutage(true, reason);
    else this.#log(`limits: Redis unavailable (${reason}); each instance enforces its share of the limits in memory until it is back`);
    // As patient as a decision: a Redis slower than 250 ms but within the setting is back.
    pingUntilBack(this.#client, () => this.#degraded, () => this.#recover(), this.#decisionTimeoutMs);
  }

  #recover(): void {
    if (!this.#degraded) return;
    this.#degraded = false;
    if (this.#onOutage) this.#onOutage(false, '');
    else this.#log('limits: Redis is back; rate limits are shared again');
    for (const w of this.#windows) void w.flushCarry();
  }
}

/** One named fixed window (an endpoint's RPS, the API's per-IP second, the per-account minute). */
class RedisWindow implements WindowLimiter {
  readonly #limits: RedisLimits;
  readonly #prefix: string;
  readonly #windowMs: number;
  readonly #fallback: WindowLimiter;
  /** key -> window number known to be full: the rest of that window is refused without Redis. */
  readonly #full = new Map<string, number>();
  /**
   * key -> what this instance admitted from memory in `window` while Redis could not decide.
   * Carried into Redis's count at its next decision of that window: without it, for the rest
   * of the second Redis came back in, the fleet admitted its limit again on top (up to 2x).
   */
  readonly #carry = new Map<string, { window: number; n: number }>();

  constructor(limits: RedisLimits, prefix: string, windowMs: number, fallback?: WindowLimiter) {
    this.#limits = limits;
    this.#prefix = prefix;
    this.#windowMs = windowMs;
    this.#fallback = fallback ?? new MemoryWindowLimiter(windowMs);
  }

  take(key: string, limit: number, cost = 1, now = Date.now()): number | Promise<number> {
    const window = Math.floor(now / this.#windowMs);
    const wait = Math.max(1, Math.ceil(((window + 1) * this.#windowMs - now) / 1000));
    if (this.#full.get(key) === window) return wait;
    return this.#decide(key, window, limit, cost, false).then(async (taken) => {
      if (taken !== undefined) return taken > 0 ? 0 : wait;
      const refused = await this.#fallback.take(key, this.#limits.share(limit), cost, now);
      if (refused === 0) this.#remember(key, window, cost);
      return refused;
    });
  }

  admit(key: string, limit: number, cost: number, now = Date.now()): number | Promise<number> {
    const window = Math.floor(now / this.#windowMs);
    if (this.#full.get(key) === window) return 0;
    return this.#decide(key, window, limit, cost, true).then(async (taken) => {
      if (taken !== undefined) return taken;
      const admitted = await this.#fallback.admit(key, this.#limits.share(limit), cost, now);
      this.#remember(key, window, admitted);
      return admitted;
    });
  }

  #remember(key: string, window: number, admitted: number): void {
    if (admitted <= 0) return;
    const c = this.#carry.get(key);
    if (c?.window === window) c.n += admitted;
    else {
      if (this.#carry.size > 10_000) for (const [k, v] of this.#carry) if (v.window !== window) this.#carry.delete(k);
      this.#carry.set(key, { window, n: admitted });
    }
  }

  /** How much Redis took (undefined: it could not decide); remembers a window it saw full. */
  async #decide(key: string, window: number, limit: number, cost: number, partial: boolean): Promise<number | undefined> {
    const c = this.#carry.get(key);
    const carry = c?.window === window ? c.n : 0;
    const d = await this.#limits.decide(`${this.#prefix}${key}:${window}`, cost, limit, this.#windowMs * 2, partial, carry);
    if (d === undefined) return undefined;
    if (c) this.#carried(key, c, carry);
    const [taken, count] = d;
    if (count >= limit) {
      if (this.#full.size > 10_000) this.#sweep(window);
      this.#full.set(key, window);
    }
    return taken;
  }

  /**
   * Redis is back: every carry goes into its window's count now, not at the key's next decision,
   * so the other instances' decisions of this second see it too.
   */
  async flushCarry(): Promise<void> {
    for (const [key, c] of [...this.#carry]) {
      const n = c.n;
      // Cost 0 against limit 0: counts the carry, takes nothing.
      if (await this.#limits.decide(`${this.#prefix}${key}:${c.window}`, 0, 0, this.#windowMs * 2, false, n) === undefined) return;
      this.#carried(key, c, n);
    }
  }

  /** `sent` of `c` is counted in Redis: carried once only (what was remembered meanwhile stays). */
  #carried(key: string, c: { window: number; n: number }, sent: number): void {
    if (this.#carry.get(key) !== c) return;
    c.n -= sent;
    if (c.n <= 0) this.#carry.delete(key);
  }

  #sweep(window: number): void {
    for (const [k, w] of this.#full) if (w !== window) this.#full.delete(k);
  }
}

/**
 * Signatures seen by any instance. This instance's memory answers a replay sent to it again
 * without a round trip; Redis answers for the others. Redis away: memory alone, as for limits.
 */
class RedisReplayCache implements ReplayCache {
  readonly #limits: RedisLimits;
  readonly #prefix: string;
  readonly #memory = new MemoryReplayCache();

  constructor(limits: RedisLimits, prefix: string) {
    this.#limits = limits;
    this.#prefix = prefix;
  }

  claim(signature: string, expiresAtMs: number, nowMs: number): boolean | Promise<boolean> {
    if (!this.#memory.claim(signature, expiresAtMs, nowMs)) return false;
    return this.#limits.setOnce(`${this.#prefix}${signature}`, Math.max(1, expiresAtMs - nowMs)).then((set) => set ?? true);
  }
}

export async function openLimits(o: RedisLimitsOptions | undefined): Promise<Limits> {
  if (!o) {
    const { memoryLimits } = await import('./window.js');
    return memoryLimits();
  }
  return RedisLimits.open(o);
}

import { randomBytes } from 'node:crypto';
import { boundedCall, connectRedis, pingUntilBack, type RedisClient } from '../limits/index.js';
import type { SharedCacheTier } from './cache.js';

/**
 * Stores one answer and indexes it by height. KEYS: the answer, the environment's height index,
 * its expiry index. ARGV: value, ttl ms, height ('' for none), now ms. The expiry index lets each
 * write trim index members whose answers Redis already expired, so the indexes stay bounded; the
 * indexes expire with their newest answer, so every key this tier writes has a TTL.
 */
const SET = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[2], ARGV[3], KEYS[1])
  redis.call('ZADD', KEYS[3], tonumber(ARGV[4]) + tonumber(ARGV[2]), KEYS[1])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
  local old = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[4], 'LIMIT', 0, 100)
  if #old > 0 then
    redis.call('ZREM', KEYS[2], unpack(old))
    redis.call('ZREM', KEYS[3], unpack(old))
  end
end
return 1
`;

/** Deletes the environment's answers at height ARGV[1] and above. KEYS: height index, expiry index. */
const DROP = `
local n = 0
while true do
  local ks = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf', 'LIMIT', 0, 500)
  if #ks == 0 then break end
  n = n + redis.call('DEL', unpack(ks))
  redis.call('ZREM', KEYS[1], unpack(ks))
  redis.call('ZREM', KEYS[2], unpack(ks))
end
return n
`;

/**
 * A shared read waits no longer than this; after it the instance asks its upstream, as on any
 * miss, and skips Redis reads for `BACKOFF_MS` so a slow Redis does not slow every miss.
 */
const READ_TIMEOUT_MS = 250;
const BACKOFF_MS = 1000;

/**
 * A frozen Redis (SIGSTOP, a paused VM) keeps its TCP connection, so the client stays "ready"
 * and queues every command, value included, until Redis answers: nothing else bounds them, as
 * callers do not wait for writes. Past these, a command is not sent (a write is dropped, a read
 * misses): it is a cache, and the instance's memory tier still holds the answer.
 */
export const MAX_COMMANDS_IN_FLIGHT = 256;
export const MAX_BYTES_IN_FLIGHT = 16 * 1024 * 1024;


export interface RedisCacheOptions {
  url: string;
  keyPrefix: string;
  log: (line: string) => void;
  /** Told when Redis stops or starts answering; given, it replaces the log lines (limits/outage.ts). */
  onOutage?: (down: boolean, reason: string) => void;
  /** How long a shared answer lives (final answers do not change; this bounds Redis memory). */
  ttlMs?: number;
  /** Answers larger than this stay in the instance's memory only. */
  maxValueBytes?: number;
  /** How long start-up waits for the first connection before it serves from memory alone. */
  connectWaitMs?: number;
}

/**
 * The response cache's shared tier in Redis: an answer per key (`<prefix>cache:<key>`, with a
 * TTL), a sorted set of answer keys by height per environment so a reorg deletes exactly what it
 * covers, and a pub/sub channel telling the other instances to drop their memory entries too.
 * Redis away, slow or failing: every method resolves (reads as a miss, writes and drops as
 * nothing) within a small bound, so the memory tier alone serves and no client sees an error;
 * one warning per outage.
 */
export class RedisCacheTier implements SharedCacheTier {
  readonly #client: RedisClient;
  readonly #sub: RedisClient;
  readonly #prefix: string;
  readonly #channel: string;
  readonly #log: (line: string) => void;
  readonly #onOutage: ((down: boolean, reason: string) => void) | undefined;
  readonly #ttlMs: number;
  readonly #maxValueBytes: number;
  /** Tells this instance's own drops apart from the others' on the channel. */
  readonly #instance = randomBytes(8).toString('hex');
  readonly #listeners: Array<(envId: number, height: number) => void> = [];
  #degraded = false;
  /** Until then no command is sent: Redis just failed or did not answer in time. */
  #backOffUntil = 0;
  #commandsInFlight = 0;
  #bytesInFlight = 0;
  /** Reads, writes and drops that Redis did not serve, writes dropped unsent included (for metrics and tests). */
  fallbacks = 0;

  private constructor(client: RedisClient, sub: RedisClient, o: RedisCacheOptions) {
    this.#client = client;
    this.#sub = sub;
    this.#prefix = `${o.keyPrefix}cache:`;
    this.#channel = `${o.keyPrefix}cache-drops`;
    this.#log = o.log;
    this.#onOutage = o.onOutage;
    this.#ttlMs = o.ttlMs ?? 3_600_000;
    this.#maxValueBytes = o.maxValueBytes ?? 1024 * 1024;
  }

  static async open(o: RedisCacheOptions): Promise<RedisCacheTier> {
    const client = connectRedis(o.url);
    const sub = client.duplicate();
    const tier = new RedisCacheTier(client, sub, o);
    client.on('error', (err: Error) => tier.#degrade(err.message));
    sub.on('error', (err: Error) => tier.#degrade(err.message));
    client.on('ready', () => tier.#recovered());
    let timer: NodeJS.Timeout | undefined;
    // The subscription is restored by the client after a reconnect.
    const connected = Promise.all([client.connect(), sub.connect().then(() => sub.subscribe(tier.#channel, (m) => tier.#onMessage(m)))])
      .then(() => true, () => false);
    const ok = await Promise.race([connected, new Promise<false>((r) => { timer = setTimeout(() => r(false), o.connectWaitMs ?? 2000); })]);
    clearTimeout(timer);
    if (!ok) tier.#degrade('no connection at start-up');
    return tier;
  }

  async get(key: string): Promise<{ text: string; envId: number; height: number | undefined; hash: string | undefined } | undefined> {
    const k = this.#prefix + key;
    if (!this.#maySend(k.length)) return this.#miss();
    const raw = await this.#bounded(this.#tracked(k.length, this.#client.get(k)));
    if (raw === undefined) return this.#miss();
    if (raw === null) return undefined;
    // `<envId>\n<height or empty>\n<block hash or empty>\n<answer>`
    const a = raw.indexOf('\n');
    const b = raw.indexOf('\n', a + 1);
    const c = raw.indexOf('\n', b + 1);
    if (a < 0 || b < 0 || c < 0) return undefined;
    const height = raw.slice(a + 1, b);
    const hash = raw.slice(b + 1, c);
    return { envId: Number(raw.slice(0, a)), height: height === '' ? undefined : Number(height), hash: hash === '' ? undefined : hash, text: raw.slice(c + 1) };
  }

  async set(key: string, text: string, envId: number, height: number | undefined, hash?: string): Promise<void> {
    // JSON answers from nodes are ASCII (hex), so characters count bytes without encoding them.
    if (text.length > this.#maxValueBytes) return;
    const value = `${envId}\n${height ?? ''}\n${hash ?? ''}\n${text}`;
    const bytes = value.length + key.length;
    if (!this.#maySend(bytes)) {
      this.fallbacks++;
      return;
    }
    await this.#bounded(this.#tracked(bytes, this.#client.eval(SET, {
      keys: [this.#prefix + key, this.#heightIndex(envId), this.#expiryIndex(envId)],
      arguments: [value, String(this.#ttlMs), height === undefined ? '' : String(height), String(Date.now())],
    })));
  }

  async dropFrom(envId: number, height: number): Promise<void> {
    if (!this.#maySend(0)) {
      // Another instance may keep serving what this one dropped until Redis is back and the
      // answers expire; each instance's own probe still checks the anchors it cached.
      this.fallbacks++;
      return;
    }
    const dropped = await this.#bounded(this.#tracked(0, this.#client.eval(DROP, { keys: [this.#heightIndex(envId), this.#expiryIndex(envId)], arguments: [String(height)] })));
    if (dropped === undefined) return;
    await this.#bounded(this.#tracked(0, this.#client.publish(this.#channel, `${this.#instance} ${envId} ${height}`)));
  }

  onDrop(listener: (envId: number, height: number) => void): void {
    this.#listeners.push(listener);
  }

  /** Commands sent to Redis that it has not answered yet (their replies may come long after the caller gave up on them). */
  get commandsInFlight(): number {
    return this.#commandsInFlight;
  }

  /** True while answers are shared (Redis answering). */
  get shared(): boolean {
    return this.#client.isReady && !this.#degraded;
  }

  async close(): Promise<void> {
    for (const c of [this.#sub, this.#client]) {
      try {
        if (c.isOpen) await c.close();
      } catch {
        c.destroy();
      }
    }
  }

  #heightIndex(envId: number): string {
    return `${this.#prefix}by-height:${envId}`;
  }

  #expiryIndex(envId: number): string {
    return `${this.#prefix}by-expiry:${envId}`;
  }

  #onMessage(message: string): void {
    const [from, env, height] = message.split(' ');
    if (from === this.#instance) return;
    const envId = Number(env);
    const h = Number(height);
    if (!Number.isSafeInteger(envId) || !Number.isSafeInteger(h)) return;
    for (const l of this.#listeners) l(envId, h);
  }

  #miss(): undefined {
    this.fallbacks++;
    return undefined;
  }

  /**
   * Whether a command of about `bytes` may go to Redis now: connected, not backing off, within
   * the in-flight caps, and, while Redis is known to be failing, only as the one command that
   * finds out whether it is back (a frozen Redis keeps its connection, so no reconnect says so).
   */
  #maySend(bytes: number): boolean {
    if (!this.#client.isReady || Date.now() < this.#backOffUntil) return false;
    if (this.#degraded && this.#commandsInFlight > 0) return false;
    return this.#commandsInFlight < MAX_COMMANDS_IN_FLIGHT && this.#bytesInFlight + bytes <= MAX_BYTES_IN_FLIGHT;
  }

  /** Counts the command in flight until Redis answers it or the connection fails it, not until the caller stops waiting. */
  #tracked<T>(bytes: number, call: Promise<T>): Promise<T> {
    this.#commandsInFlight++;
    this.#bytesInFlight += bytes;
    const settled = () => {
      this.#commandsInFlight--;
      this.#bytesInFlight -= bytes;
    };
    call.then(settled, settled);
    return call;
  }

  /** The command's reply, or undefined when Redis failed or did not answer in time. */
  async #bounded<T>(call: Promise<T>): Promise<T | undefined> {
    const r = await boundedCall(call, READ_TIMEOUT_MS);
    if ('failed' in r) {
      this.fallbacks++;
      this.#backOffUntil = Date.now() + BACKOFF_MS;
      this.#degrade(r.failed);
      return undefined;
    }
    if (this.#degraded && this.#client.isReady) this.#recovered();
    return r.reply;
  }

  #recovered(): void {
    if (this.#degraded) {
      if (this.#onOutage) this.#onOutage(false, '');
      else this.#log('gateway cache: Redis is back; cached answers are shared again');
    }
    this.#degraded = false;
    this.#backOffUntil = 0;
  }

  #degrade(reason: string): void {
    if (this.#degraded) return;
    this.#degraded = true;
    if (this.#onOutage) this.#onOutage(true, reason);
    else this.#log(`gateway cache: Redis unavailable (${reason}); each instance serves from its own memory cache until it is back`);
    pingUntilBack(this.#client, () => this.#degraded, () => this.#recovered());
  }
}

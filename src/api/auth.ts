import { createHash, createHmac } from 'node:crypto';
import { safeEqualHex } from '../client/signing.js';
import { ChangeWatch, findActiveKey, getAccount, type AccountRow, type ActiveKey, type Store } from '../store/index.js';
import { IpAllowlist } from '../util/ip.js';
import { HttpError } from './http.js';
import { MemoryReplayCache, type ReplayCache } from '../limits/replay.js';

export const AUTH_ERRORS = {
  missingKey: 'Missing X-Api-Key',
  invalidKey: 'Invalid API key',
  badTimestamp: 'Missing or invalid X-Timestamp',
  missingSignature: 'Missing X-Signature',
  badSignature: 'Invalid signature.',
  ipNotAllowed: 'IP address not allowed.',
} as const;

/**
 * Why an authentication failed, in the `X-Rpcctl-Reason` header of the 401/403: the spec fixes
 * the `error` strings, and `Invalid signature.` covers both a signing bug and an exact replay of
 * a mutating request (which only needs signing again); the header tells them apart.
 */
export const AUTH_REASON_HEADER = 'x-rpcctl-reason';
export const AUTH_REASONS = [
  'missing_key', 'invalid_key', 'bad_timestamp', 'expired_timestamp', 'missing_signature', 'bad_signature', 'replayed', 'ip_not_allowed',
] as const;
export type AuthReason = (typeof AUTH_REASONS)[number];

function authError(status: 401 | 403, message: string, reason: AuthReason): HttpError {
  return new HttpError(status, message, { [AUTH_REASON_HEADER]: reason });
}

export interface AuthRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  clientIp: string;
}

/** A key that passed verification, with its account as of the cache time. */
export interface AuthenticatedKey extends ActiveKey {
  allowlist: IpAllowlist;
  account: AccountRow;
}

/** A request whose headers and key passed; the body is still to be read and verified. */
export interface PendingAuth {
  key: AuthenticatedKey;
  ts: string;
  signature: string;
}

/** Reads may be repeated; anything that changes state may not. */
const REPLAYABLE = new Set(['GET', 'HEAD', 'OPTIONS']);

interface CachedKey {
  key: AuthenticatedKey | null;
  /** The ChangeWatch generation it was read at. */
  generation: number;
  readAt: number;
}

/**
 * A key is read again after this long even when nothing announced a change: a row edited by
 * hand (SQL, not rpcctl) moves no counter. One read per key a minute costs nothing.
 */
const MAX_AGE_MS = 60_000;

const EMPTY_SHA256 = createHash('sha256').digest('hex');

/**
 * Verifies the three signature headers. Keys (with their account and plan) come from memory:
 * the hot path skips the store and the secret's decryption. The cache follows every change to
 * keys and accounts (ChangeWatch `auth`): one made in this process (API, cabinet) applies to
 * the next request; one made by `rpcctl admin` or another instance applies within 100 ms on
 * SQLite (`PRAGMA data_version`), and on PostgreSQL within `authCheckMs` (1 s) at most, at once
 * when its NOTIFY arrives.
 */
export class Authenticator {
  readonly #store: Store;
  readonly #skewSeconds: number;
  readonly #watch: ChangeWatch;
  readonly #cache = new Map<string, CachedKey>();
  readonly #replay: ReplayCache;

  constructor(store: Store, opts: { skewSeconds?: number; authCheckMs?: number; replay?: ReplayCache } = {}) {
    this.#store = store;
    this.#replay = opts.replay ?? new MemoryReplayCache();
    this.#skewSeconds = opts.skewSeconds ?? 300;
    this.#watch = new ChangeWatch(store, 'auth', { checkMs: opts.authCheckMs });
  }

  /**
   * Everything that can be judged without the body: the headers, the timestamp and the key.
   * Runs before a single body byte is read, so a request without a valid key costs nothing.
   */
  async precheck(headers: AuthRequest['headers'], nowMs = Date.now()): Promise<PendingAuth> {
    const apiKey = header(headers, 'x-api-key');
    if (!apiKey) throw authError(401, AUTH_ERRORS.missingKey, 'missing_key');
    const ts = header(headers, 'x-timestamp');
    if (!ts || !/^\d{1,12}$/.test(ts)) throw authError(401, AUTH_ERRORS.badTimestamp, 'bad_timestamp');
    // Outside the window (a clock off, or a request kept too long): re-signing now fixes it.
    if (Math.abs(Math.floor(nowMs / 1000) - Number(ts)) > this.#skewSeconds) throw authError(401, AUTH_ERRORS.badTimestamp, 'expired_timestamp');
    const signature = header(headers, 'x-signature');
    if (!signature) throw authError(401, AUTH_ERRORS.missingSignature, 'missing_signature');
    const key = await this.#lookup(apiKey, nowMs);
    if (!key) throw authError(401, AUTH_ERRORS.invalidKey, 'invalid_key');
    return { key, ts, signature: signature.toLowerCase() };
  }

  /** The signature over the body, a replay of a mutating request, then the key's IP allowlist. */
  async verify(pending: PendingAuth, req: Omit<AuthRequest, 'headers'>, nowMs = Date.now()): Promise<AuthenticatedKey> {
    const { key, ts, signature } = pending;
    const bodyHash = req.body.length === 0 ? EMPTY_SHA256 : createHash('sha256').update(req.body).digest('hex');
    const expected = createHmac('sha256', key.secret).update(`${ts}\n${req.method}\n${req.path}\n${bodyHash}`).digest('hex');
    if (!safeEqualHex(expected, signature)) throw authError(401, AUTH_ERRORS.badSignature, 'bad_signature');
    // A signature is valid for the whole skew window; a mutating one is good for one use.
    // Remembered until no clock could still accept its timestamp.
    if (!REPLAYABLE.has(req.method)) {
      const fresh = await this.#replay.claim(`${key.id}:${signature}`, nowMs + (2 * this.#skewSeconds + 1) * 1000, nowMs);
      if (!fresh) throw authError(401, AUTH_ERRORS.badSignature, 'replayed');
    }
    if (!key.allowlist.allows(req.clientIp)) throw authError(403, AUTH_ERRORS.ipNotAllowed, 'ip_not_allowed');
    return key;
  }

  async authenticate(req: AuthRequest, nowMs = Date.now()): Promise<AuthenticatedKey> {
    return this.verify(await this.precheck(req.headers, nowMs), req, nowMs);
  }

  async #lookup(id: string, nowMs: number): Promise<CachedKey['key']> {
    // Key ids are UUIDs; anything else cannot exist, and need not reach the store or the cache.
    if (id.length > 64) return null;
    const generation = await this.#watch.current(nowMs);
    const hit = this.#cache.get(id);
    if (hit && hit.generation === generation && nowMs - hit.readAt < MAX_AGE_MS) return hit.key;
    const found = await findActiveKey(this.#store, id);
    const account = found ? await getAccount(this.#store, found.accountId) : undefined;
    const key = found && account ? { ...found, allowlist: new IpAllowlist(found.allowedIps), account } : null;
    if (this.#cache.size > 10_000) this.#cache.clear();
    // Read at the generation seen before the reads: a change during them leaves this entry stale.
    this.#cache.set(id, { key, generation, readAt: nowMs });
    return key;
  }
}

function header(headers: AuthRequest['headers'], name: string): string | undefined {
  const v = headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined ? undefined : s.trim();
}

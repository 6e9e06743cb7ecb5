import type { Kysely } from 'kysely';
import { request } from 'undici';
import { RATE_PATTERN, type RatesConfig } from '../config/payments.js';
import type { Database } from '../store/index.js';
import { RpcctlError } from '../util/errors.js';
import { numberToDecimal } from './fiat.js';

/** The rate an order is priced at: currency per asset unit, locked at creation. */
export interface LockedRate {
  rate: string;
  source: 'static' | 'http';
  /** When the source priced it (ISO 8601). */
  at: string;
}

/**
 * No fresh rate for a pair: the order is refused rather than priced at a stale rate. The
 * message is the contract's (decisions.md, "Fiat prices"); the HTTP source logs why.
 */
export class RateUnavailableError extends RpcctlError {
  readonly code = 'E_PAYMENT_INVALID';
  constructor(asset: string, currency: string) {
    super(`Rate unavailable for ${asset}/${currency}.`);
  }
}

export interface RateSource {
  /** A fresh rate for `asset` (its symbol, upper case) in `currency` (ISO 4217), or RateUnavailableError. */
  rate(asset: string, currency: string): Promise<LockedRate>;
}

/**
 * `static`: the store's table (fed by `rpcctl admin rates set`, read on every creation, so a
 * running serve sees a new rate at once) over the config's `static` table. A stored rate is
 * stale `ttl_s` after it was set: the feed stopped, and the pair is refused even when the
 * config has a value for it. A config rate never goes stale: the operator fixed it.
 */
export class StaticRates implements RateSource {
  readonly #startedAt = new Date().toISOString();
  readonly #db: Kysely<Database>;
  readonly #config: RatesConfig;

  constructor(db: Kysely<Database>, config: RatesConfig) {
    this.#db = db;
    this.#config = config;
  }

  async rate(asset: string, currency: string): Promise<LockedRate> {
    const row = await this.#db.selectFrom('payment_rates').selectAll()
      .where('asset', '=', asset).where('currency', '=', currency).executeTakeFirst();
    if (row) {
      const age = Date.now() - Date.parse(row.updated_at);
      // The feed stopped (or the time does not parse): refused, whatever the config says.
      if (!(age <= this.#config.ttl_s * 1000)) throw new RateUnavailableError(asset, currency);
      return { rate: row.rate, source: 'static', at: row.updated_at };
    }
    const fixed = this.#config.static[`${asset}/${currency}`];
    if (fixed === undefined) throw new RateUnavailableError(asset, currency);
    return { rate: fixed, source: 'static', at: this.#startedAt };
  }
}

/**
 * `http`: GET the operator's price API. The URL and the selector take `{asset}`, `{currency}`,
 * `{asset_lower}`, `{currency_lower}`; the selector is a dotted path into the JSON answer
 * (a segment of digits indexes an array). An answer is cached per pair for `ttl_s`; a failed
 * fetch, a missing or non-positive number, a `time_selector` time older than `ttl_s`, or a
 * rate outside the sanity band or too far from the pair's last one refuses the order. Headers come from the JSON object in the `headers_env` variable and are
 * never logged.
 */
export class HttpRates implements RateSource {
  readonly #cache = new Map<string, { rate: LockedRate; fetchedMs: number }>();
  readonly #inflight = new Map<string, Promise<LockedRate>>();
  /** The last rate accepted per pair, which the next one may not move too far from. */
  readonly #last = new Map<string, AcceptedRate>();
  readonly #http: NonNullable<RatesConfig['http']>;
  readonly #ttlMs: number;
  readonly #env: NodeJS.ProcessEnv;
  readonly #log: (line: string) => void;

  constructor(config: RatesConfig, env: NodeJS.ProcessEnv, log: (line: string) => void) {
    this.#http = config.http!;
    this.#ttlMs = config.ttl_s * 1000;
    this.#env = env;
    this.#log = log;
    // A malformed header variable is the operator's mistake: said at start, not per order.
    this.#headers();
  }

  async rate(asset: string, currency: string): Promise<LockedRate> {
    const key = `${asset}/${currency}`;
    const hit = this.#cache.get(key);
    if (hit && Date.now() - hit.fetchedMs < this.#ttlMs && this.#fresh(hit.rate)) return hit.rate;
    // Concurrent orders for one pair share one fetch.
    let pending = this.#inflight.get(key);
    if (!pending) {
      pending = this.#fetch(asset, currency).finally(() => this.#inflight.delete(key));
      this.#inflight.set(key, pending);
    }
    return pending;
  }

  #fresh(r: LockedRate): boolean {
    const age = Date.now() - Date.parse(r.at);
    // A time ahead of ours is no fresher: a source in milliseconds read as seconds would
    // otherwise be fresh for ever, and a stale price never refused.
    return age <= this.#ttlMs && age >= -FUTURE_SKEW_MS;
  }

  async #fetch(asset: string, currency: string): Promise<LockedRate> {
    const fill = (template: string, encode: (s: string) => string) => template
      .replaceAll('{asset}', encode(asset)).replaceAll('{currency}', encode(currency))
      .replaceAll('{asset_lower}', encode(asset.toLowerCase())).replaceAll('{currency_lower}', encode(currency.toLowerCase()));
    const unavailable = (detail: string) => {
      this.#log(`payments: rate ${asset}/${currency} unavailable: ${detail}`);
      return new RateUnavailableError(asset, currency);
    };
    const url = fill(this.#http.url, encodeURIComponent);
    const timeoutMs = this.#http.timeout_ms;
    let body: unknown;
    try {
      const res = await request(url, {
        method: 'GET', headers: { accept: 'application/json', ...this.#headers() },
        headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs),
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new Error(`HTTP ${res.statusCode}`);
      }
      body = JSON.parse(await boundedText(res.body, MAX_ANSWER_BYTES));
    } catch (err) {
      const e = err as Error & { cause?: Error };
      throw unavailable(`GET ${new URL(url).origin}: ${e.cause?.message ?? e.message}`);
    }
    const fetchedMs = Date.now();
    const rate = toRate(select(body, fill(this.#http.selector, (s) => s)));
    if (rate === undefined) throw unavailable(`selector ${this.#http.selector} gave no positive number`);
    let at = new Date(fetchedMs).toISOString();
    if (this.#http.time_selector !== undefined) {
      const when = toTime(select(body, fill(this.#http.time_selector, (s) => s)));
      if (when === undefined) throw unavailable(`time_selector ${this.#http.time_selector} gave no time`);
      at = when;
    }
    const locked: LockedRate = { rate, source: 'http', at };
    if (!this.#fresh(locked)) throw unavailable(`the source priced it at ${at}, older than ttl_s`);
    const key = `${asset}/${currency}`;
    const implausible = implausibleRate(rate, this.#last.get(key), this.#http, fetchedMs);
    if (implausible) throw unavailable(implausible);
    this.#last.set(key, { rate, atMs: fetchedMs });
    this.#cache.set(key, { rate: locked, fetchedMs });
    return locked;
  }

  #headers(): Record<string, string> {
    const name = this.#http.headers_env;
    if (name === undefined) return {};
    const raw = this.#env[name];
    if (raw === undefined) throw new Error(`payments.rates.http.headers_env: the variable ${name} is not set`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // Not the value: it holds a secret.
      throw new Error(`payments.rates.http.headers_env: ${name} must hold a JSON object of headers, e.g. {"x-api-key": "..."}`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || !Object.values(parsed).every((v) => typeof v === 'string')) {
      throw new Error(`payments.rates.http.headers_env: ${name} must hold a JSON object of string headers`);
    }
    // A CR or LF would split the request (undici refuses it per request: every order would fail).
    for (const [header, value] of Object.entries(parsed as Record<string, string>)) {
      if (!HEADER_NAME.test(header)) throw new Error(`payments.rates.http.headers_env: ${name} has a header name that is not a token (letters, digits, -)`);
      if (/[\0-\x08\x0a-\x1f\x7f]/.test(value)) throw new Error(`payments.rates.http.headers_env: ${name} has a header value with a control character (CR, LF, NUL...)`);
    }
    return parsed as Record<string, string>;
  }
}

/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

interface AcceptedRate { rate: string; atMs: number }

type RateChecks = Pick<NonNullable<RatesConfig['http']>, 'min_rate' | 'max_rate' | 'max_move' | 'max_move_window_s'>;

/**
 * Why a fetched rate is not believed, or undefined: outside the sanity band, or moved more than
 * `max_move` from the pair's last accepted rate (when that is younger than the window). Numbers
 * suffice: these are bounds, not prices, and the rate itself stays a decimal string.
 */
export function implausibleRate(rate: string, last: AcceptedRate | undefined, checks: RateChecks, nowMs: number): string | undefined {
  const r = Number(rate);
  if (r < Number(checks.min_rate) || r > Number(checks.max_rate)) {
    return `the source's rate ${rate} is outside min_rate ${checks.min_rate} .. max_rate ${checks.max_rate}`;
  }
  if (last && nowMs - last.atMs <= checks.max_move_window_s * 1000) {
    const l = Number(last.rate);
    if (Math.max(r / l, l / r) > 1 + checks.max_move) {
      return `the source's rate ${rate} moved more than max_move ${checks.max_move} from ${last.rate} (accepted ${Math.round((nowMs - last.atMs) / 1000)} s ago)`;
    }
  }
  return undefined;
}

/** A price answer larger than this is refused: a rate is a few bytes, and the answer is held in memory. */
const MAX_ANSWER_BYTES = 1024 * 1024;

async function boundedText(body: AsyncIterable<Buffer>, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) throw new Error(`answer larger than ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The value at a dotted path (`data.ETH.USD`, `rates.0.price`); undefined where the path leads nowhere. */
export function select(root: unknown, path: string): unknown {
  let at: unknown = root;
  for (const segment of path.split('.')) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, segment)) return undefined;
    at = (at as Record<string, unknown>)[segment];
  }
  return at;
}

/** A selected value as a rate: a positive JSON number or decimal string. */
function toRate(v: unknown): string | undefined {
  let s: string;
  try {
    s = typeof v === 'number' ? numberToDecimal(v) : typeof v === 'string' ? v.trim() : '';
  } catch {
    return undefined;
  }
  return RATE_PATTERN.test(s) ? s : undefined;
}

/** Unix seconds (number or digits) or an ISO 8601 string, as ISO 8601. */
function toTime(v: unknown): string | undefined {
  const ms = typeof v === 'number' ? v * 1000 : typeof v === 'string' && /^\d+(\.\d+)?$/.test(v) ? Number(v) * 1000 : typeof v === 'string' ? Date.parse(v) : NaN;
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** How far ahead of this clock a source's time may be (clocks differ a little). */
const FUTURE_SKEW_MS = 60_000;

/** The provider `payments.rates` names. */
export function rateSourceFor(db: Kysely<Database>, config: RatesConfig, env: NodeJS.ProcessEnv, log: (line: string) => void): RateSource {
  return config.provider === 'http' ? new HttpRates(config, env, log) : new StaticRates(db, config);
}

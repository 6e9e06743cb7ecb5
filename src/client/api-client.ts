import type { Agent as HttpAgent } from 'node:http';
import { networkReason } from './network-reason.js';
import { signatureHeaders } from './signing.js';
import { AbortedError, ApiError, NetworkError, RpcctlClientError, TimeoutError } from './errors.js';
import type {
  Account, AuditPage, AvailableNetworks, CreateEndpointInput, Endpoint, RequestLogPage, RequestLogQuery, Usage, UsageDays,
} from './types.js';

export interface ApiClientOptions {
  baseUrl: string;
  apiKey: string;
  secret: string;
  /** Attempts for 429s and, on idempotent methods, connection errors. Default 3. */
  maxRetries?: number;
  /** Longest wait honoured from a Retry-After header, in seconds. Default 30. */
  maxRetryAfterSeconds?: number;
  timeoutMs?: number;
  /** The node:http(s) agent to send through (a proxy agent); default: one keep-alive agent per client. */
  agent?: HttpAgent;
  userAgent?: string;
  /**
   * Most time one call may take, retries and Retry-After waits included; past it the call
   * rejects with a TimeoutError. Unset: no overall limit (each attempt still has `timeoutMs`).
   */
  callTimeoutMs?: number;
  /** Told about each call and each retry: a command line shows a spinner and notes from these. */
  hooks?: ClientHooks;
  /** Ends every call of this client, as a call's own `signal` does (a command line's Ctrl-C). */
  signal?: AbortSignal;
  /** Injected clock and sleep, for tests. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export interface RetryInfo {
  /** `rate-limited`: a 429 with Retry-After; `unreachable`: no HTTP answer. */
  reason: 'rate-limited' | 'unreachable';
  waitMs: number;
  /** The attempt about to be made, 2-based. */
  attempt: number;
  /** For `unreachable`: what went wrong. */
  error?: string;
}

export interface ClientHooks {
  /** A call starts; the returned function is called once it ends, however it ends. */
  call?(method: string, path: string): () => void;
  retry?(info: RetryInfo): void;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  /** An object is serialised once; a string is sent exactly as given. */
  body?: unknown;
  /** Ends the request and any retry wait; the call then rejects with an AbortedError. */
  signal?: AbortSignal;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);
const REPLAYABLE = new Set(['GET', 'HEAD', 'OPTIONS']);
const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class ApiClient {
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #secret: string;
  readonly #opts: ApiClientOptions;
  #agent: HttpAgent | undefined;
  #second = 0;
  readonly #signatures = new Set<string>();

  constructor(opts: ApiClientOptions) {
    if (!opts.baseUrl) throw new RpcctlClientError('E_CONFIG', 'base URL is required');
    if (!opts.apiKey) throw new RpcctlClientError('E_CONFIG', 'API key is required');
    if (!opts.secret) throw new RpcctlClientError('E_CONFIG', 'API secret is required');
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.#apiKey = opts.apiKey;
    this.#secret = opts.secret;
    this.#opts = opts;
  }

  /**
   * Any signed request. Returns the parsed body for 2xx; throws ApiError otherwise.
   * The body string that is signed is the body that is sent.
   */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.raw(method, path, opts);
    if (res.status >= 200 && res.status < 300) return res.json as T;
    throw toApiError(res);
  }

  /** Like request(), but returns every answer (including 4xx/5xx) instead of throwing. */
  async raw(method: string, path: string, opts: RequestOptions = {}): Promise<RawResponse> {
    const upper = method.toUpperCase();
    const body = opts.body === undefined ? '' : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    const url = this.baseUrl + withQuery(path.startsWith('/') ? path : `/${path}`, opts.query);
    const signed = new URL(url).pathname;
    const maxRetries = this.#opts.maxRetries ?? 3;
    const sleep = this.#opts.sleep ?? defaultSleep;

    const budgetMs = this.#opts.callTimeoutMs;
    const budget = budgetMs === undefined ? undefined : AbortSignal.timeout(budgetMs);
    const given = [opts.signal, this.#opts.signal].filter((s): s is AbortSignal => s !== undefined);
    const callers = given.length > 1 ? AbortSignal.any(given) : given[0];
    const signal = budget && callers ? AbortSignal.any([callers, budget]) : budget ?? callers;
    const startedAt = Date.now();
    const overBudget = () => budget?.aborted === true && callers?.aborted !== true;
    const wait = async (ms: number) => {
      await Promise.race([sleep(ms), abortPromise(signal)]);
    };
    const done = this.#opts.hooks?.call?.(upper, signed);
    try {
      return await this.#attempts({ upper, url, signed, body, maxRetries, signal, wait, overBudget, startedAt, budgetMs });
    } catch (err) {
      if (err instanceof AbortedError && overBudget()) throw new TimeoutError(this.baseUrl, budgetMs!);
      throw err;
    } finally {
      done?.();
    }
  }

  async #attempts(c: {
    upper: string; url: string; signed: string; body: string; maxRetries: number; signal: AbortSignal | undefined;
    wait: (ms: number) => Promise<void>; overBudget: () => boolean; startedAt: number; budgetMs: number | undefined;
  }): Promise<RawResponse> {
    const { upper, url, signed, body, maxRetries, signal, wait } = c;
    // A wait that would outlast the budget is not started: the caller gets the answer now.
    const fits = (ms: number) => c.budgetMs === undefined || Date.now() - c.startedAt + ms < c.budgetMs;
    let resigned = false;
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw new AbortedError();
      let nowMs = this.#opts.now?.() ?? Date.now();
      let auth = signatureHeaders({ apiKey: this.#apiKey, secret: this.#secret, method: upper, path: signed, body, timestamp: Math.floor(nowMs / 1000) });
      // The server takes a mutating signature once: the same request again in the same second
      // (a retry, or a script repeating itself) waits for the next second's signature.
      if (!REPLAYABLE.has(upper) && this.#sentThisSecond(auth['x-signature']!, nowMs)) {
        await wait(1000 - (nowMs % 1000) + 5);
        nowMs = this.#opts.now?.() ?? Date.now();
        auth = signatureHeaders({ apiKey: this.#apiKey, secret: this.#secret, method: upper, path: signed, body, timestamp: Math.floor(nowMs / 1000) });
        this.#sentThisSecond(auth['x-signature']!, nowMs);
      }
      const headers: Record<string, string> = {
        ...auth,
        accept: 'application/json',
        'user-agent': this.#opts.userAgent ?? 'rpcctl',
      };
      if (body !== '') headers['content-type'] = 'application/json';
      let res: RawResponse;
      const timeoutMs = this.#opts.timeoutMs ?? 30_000;
      const attemptTimeout = AbortSignal.timeout(timeoutMs);
      try {
        res = await this.#send(url, upper, headers, body, signal ? AbortSignal.any([signal, attemptTimeout]) : attemptTimeout);
      } catch (err) {
        if (signal?.aborted) throw new AbortedError();
        const reason = attemptTimeout.aborted ? `no answer within ${timeoutMs / 1000} s` : networkReason(err);
        if (IDEMPOTENT.has(upper) && attempt < maxRetries && fits(backoffMs(attempt))) {
          this.#opts.hooks?.retry?.({ reason: 'unreachable', waitMs: backoffMs(attempt), attempt: attempt + 2, error: reason });
          await wait(backoffMs(attempt));
          continue;
        }
        throw new NetworkError(`cannot reach ${this.baseUrl}: ${reason}`, err);
      }
      // A second process (another CLI run) may have sent this very request in this second: the
      // server took that signature and refuses it again. A fresh second's signature settles it
      // (a wrong signature, `bad_signature`, is not retried).
      if (res.status === 401 && !REPLAYABLE.has(upper) && !resigned && headerValue(res.headers['x-rpcctl-reason']) === 'replayed') {
        resigned = true;
        await wait(1000 - ((this.#opts.now?.() ?? Date.now()) % 1000) + 5);
        continue;
      }
      if (res.status === 429 && attempt < maxRetries) {
        const seconds = retryAfterSeconds(res.headers['retry-after']) ?? 1;
        if (seconds <= (this.#opts.maxRetryAfterSeconds ?? 30) && fits(seconds * 1000)) {
          this.#opts.hooks?.retry?.({ reason: 'rate-limited', waitMs: seconds * 1000, attempt: attempt + 2 });
          await wait(seconds * 1000);
          continue;
        }
      }
      return res;
    }
  }

  /** Records a mutating signature; true when it was already sent in this second. */
  #sentThisSecond(signature: string, nowMs: number): boolean {
    const second = Math.floor(nowMs / 1000);
    if (second !== this.#second) {
      this.#second = second;
      this.#signatures.clear();
    }
    if (this.#signatures.has(signature)) return true;
    this.#signatures.add(signature);
    return false;
  }

  account(): Promise<{ ok: true } & Account> {
    return this.request('GET', '/v1/account');
  }
  accountUsage(days?: UsageDays): Promise<{ ok: true; usage: Usage }> {
    return this.request('GET', '/v1/account/usage', { query: { days } });
  }
  /** The account's audit log, newest first; `action` ending in a dot (`endpoint.`) takes every action on that target. */
  auditLog(query: { limit?: number; before?: string; action?: string } = {}): Promise<{ ok: true } & AuditPage> {
    return this.request('GET', '/v1/account/audit', { query });
  }
  listEndpoints(): Promise<{ ok: true; endpoints: Endpoint[] }> {
    return this.request('GET', '/v1/endpoints');
  }
  availableNetworks(): Promise<{ ok: true } & AvailableNetworks> {
    return this.request('GET', '/v1/endpoints/available-networks');
  }
  createEndpoint(input: CreateEndpointInput): Promise<{ ok: true; endpoint: Endpoint }> {
    return this.request('POST', '/v1/endpoints', { body: input });
  }
  getEndpoint(id: number): Promise<{ ok: true; endpoint: Endpoint }> {
    return this.request('GET', `/v1/endpoints/${id}`);
  }
  renameEndpoint(id: number, name: string): Promise<{ ok: true; endpoint: Endpoint }> {
    return this.request('PATCH', `/v1/endpoints/${id}`, { body: { name } });
  }
  setEndpointStatus(id: number, status: 'active' | 'paused'): Promise<{ ok: true; endpoint: Endpoint }> {
    return this.request('PATCH', `/v1/endpoints/${id}/status`, { body: { status } });
  }
  setAllowedIps(id: number, allowedIps: string[]): Promise<{ ok: true; endpoint: Endpoint }> {
    return this.request('PATCH', `/v1/endpoints/${id}/allowed-ips`, { body: { allowed_ips: allowedIps } });
  }
  endpointsUsage(days?: UsageDays): Promise<{ ok: true; usage: Usage }> {
    return this.request('GET', '/v1/endpoints/usage', { query: { days } });
  }
  endpointUsage(id: number, days?: UsageDays): Promise<{ ok: true; usage: Usage }> {
    return this.request('GET', `/v1/endpoints/${id}/usage`, { query: { days } });
  }

  /** The endpoint's recent gateway calls, newest first (the answering instance's; see docs/gateway.md, "Request logs"). */
  endpointLogs(id: number, query: RequestLogQuery = {}, opts: { signal?: AbortSignal } = {}): Promise<RequestLogPage> {
    return this.request('GET', `/v1/endpoints/${id}/logs`, { query: { ...query }, signal: opts.signal });
  }

  /** Closes the kept-alive connections of the client's own agent. */
  async close(): Promise<void> {
    this.#agent?.destroy();
  }

  /**
   * One HTTP exchange over node:http(s). Not fetch or the undici package: either costs a
   * command line (which makes one or two calls and exits) more start-up time than the rest.
   */
  async #send(url: string, method: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<RawResponse> {
    const target = new URL(url);
    // TLS is loaded only for an https base URL: a local service is plain http.
    // Not `import ... from 'node:http(s)'`: an ESM import of a built-in reads every export, and
    // node:http's WebSocket getters then load all of Node's internal undici (~25 ms per command).
    const https = target.protocol === 'https:' ? process.getBuiltinModule('node:https') : undefined;
    const http = process.getBuiltinModule('node:http');
    const agent = this.#opts.agent ?? (this.#agent ??= new (https ? https.Agent : http.Agent)({ keepAlive: true, maxSockets: 8 }));
    const send = https ? https.request : http.request;
    return new Promise((resolve, reject) => {
      // Explicit: node:http leaves it out for a DELETE with a body (the watch removal has one).
      const withLength = body === '' ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
      const req = send(target, { method, headers: withLength, agent, signal }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parseJson(text) });
        });
      });
      req.on('error', reject);
      req.end(body === '' ? undefined : body);
    });
  }
}

/** Rejects with AbortedError when the signal fires; never settles without one. */
function abortPromise(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_, reject) => {
    if (!signal) return;
    if (signal.aborted) return reject(new AbortedError());
    signal.addEventListener('abort', () => reject(new AbortedError()), { once: true });
  });
}

function withQuery(path: string, query: RequestOptions['query']): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  if (!qs) return path;
  return path + (path.includes('?') ? '&' : '?') + qs;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function retryAfterSeconds(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return undefined;
  const n = Number(v);
  if (Number.isFinite(n) && n >= 0) return Math.max(1, Math.ceil(n));
  const date = Date.parse(v);
  return Number.isNaN(date) ? undefined : Math.max(1, Math.ceil((date - Date.now()) / 1000));
}

function backoffMs(attempt: number): number {
  return Math.min(2000, 200 * 2 ** attempt) * (0.8 + Math.random() * 0.4);
}

function toApiError(res: RawResponse): ApiError {
  const body = res.json as { error?: unknown } | undefined;
  const message = typeof body?.error === 'string' ? body.error : `HTTP ${res.status}${res.text ? `: ${res.text.slice(0, 200)}` : ''}`;
  return new ApiError(res.status, message, res.json ?? res.text, retryAfterSeconds(res.headers['retry-after']), headerValue(res.headers['x-rpcctl-reason']));
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}


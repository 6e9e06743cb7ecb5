import { Agent, request } from 'undici';
import { RpcctlError } from '../util/errors.js';

export class ScanUpstreamError extends RpcctlError {
  readonly code = 'E_UPSTREAM';
}

/** A node's JSON-RPC error answer (the node worked, and said no), apart from a failure to reach it. */
export class JsonRpcAnswerError extends ScanUpstreamError {
  readonly rpcCode: number;
  constructor(method: string, rpcCode: number, message: string) {
    super(`${method}: ${message} (${rpcCode})`);
    this.rpcCode = rpcCode;
  }
}

/**
 * The upstreams of one environment, for the scanners. They talk to the nodes directly (not
 * through the gateway: scanning is the service's own traffic, not a merchant's) and move to
 * the next upstream when one fails, staying there while it works.
 */
export class UpstreamPool {
  readonly #upstreams: string[];
  readonly agent: Agent;
  readonly timeoutMs: number;
  #current = 0;

  constructor(upstreams: string[], timeoutMs = 10_000) {
    if (upstreams.length === 0) throw new ScanUpstreamError('the environment has no upstreams');
    this.#upstreams = upstreams;
    this.timeoutMs = timeoutMs;
    this.agent = new Agent({ keepAliveTimeout: 30_000, connections: 4 });
  }

  async use<T>(what: string, fn: (baseUrl: string) => Promise<T>): Promise<T> {
    let lastError: unknown;
    for (let i = 0; i < this.#upstreams.length; i++) {
      const index = (this.#current + i) % this.#upstreams.length;
      try {
        const result = await fn(this.#upstreams[index]!);
        this.#current = index;
        return result;
      } catch (err) {
        lastError = err;
      }
    }
    if (lastError instanceof ScanUpstreamError) throw lastError;
    const e = lastError as (Error & { cause?: Error }) | undefined;
    throw new ScanUpstreamError(`${what}: ${e?.cause?.message ?? e?.message ?? String(lastError)}`);
  }

  /** GET or POST returning status and text, with the pool's agent and timeouts. */
  async fetch(url: string, init: { method: 'GET' | 'POST'; body?: string; headers?: Record<string, string> }): Promise<{ status: number; text: string }> {
    const res = await request(url, {
      method: init.method,
      headers: {
        ...(init.body === undefined ? { accept: 'application/json' } : { 'content-type': 'application/json', accept: 'application/json' }),
        ...init.headers,
      },
      body: init.body,
      dispatcher: this.agent,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
    return { status: res.statusCode, text: await res.body.text() };
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** A minimal JSON-RPC client over an upstream pool. */
export class RpcClient {
  readonly #pool: UpstreamPool;
  #id = 0;

  constructor(upstreams: string[], timeoutMs?: number) {
    this.#pool = new UpstreamPool(upstreams, timeoutMs);
  }

  call<T>(method: string, params: unknown[] = []): Promise<T> {
    return this.#pool.use(method, async (url) => {
      const res = await this.#pool.fetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: ++this.#id, method, params }) });
      if (res.status !== 200) throw new ScanUpstreamError(`${method}: upstream answered HTTP ${res.status}`);
      const body = JSON.parse(res.text) as { result?: T; error?: { code: number; message: string } };
      if (body.error) throw new JsonRpcAnswerError(method, body.error.code, body.error.message);
      return body.result as T;
    });
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

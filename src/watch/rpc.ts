import { Agent, request } from 'undici';

export class RpcError extends Error {
  readonly code = 'E_UPSTREAM';
}

/**
 * A minimal JSON-RPC client for the scanners. It talks to the environment's upstreams
 * directly (not through the gateway: scanning is the service's own traffic, not a
 * merchant's) and moves to the next upstream when one fails.
 */
export class RpcClient {
  readonly #upstreams: string[];
  readonly #agent: Agent;
  readonly #timeoutMs: number;
  #current = 0;
  #id = 0;

  constructor(upstreams: string[], timeoutMs = 10_000) {
    if (upstreams.length === 0) throw new RpcError('the environment has no upstreams');
    this.#upstreams = upstreams;
    this.#timeoutMs = timeoutMs;
    this.#agent = new Agent({ keepAliveTimeout: 30_000, connections: 4 });
  }

  async call<T>(method: string, params: unknown[] = []): Promise<T> {
    let lastError: unknown;
    for (let i = 0; i < this.#upstreams.length; i++) {
      const url = this.#upstreams[(this.#current + i) % this.#upstreams.length]!;
      try {
        const result = await this.#post<T>(url, method, params);
        this.#current = (this.#current + i) % this.#upstreams.length;
        return result;
      } catch (err) {
        lastError = err;
      }
    }
    throw lastError instanceof RpcError ? lastError : new RpcError(`${method}: ${(lastError as Error)?.message ?? String(lastError)}`);
  }

  async #post<T>(url: string, method: string, params: unknown[]): Promise<T> {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++this.#id, method, params }),
      dispatcher: this.#agent,
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new RpcError(`${method}: upstream answered HTTP ${res.statusCode}`);
    const body = JSON.parse(text) as { result?: T; error?: { code: number; message: string } };
    if (body.error) throw new RpcError(`${method}: ${body.error.message} (${body.error.code})`);
    return body.result as T;
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}

import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackProxy {
  url: string;
  /** Requests received so far. */
  count: number;
  /** `method params-json` of each single call received; batch elements as `batch> method params-json`. */
  calls: string[];
  /** Delay before forwarding each request (a slow node). */
  delayMs: number;
  /** A failing node: `hang` takes the request and never answers, `fail503` answers 503 without forwarding. */
  fault: 'none' | 'hang' | 'fail503';
  close(): Promise<void>;
}

/**
 * A loopback HTTP proxy in front of one node: counts requests, can delay them, and when the
 * node is gone drops the client's connection the way a dead node would.
 */
export async function startProxy(target: string, delayMs = 0): Promise<LoopbackProxy> {
  const t = new URL(target);
  const state = { count: 0, delayMs, calls: [] as string[], fault: 'none' as LoopbackProxy['fault'] };
  const server: Server = createServer((req, res) => {
    state.count++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const v = JSON.parse(Buffer.concat(chunks).toString()) as { method?: string; params?: unknown };
        if (Array.isArray(v)) for (const e of v as Array<{ method?: string; params?: unknown }>) state.calls.push(`batch> ${e.method} ${JSON.stringify(e.params)}`);
        else state.calls.push(`${v.method} ${JSON.stringify(v.params)}`);
      } catch { state.calls.push('(not json)'); }
      if (state.fault === 'hang') return; // the socket stays open until the client gives up or close()
      if (state.fault === 'fail503') {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream unavailable');
        return;
      }
      setTimeout(() => {
        const up = httpRequest({ host: t.hostname, port: t.port, path: t.pathname, method: req.method, headers: { 'content-type': 'application/json' } }, (ur) => {
          res.writeHead(ur.statusCode ?? 502, { 'content-type': ur.headers['content-type'] ?? 'application/json' });
          ur.pipe(res);
        });
        up.on('error', () => res.destroy());
        up.end(Buffer.concat(chunks));
      }, state.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls: state.calls,
    get count() { return state.count; },
    set count(v: number) { state.count = v; },
    get delayMs() { return state.delayMs; },
    set delayMs(v: number) { state.delayMs = v; },
    get fault() { return state.fault; },
    set fault(v: LoopbackProxy['fault']) { state.fault = v; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

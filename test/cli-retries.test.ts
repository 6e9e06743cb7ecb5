import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { cli, tempConfigDir } from './helpers/cli.js';

/**
 * A scripted Public API: each request takes the next step ("429", "drop" = close the socket
 * without answering, "ok"), the last step repeating. Records the requests.
 */
async function scriptedApi(steps: string[]): Promise<{ base: string; requests: Array<{ method: string; url: string; at: number }> }> {
  const requests: Array<{ method: string; url: string; at: number }> = [];
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests.push({ method: req.method!, url: req.url!, at: Date.now() });
    const step = steps[Math.min(requests.length - 1, steps.length - 1)];
    req.resume();
    if (step === 'drop') return req.socket.destroy();
    if (step === '429') {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
      return res.end('{"ok":false,"error":"Rate limit exceeded"}');
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: true, user_id: 7, plan: null, usage: { period: '2026-01', requests: 0, credits_used: 0, credits_included: 0, credits_remaining: 0 }, endpoint: { id: 1, name: 'x', url: 'http://127.0.0.1:1/u', network_slug: 'eth', env_slug: 'mainnet' } }));
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

let server: Server | undefined;
afterEach(() => { server?.close(); server = undefined; });

const envFor = (base: string) => ({ PUBLIC_API_KEY: 'k', PUBLIC_API_SECRET: 's', PUBLIC_API_BASE: base, RPCCTL_CONFIG_DIR: tempConfigDir() });

describe('network retries', () => {
  it('429 is retried after Retry-After seconds', async () => {
    const api = await scriptedApi(['429', '429', 'ok']);
    const r = await cli(['account', '--json'], { env: envFor(api.base) });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).user_id).toBe(7);
    expect(api.requests).toHaveLength(3);
    expect(api.requests[1]!.at - api.requests[0]!.at).toBeGreaterThanOrEqual(950);
    expect(api.requests[2]!.at - api.requests[1]!.at).toBeGreaterThanOrEqual(950);
  });

  it('the retries are bounded: after 3 the 429 is reported (exit 1, the API text)', async () => {
    const api = await scriptedApi(['429']);
    const r = await cli(['api', 'GET', '/v1/account'], { env: envFor(api.base) });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`${'rate limited, retrying in 1 s\n'.repeat(3)}error: Rate limit exceeded (HTTP 429)\n`);
    expect(api.requests).toHaveLength(4);
  });

  it('a dropped connection is retried for GET', async () => {
    const api = await scriptedApi(['drop', 'ok']);
    const r = await cli(['account', '--json'], { env: envFor(api.base) });
    expect(r.code, r.stderr).toBe(0);
    expect(api.requests).toHaveLength(2);
  });

  it('but not for POST, which may have taken effect', async () => {
    const api = await scriptedApi(['drop', 'ok']);
    const r = await cli(['endpoints', 'create', '--name', 'x', '--environment-id', '1'], { env: envFor(api.base) });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: cannot reach http:\/\/127\.0\.0\.1:\d+: /);
    expect(api.requests.map((q) => q.method)).toEqual(['POST']);
  });

  it('endpoints create by slugs is one call: the API takes the slugs and checks the name', async () => {
    const api = await scriptedApi(['ok']);
    const r = await cli(['endpoints', 'create', '--name', 'x', '--network', 'eth', '--env', 'mainnet'], { env: envFor(api.base) });
    expect(r.code, r.stderr).toBe(0);
    expect(api.requests.map((q) => `${q.method} ${q.url}`)).toEqual(['POST /v1/endpoints']);
  });

  it('nothing listening: a clear error after the bounded retries', async () => {
    const closed = await scriptedApi(['ok']);
    server!.close();
    const r = await cli(['account'], { env: envFor(closed.base) });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: cannot reach ${closed.base}: connection refused (is \`rpcctl serve\` running?)\n`);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { signatureHeaders } from '../src/client/signing.js';
import { FakeEvm } from './helpers/fake-evm.js';
import { rawHttp } from './helpers/raw-http.js';
import { rawCall, startTestService, type Merchant, type TestService } from './helpers/service.js';

// Regression tests of the security review (issue 9): what reached upstreams, what was read
// before any check, what was stored.
let eth: FakeEvm;
let horizon: FakeEvm;
let t: TestService;
let m: Merchant;
let xlm: { id: number; uuid: string };
let evm: { id: number; uuid: string };

beforeAll(async () => {
  [eth, horizon] = await Promise.all([new FakeEvm().start(), new FakeEvm().start()]);
  horizon.respond = (req, res) => {
    res.writeHead(200, { 'content-type': 'application/hal+json' });
    res.end(JSON.stringify({ method: req.method, url: req.url }));
    return true;
  };
  t = await startTestService({
    api: { max_body_bytes: 4096, body_timeout_ms: 400, max_inflight_bytes_per_ip: 8192 },
    gateway: { probe_interval_ms: 60_000, max_body_bytes: 4096, body_timeout_ms: 400, max_inflight_bytes_per_ip: 8192 },
    networks: [
      { id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [eth.url] }], credits: { default: 20, methods: { eth_blockNumber: 10 } } },
      // The upstream's own path holds the provider key: nothing may climb out of it.
      { id: 7, slug: 'stellar', name: 'Stellar', family: 'stellar', environments: [{ id: 11, slug: 'mainnet', upstreams: [`${horizon.url}/provider-key-123`] }], credits: { default: 20, methods: {} } },
    ],
  });
  m = await t.merchant();
  xlm = (await m.call('POST', '/v1/endpoints', '{"name":"xlm","network_environment_id":11}')).body.endpoint;
  evm = (await m.call('POST', '/v1/endpoints', '{"name":"eth","network_environment_id":1}')).body.endpoint;
});
afterAll(async () => {
  await t.stop();
  await Promise.all([eth.stop(), horizon.stop()]);
});

const get = (base: string, target: string, extra = '') => rawHttp(base, `GET ${target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n${extra}\r\n`);

async function usage(id: number) {
  await t.service.gateway.meter.flush();
  return (await m.call('GET', `/v1/endpoints/${id}/usage?days=7`)).body.usage as { methods: Array<{ method: string; requests: number; credits: number }> };
}

describe('gateway REST paths', () => {
  it.each([
    '/..\\x', '/..%2f..%2fx', '/..%5cx', '/%2e%2e%5cx', '/%252e%252e/x', '/%252e%252e%252fx', '/..;/x', '/ledgers/..;/x',
    '/%2e%2e/x', '/a/%2E./x', '/ledgers%2f1', '/ledgers\\1', '/.%2e/x', '/%25252e%25252e/x', '/%EF%BC%8E%EF%BC%8E/x', '/%c0%ae%c0%ae/x',
  ])('%s: 400 invalid path, nothing forwarded', async (path) => {
    const before = horizon.seen.length;
    const r = await get(t.gatewayUrl, `/${xlm.uuid}${path}`);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'invalid path' }, id: null });
    expect(horizon.seen.length).toBe(before);
  });

  it('empty segments collapse: //transactions is forwarded and priced as /transactions', async () => {
    const r = await rawHttp(t.gatewayUrl, `POST /${xlm.uuid}//transactions HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: 3\r\nconnection: close\r\n\r\ntx=`);
    expect(r.status).toBe(200);
    expect(horizon.seen.at(-1)!.url).toBe('/provider-key-123/transactions');
    const row = (await usage(xlm.id)).methods.find((x) => x.method === 'POST /transactions');
    expect(row).toEqual({ method: 'POST /transactions', requests: 1, credits: 150 });
    const g = await get(t.gatewayUrl, `/${xlm.uuid}//ledgers///1/?limit=2`);
    expect(g.status).toBe(200);
    expect(horizon.seen.at(-1)!.url).toBe('/provider-key-123/ledgers/1/?limit=2');
  });
});

describe('input hygiene on both listeners', () => {
  it('gateway /health says ok and nothing else', async () => {
    const r = await request(`${t.gatewayUrl}/health`);
    expect(await r.body.json()).toEqual({ ok: true });
  });

  it('two Host headers: 400 on both listeners', async () => {
    const g = await get(t.gatewayUrl, `/${xlm.uuid}/ledgers`, 'host: other\r\n');
    expect(g.status).toBe(400);
    const a = await get(t.baseUrl, '/v1/account', 'host: other\r\n');
    expect(a.status).toBe(400);
    expect(JSON.parse(a.body)).toEqual({ ok: false, error: 'More than one Host header' });
    // The cabinet's pages sit behind the same listener guards as the API.
    const page = await get(t.baseUrl, '/login', 'host: other\r\n');
    expect(page.status).toBe(400);
  });

  it('oversized headers: 431 on both listeners, in each one\'s body format', async () => {
    const big = `x-big: ${'a'.repeat(20_000)}\r\n`;
    const g = await get(t.gatewayUrl, `/${xlm.uuid}/ledgers`, big);
    expect(g.status).toBe(431);
    expect(JSON.parse(g.body).error.code).toBe(-32600);
    const a = await get(t.baseUrl, '/v1/account', big);
    expect(a.status).toBe(431);
    expect(JSON.parse(a.body)).toEqual({ ok: false, error: 'Request headers too large' });
  });

  it('HEAD on a GET route of the API: the GET answer without a body', async () => {
    const path = '/v1/account';
    const headers = signatureHeaders({ apiKey: m.apiKey, secret: m.secret, method: 'HEAD', path, body: '' });
    const r = await request(t.baseUrl + path, { method: 'HEAD', headers });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toContain('application/json');
    expect(Number(r.headers['content-length'])).toBeGreaterThan(10);
    expect(await r.body.text()).toBe('');
    expect((await request(`${t.baseUrl}/v1/openapi.json`, { method: 'HEAD' })).statusCode).toBe(200);
  });

  it('invalid UTF-8 and lone surrogates in JSON strings: 400 naming the field, nothing stored', async () => {
    const path = '/v1/endpoints';
    const bytes = Buffer.concat([Buffer.from('{"name":"ab'), Buffer.from([0xff, 0xfe]), Buffer.from('","network_environment_id":1}')]);
    const headers = { ...signatureHeaders({ apiKey: m.apiKey, secret: m.secret, method: 'POST', path, body: bytes as unknown as string }), 'content-type': 'application/json' };
    const r = await request(t.baseUrl + path, { method: 'POST', headers, body: bytes });
    expect(r.statusCode).toBe(400);
    expect(await r.body.json()).toEqual({ ok: false, error: 'name: not valid UTF-8' });
    const lone = await m.call('POST', path, '{"name":"x\\ud800y","network_environment_id":1}');
    expect(lone).toMatchObject({ status: 400, body: { ok: false, error: 'name: not valid Unicode (lone surrogate)' } });
    const names = (await m.call('GET', path)).body.endpoints.map((e: { name: string }) => e.name);
    expect(names).toEqual(['xlm', 'eth']);
  });

  it('webhook URLs with control characters: 400, not stored', async () => {
    for (const url of ['https://example.com/a\r\nX-Injected: 1', 'https://example.com/\tpath', 'https://exa\nmple.com/']) {
      const r = await m.call('PUT', '/v1/address-watch/webhook', JSON.stringify({ url, enabled: true }));
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(/^url: must not contain control characters/);
    }
    expect((await m.call('GET', '/v1/address-watch/webhook')).body.url).toBeNull();
  });

  it('SSRF: special-purpose IPv6 and IPv4 literals are refused', async () => {
    for (const host of ['[2001::1]', '[2001:0:4136:e378:8000:63bf:3fff:fdd2]', '[fec0::1]', '[100::1]', '[2001:2::1]', '[3fff::1]', '192.88.99.1']) {
      const r = await m.call('PUT', '/v1/address-watch/webhook', JSON.stringify({ url: `https://${host}/hook`, enabled: true }));
      expect(r.status, host).toBe(400);
      expect(r.body.error, host).toMatch(/^url: /);
    }
  });
});

describe('bodies: checked before they are read, capped while they are', () => {
  it('API: no key, a bad timestamp or an unknown key are refused before the body arrives', async () => {
    const head = (extra: string) => `POST /v1/endpoints HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 4000\r\n${extra}\r\n`;
    // The body is never sent: only an answer given without it can arrive.
    expect((await rawHttp(t.baseUrl, head(''), 3000)).status).toBe(401);
    expect(JSON.parse((await rawHttp(t.baseUrl, head(`x-api-key: ${m.apiKey}\r\nx-timestamp: 5\r\nx-signature: ab\r\n`), 3000)).body).error).toBe('Missing or invalid X-Timestamp');
    const now = Math.floor(Date.now() / 1000);
    expect(JSON.parse((await rawHttp(t.baseUrl, head(`x-api-key: 00000000-0000-4000-8000-000000000000\r\nx-timestamp: ${now}\r\nx-signature: ab\r\n`), 3000)).body).error).toBe('Invalid API key');
    // A declared length over the limit: 413 at once.
    expect((await rawHttp(t.baseUrl, 'POST /v1/endpoints HTTP/1.1\r\nhost: x\r\ncontent-length: 999999\r\n\r\n', 3000)).status).toBe(413);
  });

  it('gateway: a refusal does not wait for a large body it would only read for the id', async () => {
    // Body never sent: only an answer given without it can arrive.
    const r = await rawHttp(t.gatewayUrl, 'POST /00000000-0000-4000-8000-000000000000 HTTP/1.1\r\nhost: x\r\ncontent-length: 100000\r\n\r\n', 3000);
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body)).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'endpoint not found' }, id: null });
  });

  it('a body slower than body_timeout_ms: 408 on both listeners', async () => {
    const now = Math.floor(Date.now() / 1000);
    const api = await rawHttp(t.baseUrl, `POST /v1/endpoints HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\nx-api-key: ${m.apiKey}\r\nx-timestamp: ${now}\r\nx-signature: ab\r\n\r\n{"na`, 5000);
    expect(api.status).toBe(408);
    const gw = await rawHttp(t.gatewayUrl, `POST /${evm.uuid} HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{"jsonrpc"`, 5000);
    expect(gw.status).toBe(408);
  });

  it('bytes in flight per client address are capped: 429 on both listeners', async () => {
    const { request: httpRequest } = await import('node:http');
    // Two stalled 4000-byte bodies hold the client's 8 KiB.
    const stall = (base: string, path: string, headers: Record<string, string | number>) => {
      const u = new URL(base);
      const req = httpRequest({ host: u.hostname, port: u.port, path, method: 'POST', headers: { 'content-length': 4000, ...headers } });
      req.on('error', () => {});
      req.on('response', (res) => res.resume());
      req.write('{');
      return req;
    };
    const gwStalled = [stall(t.gatewayUrl, `/${evm.uuid}`, {}), stall(t.gatewayUrl, `/${evm.uuid}`, {})];
    await new Promise((r) => setTimeout(r, 100));
    const gw = await rawHttp(t.gatewayUrl, `POST /${evm.uuid} HTTP/1.1\r\nhost: x\r\ncontent-length: 3000\r\nconnection: close\r\n\r\n`, 3000);
    expect(gw.status).toBe(429);
    expect(JSON.parse(gw.body)).toEqual({ jsonrpc: '2.0', error: { code: -32005, message: 'too many request bytes in flight' }, id: null });
    for (const r of gwStalled) r.destroy();

    const now = Math.floor(Date.now() / 1000);
    const auth = { 'x-api-key': m.apiKey, 'x-timestamp': now, 'x-signature': 'ab' };
    const apiStalled = [stall(t.baseUrl, '/v1/endpoints', auth), stall(t.baseUrl, '/v1/endpoints', auth)];
    await new Promise((r) => setTimeout(r, 100));
    const api = await rawHttp(t.baseUrl, `POST /v1/endpoints HTTP/1.1\r\nhost: x\r\ncontent-length: 3000\r\nx-api-key: ${m.apiKey}\r\nx-timestamp: ${now}\r\nx-signature: ab\r\nconnection: close\r\n\r\n`, 3000);
    expect(api.status).toBe(429);
    expect(JSON.parse(api.body)).toEqual({ ok: false, error: 'Rate limit exceeded' });
    for (const r of apiStalled) r.destroy();
    // Released once those requests are over: the next one is read again.
    await new Promise((r) => setTimeout(r, 200));
    expect((await m.call('GET', '/v1/account')).status).toBe(200);
  });
});

describe('replay of signed requests', () => {
  it('a mutating signature is good once within the window; GETs stay replayable', async () => {
    const path = `/v1/endpoints/${evm.id}/status`;
    const pause = '{"status":"paused"}';
    const headers = { ...signatureHeaders({ apiKey: m.apiKey, secret: m.secret, method: 'PATCH', path, body: pause }), 'content-type': 'application/json' };
    expect((await rawCall(t.baseUrl, 'PATCH', path, pause, headers)).status).toBe(200);
    await m.client.request('PATCH', path, { body: { status: 'active' } });
    // The captured "paused" request again: refused, the endpoint stays active.
    const replay = await rawCall(t.baseUrl, 'PATCH', path, pause, headers);
    expect(replay).toMatchObject({ status: 401, body: { ok: false, error: 'Invalid signature.' } });
    const list = (await m.call('GET', '/v1/endpoints')).body.endpoints as Array<{ id: number; status: string }>;
    expect(list.find((e) => e.id === evm.id)!.status).toBe('active');
    const g = signatureHeaders({ apiKey: m.apiKey, secret: m.secret, method: 'GET', path: '/v1/account', body: '' });
    expect((await rawCall(t.baseUrl, 'GET', '/v1/account', '', g)).status).toBe(200);
    expect((await rawCall(t.baseUrl, 'GET', '/v1/account', '', g)).status).toBe(200);
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { FakeEvm } from './helpers/fake-evm.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

let t: TestService;
let eth: FakeEvm;
let polyA: FakeEvm;
let polyB: FakeEvm;
let m: Merchant;

const RPS_BODY = '{"jsonrpc":"2.0","error":{"code":-32005,"message":"rps limit exceeded"},"id":null}';

beforeAll(async () => {
  [eth, polyA, polyB] = await Promise.all([new FakeEvm().start(), new FakeEvm().start(), new FakeEvm().start()]);
  t = await startTestService({
    // The failover case's hung upstream costs one timeout, and the other upstream then has the
    // rest of the call's deadline (2.5 timeouts): 300 ms left 450 ms, which a loaded machine's
    // fake node overran (504).
    gateway: { rpc_domain: 'localhost:8545', max_body_bytes: 4096, max_batch: 10, upstream_timeout_ms: 1500, probe_interval_ms: 60_000 },
    // On PostgreSQL + Redis the RPS counts below are Redis's: a loaded machine's slow round trip
    // must not hand a decision to the instance's memory window, which knows nothing of Redis's.
    redis: { decision_timeout_ms: 5_000 },
    networks: [
      { id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [eth.url] }],
        credits: { default: 20, methods: { eth_blockNumber: 10, eth_call: 26 } } },
      { id: 2, slug: 'polygon', name: 'Polygon', environments: [{ id: 2, slug: 'mainnet', upstreams: [polyA.url, polyB.url] }] },
    ],
    plans: [
      { id: 1, slug: 'small', name: 'Small', included_credits: 1000, rps_limit: 5, endpoints_limit: 10, network_limit: null },
      { id: 2, slug: 'big', name: 'Big', included_credits: 1000, rps_limit: 10_000, endpoints_limit: 1000, network_limit: null },
    ],
  });
  m = await t.merchant({ plan: 'big' });
});
afterAll(async () => {
  await t.stop();
  await Promise.all([eth.stop(), polyA.stop(), polyB.stop()]);
});
beforeEach(() => {
  for (const u of [eth, polyA, polyB]) { u.behaviour = 'ok'; u.respond = undefined; }
});

let made = 0;
/** A new endpoint; its name is new in the account (names are unique within one, 409 otherwise). */
async function endpoint(merchant: Merchant, envId: number) {
  const r = await merchant.call('POST', '/v1/endpoints', JSON.stringify({ name: `e${envId}-${++made}`, network_environment_id: envId }));
  expect(r.status).toBe(200);
  return r.body.endpoint as { id: number; uuid: string; url: string };
}

async function rpc(uuid: string, body: string, headers: Record<string, string> = {}, path = `/${uuid}`) {
  const res = await request(t.gatewayUrl + path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

async function usageOf(merchant: Merchant, id: number) {
  await t.service.gateway.meter.flush();
  return (await merchant.call('GET', `/v1/endpoints/${id}/usage?days=7`)).body.usage as { total_requests: number; total_credits: number; methods: Array<{ method: string; requests: number; credits: number }> };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Until the clock has passed into the next Unix second (an RPS window's edge), plus 10 ms. */
async function nextSecond() {
  await pause(1000 - (Date.now() % 1000) + 10);
}

/**
 * `burst` against a fresh endpoint (`prepare`), begun at the start of a Unix second, so that the
 * counts it checks are one RPS window's. On a loaded machine a burst can run past the second's
 * end, spreading over two windows: then it runs again, on a new endpoint, in a later second.
 */
async function inOneSecond<P, T>(prepare: () => Promise<P>, burst: (p: P) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const p = await prepare();
    await nextSecond();
    const second = Math.floor(Date.now() / 1000);
    const result = await burst(p);
    if (Math.floor(Date.now() / 1000) === second) return result;
    if (attempt === 10) throw new Error('10 bursts in a row ran past the end of their second');
  }
}

describe('routing and forwarding', () => {
  it('forwards a JSON-RPC call and returns the upstream answer unchanged', async () => {
    const e = await endpoint(m, 1);
    eth.respond = (_req, res) => { res.writeHead(200, { 'content-type': 'application/json; charset=x-test' }); res.end('{"jsonrpc":"2.0","id":7,"result":"0xabc"}  '); return true; };
    const r = await rpc(e.uuid, '{"jsonrpc":"2.0","id":7,"method":"eth_chainId","params":[]}');
    expect(r.status).toBe(200);
    expect(r.text).toBe('{"jsonrpc":"2.0","id":7,"result":"0xabc"}  ');
    expect(r.headers['content-type']).toBe('application/json; charset=x-test');
  });

  it('passes the upstream status through (a 4xx answer stays a 4xx)', async () => {
    const e = await endpoint(m, 1);
    eth.respond = (_req, res) => { res.writeHead(418, { 'content-type': 'application/json' }); res.end('{"teapot":true}'); return true; };
    const r = await rpc(e.uuid, '{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[]}');
    expect(r).toMatchObject({ status: 418, text: '{"teapot":true}' });
  });

  it('never forwards the Public API signature headers', async () => {
    const e = await endpoint(m, 1);
    const before = eth.seen.length;
    await rpc(e.uuid, '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}', { 'x-api-key': 'k', 'x-signature': 's', 'x-timestamp': '1', authorization: 'Bearer x', cookie: 'a=b' });
    const seen = eth.seen[before]!;
    expect(seen.headers).not.toHaveProperty('x-api-key');
    expect(seen.headers).not.toHaveProperty('x-signature');
    expect(seen.headers).not.toHaveProperty('x-timestamp');
    expect(seen.headers).not.toHaveProperty('authorization');
    expect(seen.headers).not.toHaveProperty('cookie');
    expect(seen.body).toBe('{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}');
  });

  it('routes on the UUID; a Host of the endpoint URL form must match its network and env', async () => {
    const e = await endpoint(m, 1);
    const body = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}';
    expect((await rpc(e.uuid, body, { host: 'rpc-eth-mainnet.localhost:8545' })).status).toBe(200);
    expect((await rpc(e.uuid, body, { host: 'RPC-ETH-MAINNET.localhost' })).status).toBe(200);
    // Host names are case-insensitive: an upper-case wrong name is still wrong.
    expect((await rpc(e.uuid, body, { host: 'RPC-POLYGON-MAINNET.localhost' })).status).toBe(404);
    expect((await rpc(e.uuid, body, { host: 'gateway.internal' })).status).toBe(200);
    const wrong = await rpc(e.uuid, body, { host: 'rpc-polygon-mainnet.localhost:8545' });
    expect(wrong.status).toBe(404);
    expect(JSON.parse(wrong.text)).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'endpoint not found' }, id: 1 });
    // The URL the API hands out has exactly this form.
    expect(e.url).toBe(`http://rpc-eth-mainnet.localhost:8545/${e.uuid}`);
  });

  it('unknown UUIDs and paths are 404; GET on a JSON-RPC endpoint is 405', async () => {
    const e = await endpoint(m, 1);
    expect((await rpc('00000000-0000-4000-8000-000000000000', '{}')).status).toBe(404);
    expect((await rpc(e.uuid, '{}', {}, '/')).status).toBe(404);
    expect((await rpc(e.uuid, '{}', {}, `/${e.uuid}x`)).status).toBe(404);
    expect((await rpc(e.uuid, '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}', {}, `/${e.uuid}/`)).status).toBe(200);
    const get = await request(`${t.gatewayUrl}/${e.uuid}`);
    expect(get.statusCode).toBe(405);
    await get.body.dump();
  });
});

describe('JSON-RPC validity', () => {
  it('parse error: 400, -32700, id null; invalid request: -32600; neither is metered', async () => {
    const e = await endpoint(m, 1);
    const before = eth.seen.length;
    const parse = await rpc(e.uuid, '{"jsonrpc":');
    expect(parse.status).toBe(400);
    expect(JSON.parse(parse.text)).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'parse error' }, id: null });
    for (const body of ['"hello"', '42', '{"jsonrpc":"2.0","id":1}', '[]', '{"method":5}']) {
      const r = await rpc(e.uuid, body);
      expect(r.status).toBe(400);
      expect(JSON.parse(r.text).error.code).toBe(-32600);
    }
    const withId = await rpc(e.uuid, '{"jsonrpc":"2.0","id":9,"params":[]}');
    expect(JSON.parse(withId.text)).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'invalid request' }, id: 9 });
    expect(eth.seen.length).toBe(before);
    expect((await usageOf(m, e.id)).total_requests).toBe(0);
  });

  it('over-large bodies: 413; over-large batches: 400', async () => {
    const e = await endpoint(m, 1);
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_call', params: ['x'.repeat(5000)] });
    const r = await rpc(e.uuid, big);
    expect(r.status).toBe(413);
    expect(JSON.parse(r.text).error.message).toBe('request body too large');
    const batch = JSON.stringify(Array.from({ length: 11 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_blockNumber' })));
    const b = await rpc(e.uuid, batch);
    expect(b.status).toBe(400);
    expect(JSON.parse(b.text).error.message).toBe('batch too large');
  });
});

describe('metering', () => {
  it('credits per method from the network table, default otherwise; a batch counts each element', async () => {
    const e = await endpoint(m, 1);
    await rpc(e.uuid, '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}');
    await rpc(e.uuid, '{"jsonrpc":"2.0","id":2,"method":"eth_call","params":[]}');
    const batch = await rpc(e.uuid, JSON.stringify([
      { jsonrpc: '2.0', id: 3, method: 'eth_call' }, { jsonrpc: '2.0', id: 4, method: 'eth_getBalance' }, { jsonrpc: '2.0', id: 5, method: 'eth_call' },
    ]));
    expect(JSON.parse(batch.text)).toHaveLength(3);
    const usage = await usageOf(m, e.id);
    expect(usage.total_requests).toBe(5);
    expect(usage.total_credits).toBe(10 + 26 * 3 + 20);
    expect(usage.methods).toEqual([
      { method: 'eth_call', requests: 3, credits: 78 },
      // Equal requests: more credits first.
      { method: 'eth_getBalance', requests: 1, credits: 20 },
      { method: 'eth_blockNumber', requests: 1, credits: 10 },
    ]);
    const account = (await m.call('GET', '/v1/account')).body;
    expect(account.usage.requests).toBeGreaterThanOrEqual(5);
  });

  it('method names that are Object.prototype members are priced at the default and do not stop metering', async () => {
    const e = await endpoint(m, 1);
    for (const method of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect((await rpc(e.uuid, JSON.stringify({ jsonrpc: '2.0', id: 1, method }))).status).toBe(200);
    }
    await rpc(e.uuid, '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}');
    const usage = await usageOf(m, e.id);
    expect(usage.total_requests).toBe(5);
    expect(usage.total_credits).toBe(4 * 20 + 10);
    // Later calls still reach the store.
    await rpc(e.uuid, '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}');
    expect((await usageOf(m, e.id)).total_requests).toBe(6);
  });

  it('made-up method names are counted as "other", so clients cannot grow the usage tables', async () => {
    const e = await endpoint(m, 1);
    for (let i = 0; i < 5; i++) await rpc(e.uuid, JSON.stringify({ jsonrpc: '2.0', id: i, method: `x${'y'.repeat(100)}${i}` }));
    await rpc(e.uuid, '{"jsonrpc":"2.0","id":1,"method":"eth_getProof"}');
    const usage = await usageOf(m, e.id);
    expect(usage.methods).toEqual([
      { method: 'other', requests: 5, credits: 100 },
      { method: 'eth_getProof', requests: 1, credits: 20 },
    ]);
  });

  it('a batch with invalid elements forwards the valid ones and answers for all', async () => {
    const e = await endpoint(m, 1);
    const r = await rpc(e.uuid, JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' }, { jsonrpc: '2.0', id: 2 }, 7]));
    const answers = JSON.parse(r.text) as Array<{ id: unknown; result?: unknown; error?: { code: number } }>;
    expect(answers).toHaveLength(3);
    expect(answers.find((a) => a.id === 1)!.result).toBe('0x1234');
    expect(answers.find((a) => a.id === 2)!.error!.code).toBe(-32600);
    expect(answers.filter((a) => a.id === null)[0]!.error!.code).toBe(-32600);
    expect((await usageOf(m, e.id)).total_requests).toBe(1);
  });

  it('usage flushes on its own, without a flush asked for', async () => {
    const e = await endpoint(m, 1);
    await rpc(e.uuid, '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}');
    // Read through the API only: usageOf would flush. The flush is due every 250 ms.
    const total = async () => (await m.call('GET', `/v1/endpoints/${e.id}/usage?days=7`)).body.usage.total_requests as number;
    const deadline = Date.now() + 15_000;
    while (await total() === 0 && Date.now() < deadline) await pause(50);
    expect(await total()).toBe(1);
  });
});

describe('limits and access', () => {
  it('RPS: a fixed window per Unix second; the exact 429 body; rejected calls cost nothing', async () => {
    const small = await t.merchant({ plan: 'small' });
    const call = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}';
    const { e, results } = await inOneSecond(() => endpoint(small, 1), async (e) => ({ e, results: await Promise.all(Array.from({ length: 7 }, () => rpc(e.uuid, call))) }));
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    const limited = results.filter((r) => r.status === 429);
    expect(limited).toHaveLength(2);
    expect(limited[0]!.text).toBe(RPS_BODY);
    await nextSecond();
    expect((await rpc(e.uuid, call)).status).toBe(200);
    const usage = await usageOf(small, e.id);
    expect(usage.total_requests).toBe(6);
  });

  it('RPS: a batch counts each element; what does not fit is answered in place with -32005 and its id', async () => {
    const small = await t.merchant({ plan: 'small' });
    const batch = (n: number, from = 0) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: from + i, method: 'eth_blockNumber' })));
    const { e, first, partial, none, single } = await inOneSecond(() => endpoint(small, 1), async (e) => ({
      e,
      first: await rpc(e.uuid, batch(3)),
      partial: await rpc(e.uuid, batch(3, 10)),
      none: await rpc(e.uuid, batch(2, 20)),
      single: await rpc(e.uuid, '{"jsonrpc":"2.0","id":7,"method":"eth_blockNumber"}'),
    }));
    expect(first.status).toBe(200);
    // Two of three fit what is left of the window (5): one array, HTTP 200.
    expect(partial.status).toBe(200);
    const answers = (JSON.parse(partial.text) as Array<{ id: number; result?: string; error?: { code: number; message: string } }>).sort((a, b) => a.id - b.id);
    expect(answers.map((a) => a.id)).toEqual([10, 11, 12]);
    expect(answers.slice(0, 2).every((a) => a.result === '0x1234')).toBe(true);
    expect(answers[2]).toEqual({ jsonrpc: '2.0', id: 12, error: { code: -32005, message: 'rps limit exceeded' } });
    // Nothing fits: 429, every element answered with its id.
    expect(none.status).toBe(429);
    expect(JSON.parse(none.text)).toEqual([20, 21].map((id) => ({ jsonrpc: '2.0', id, error: { code: -32005, message: 'rps limit exceeded' } })));
    // A single call keeps the spec's exact body.
    expect(single.status).toBe(429);
    expect(single.text).toBe(RPS_BODY);
    // Only the admitted elements were metered.
    expect((await usageOf(small, e.id)).total_requests).toBe(5);
  });

  it('RPS: a batch larger than rps_limit still gets its first elements through', async () => {
    const small = await t.merchant({ plan: 'small' });
    const e = await endpoint(small, 1);
    // One decision: within one window whenever it is taken.
    const r = await rpc(e.uuid, JSON.stringify(Array.from({ length: 8 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_blockNumber' }))));
    expect(r.status).toBe(200);
    const answers = JSON.parse(r.text) as Array<{ result?: string; error?: { code: number } }>;
    expect(answers).toHaveLength(8);
    expect(answers.filter((a) => a.result).length).toBe(5);
    expect(answers.filter((a) => a.error?.code === -32005).length).toBe(3);
  });

  it('RPS: a request that was reading its body during a refresh counts against the same window', async () => {
    const small = await t.merchant({ plan: 'small' });
    const call = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}';
    const { request: httpRequest } = await import('node:http');
    const { all, more } = await inOneSecond(() => endpoint(small, 1), async (e) => {
      // Three calls start sending and stall halfway through their bodies. The gateway's 100 Continue
      // says it has their headers: it answers it as it hands the request on, which looks up the
      // endpoint before reading any body.
      const url = new URL(`${t.gatewayUrl}/${e.uuid}`);
      const slow = Array.from({ length: 3 }, () => {
        const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': call.length, expect: '100-continue' } });
        req.flushHeaders();
        const held = new Promise<void>((resolve) => req.once('continue', () => { req.write(call.slice(0, 10)); resolve(); }));
        const done = new Promise<number>((resolve, reject) => { req.on('response', (res) => { res.resume(); resolve(res.statusCode!); }); req.on('error', reject); });
        return { req, held, done };
      });
      await Promise.all(slow.map((s) => s.held));
      // A change through the API refreshes the endpoint while they wait.
      await small.call('PATCH', `/v1/endpoints/${e.id}/allowed-ips`, '{"allowed_ips":[]}');
      const fresh = await Promise.all([rpc(e.uuid, call), rpc(e.uuid, call)]);
      for (const s of slow) s.req.end(call.slice(10));
      const slowStatuses = await Promise.all(slow.map((s) => s.done));
      return { all: [...fresh.map((r) => r.status), ...slowStatuses], more: await rpc(e.uuid, call) };
    });
    expect(all.filter((s) => s === 200)).toHaveLength(5);
    expect(all.filter((s) => s === 429)).toHaveLength(0);
    expect(more.status).toBe(429);
  });

  it('pause and resume through the Public API apply at once', async () => {
    const e = await endpoint(m, 1);
    const call = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}';
    await m.call('PATCH', `/v1/endpoints/${e.id}/status`, '{"status":"paused"}');
    const paused = await rpc(e.uuid, call);
    expect(paused.status).toBe(403);
    expect(JSON.parse(paused.text)).toEqual({ jsonrpc: '2.0', error: { code: -32002, message: 'endpoint paused' }, id: 1 });
    await m.call('PATCH', `/v1/endpoints/${e.id}/status`, '{"status":"active"}');
    expect((await rpc(e.uuid, call)).status).toBe(200);
    expect((await usageOf(m, e.id)).total_requests).toBe(1);
  });

  it('IP allowlist: 403 with a JSON-RPC error for others, allowed for listed addresses', async () => {
    const e = await endpoint(m, 1);
    const call = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}';
    await m.call('PATCH', `/v1/endpoints/${e.id}/allowed-ips`, '{"allowed_ips":["203.0.113.9","2001:db8::1"]}');
    const denied = await rpc(e.uuid, call);
    expect(denied.status).toBe(403);
    expect(JSON.parse(denied.text)).toEqual({ jsonrpc: '2.0', error: { code: -32012, message: 'ip address not allowed' }, id: 1 });
    await m.call('PATCH', `/v1/endpoints/${e.id}/allowed-ips`, '{"allowed_ips":["2001:db8::1","127.0.0.1"]}');
    expect((await rpc(e.uuid, call)).status).toBe(200);
    // IPv4-mapped IPv6 in the list matches the IPv4 client.
    await m.call('PATCH', `/v1/endpoints/${e.id}/allowed-ips`, '{"allowed_ips":["::ffff:127.0.0.1"]}');
    expect((await rpc(e.uuid, call)).status).toBe(200);
    await m.call('PATCH', `/v1/endpoints/${e.id}/allowed-ips`, '{"allowed_ips":[]}');
    expect((await rpc(e.uuid, call)).status).toBe(200);
    expect((await usageOf(m, e.id)).total_requests).toBe(3);
  });
});

describe('upstreams', () => {
  it('fails over on 5xx, connection drops and timeouts, then skips the dead upstream', async () => {
    const e = await endpoint(m, 2);
    // Its own id: polyA's probe calls (the same method) are not counted as this test's.
    const call = '{"jsonrpc":"2.0","id":"failover","method":"eth_blockNumber"}';
    const tried = () => polyA.seen.filter((s) => s.body === call).length;
    for (const behaviour of ['fail500', 'reset', 'hang'] as const) {
      polyA.behaviour = behaviour;
      const before = tried();
      // polyA is the first choice once the back-off from the round before has passed (1 s, 2 s:
      // each failed round doubles it): until then calls go straight to polyB. Every call is
      // answered either way; the one that reaches polyA fails there and moves on.
      const deadline = Date.now() + 20_000;
      for (;;) {
        const r = await rpc(e.uuid, call);
        expect(r.status, behaviour).toBe(200);
        expect(JSON.parse(r.text).result).toBe('0x1234');
        if (tried() > before || Date.now() > deadline) break;
        await pause(50);
      }
      expect(tried() - before, behaviour).toBe(1);
      // Marked down: the next call goes straight to the healthy one.
      const again = await rpc(e.uuid, call);
      expect(again.status).toBe(200);
      expect(tried() - before, behaviour).toBe(1);
      polyA.behaviour = 'ok';
    }
  });

  it('all upstreams failing: 502 or 504 with a JSON-RPC error, never a hang, and no charge', async () => {
    const e = await endpoint(m, 2);
    const call = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}';
    polyA.behaviour = 'fail500';
    polyB.behaviour = 'fail500';
    const failed = await rpc(e.uuid, call);
    expect(failed.status).toBe(502);
    expect(JSON.parse(failed.text)).toEqual({ jsonrpc: '2.0', error: { code: -32010, message: 'upstream failed' }, id: null });
    polyA.behaviour = 'hang';
    polyB.behaviour = 'hang';
    const timedOut = await rpc(e.uuid, call);
    expect(timedOut.status).toBe(504);
    expect(JSON.parse(timedOut.text).error.message).toBe('upstream timed out');
    expect((await usageOf(m, e.id)).total_requests).toBe(0);
  });
});

describe('node probe', () => {
  it('fills version and block_height of endpoints from their node', async () => {
    const e = await endpoint(m, 1);
    eth.blockNumber = 0x99;
    await t.service.gateway.probe.probeAll();
    const got = (await m.call('GET', `/v1/endpoints/${e.id}`)).body.endpoint;
    expect(got.version).toBe('FakeNode/v1.0.0');
    expect(got.block_height).toBe(0x99);
  });
});

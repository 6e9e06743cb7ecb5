import { afterAll, beforeAll, expect, it } from 'vitest';
import { request } from 'undici';
import { FakeEvm } from './helpers/fake-evm.js';
import { startTestService, type TestService } from './helpers/service.js';

let limited: FakeEvm;
let other: FakeEvm;
let t: TestService;
let url: string;

beforeAll(async () => {
  [limited, other] = await Promise.all([new FakeEvm().start(), new FakeEvm().start()]);
  // The provider's own rate limit, as hosted nodes answer it.
  limited.respond = (_req, res) => { res.writeHead(429, { 'content-type': 'application/json' }); res.end('{"error":"rate limited"}'); return true; };
  t = await startTestService({
    networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'main', upstreams: [limited.url, other.url] }] }],
    gateway: { probe_interval_ms: 60_000 },
  });
  const m = await t.merchant();
  const e = (await m.call('POST', '/v1/endpoints', '{"name":"p","network_environment_id":1}')).body.endpoint;
  url = `${t.gatewayUrl}/${e.uuid}`;
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await Promise.all([limited?.stop(), other?.stop()]);
});

it('a provider answering 429 is failed over and ranked down, not relayed to the client', async () => {
  for (let i = 0; i < 5; i++) {
    const r = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"jsonrpc":"2.0","id":${i},"method":"eth_blockNumber"}` });
    expect(r.statusCode).toBe(200);
    expect(await r.body.json()).toEqual({ jsonrpc: '2.0', id: i, result: '0x1234' });
  }
  // Upstream state lives in the gateway's workers and reaches the main thread's view on their next push.
  await expect.poll(() => t.service.gateway.upstreams.snapshot().get(1)![0], { timeout: 5000 })
    .toMatchObject({ status: 'down', last_error: 'HTTP 429' });
  // Tried once (and by the probe, perhaps), then left alone while backed off.
  expect(limited.seen.filter((s) => !s.body.startsWith('[')).length).toBe(1);
});

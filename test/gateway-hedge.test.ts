import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { startProxy, type LoopbackProxy } from './helpers/proxy.js';
import { startTestService, type TestService } from './helpers/service.js';

// One anvil node reached through two proxies: `primary` (fast) and `second` (20 ms slower),
// with hedging at the 0.9 latency quantile.
let anvil: Anvil;
let primary: LoopbackProxy;
let second: LoopbackProxy;
let t: TestService;
let url: string;

async function call(method: string, id = 1): Promise<{ ms: number; body: any }> {
  const t0 = performance.now();
  const r = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id, method, params: [] }) });
  const body = await r.body.json();
  return { ms: performance.now() - t0, body };
}

beforeAll(async () => {
  anvil = await startAnvil();
  [primary, second] = await Promise.all([startProxy(anvil.url), startProxy(anvil.url, 20)]);
  t = await startTestService({
    networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'anvil', upstreams: [second.url, primary.url] }] }],
    gateway: { probe_interval_ms: 60_000, hedge_quantile: 0.9 },
  });
  const m = await t.merchant();
  const e = (await m.call('POST', '/v1/endpoints', '{"name":"hedge","network_environment_id":1}')).body.endpoint;
  url = `${t.gatewayUrl}/${e.uuid}`;
  // Enough answers from both for latencies and the quantile.
  for (let i = 0; i < 30; i++) await call('eth_blockNumber');
  // Until the gateway ranks the primary first: on a loaded machine the second's 20 ms can hide
  // in the noise for a while, and the hedge below starts from the best upstream.
  const deadline = Date.now() + 30_000;
  for (let inARow = 0; inARow < 5;) {
    if (Date.now() > deadline) throw new Error('the gateway never ranked the faster upstream first');
    const p = primary.count;
    await call('eth_blockNumber');
    inARow = primary.count > p ? inARow + 1 : 0;
  }
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await Promise.all([primary?.close(), second?.close()]);
  await anvil?.stop();
});

describe('hedged reads', () => {
  it('sends a read that the best upstream is slow to answer to the next one too, and answers with the first', async () => {
    primary.delayMs = 3000;
    const before = { p: primary.count, s: second.count };
    const r = await call('eth_blockNumber', 42);
    expect(r.body).toMatchObject({ id: 42, result: expect.stringMatching(/^0x/) });
    // Answered by the second upstream long before the primary's 3 s.
    expect(r.ms).toBeLessThan(2000);
    expect(primary.count - before.p).toBe(1);
    expect(second.count - before.s).toBe(1);
    primary.delayMs = 0;
  });

  it('never hedges a transaction send', async () => {
    const before = { p: primary.count, s: second.count };
    primary.delayMs = 600;
    const r = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x00"]}' });
    await r.body.text();
    expect((primary.count - before.p) + (second.count - before.s)).toBe(1);
    primary.delayMs = 0;
  });
});

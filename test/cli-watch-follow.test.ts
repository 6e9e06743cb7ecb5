import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliStarted } from './helpers/cli.js';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';
import { startTestService, type TestService } from './helpers/service.js';

describe('events --follow and an API that stops answering', () => {
  let server: Server;
  let base: string;
  const seen: string[] = [];
  beforeAll(async () => {
    // Answers where the feed ends, then never answers again: a stuck network.
    server = createServer((req, res) => {
      seen.push(req.url ?? '');
      if (req.url?.includes('after=latest')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true,"events":[],"next_after":"41"}');
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => { server.closeAllConnections(); server.close(); });

  it('Ctrl-C ends it at once with exit 0, also while a request hangs', async () => {
    const follow = cliStarted(['events', '--follow', '--interval', '0.1'], {
      env: { PUBLIC_API_BASE: base, PUBLIC_API_KEY: 'k', PUBLIC_API_SECRET: 's' },
    });
    await follow.waitFor(/Waiting for events after 41/, 'stderr');
    // Let the next poll go out and hang.
    for (let i = 0; i < 40 && !seen.some((u) => u.includes('after=41')); i++) await new Promise((r) => setTimeout(r, 25));
    expect(seen.some((u) => u.includes('after=41'))).toBe(true);
    const t0 = Date.now();
    const r = await follow.interrupt();
    expect(r.code, r.stderr).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5000);
    // One request to find the end, one poll: no retries after the interrupt.
    expect(seen).toHaveLength(2);
  });
});

describe('GET /v1/address-watch/events?after=latest', () => {
  let t: TestService;
  beforeAll(async () => { t = await startTestService({ webhooks: { allow_private_urls: true } }); });
  afterAll(() => t.stop());

  it('returns no events and the newest id (null on an empty feed); anything else is a 400', async () => {
    const m = await t.merchant({ plan: 'pro' });
    expect((await m.call('GET', '/v1/address-watch/events?after=latest')).body).toEqual({ ok: true, events: [], next_after: null, retention_days: 90 });
    const bad = await m.call('GET', '/v1/address-watch/events?after=newest');
    expect(bad).toMatchObject({ status: 400, body: { error: 'after: must be an event id or "latest"' } });
    expect((await m.call('GET', '/v1/address-watch/events?after=99999999999999999')).status).toBe(400);
    // Pages stay safe integers.
    const page = await m.call('GET', '/v1/address-watch/addresses?page=9999999999999999');
    expect(page).toMatchObject({ status: 400, body: { error: 'page: must be a positive integer below 1000000000' } });
    expect((await m.call('GET', '/v1/address-watch/addresses?page=999999999')).status).toBe(200);
  });

  it('a plan without Address Watch cannot subscribe to block events of named networks', async () => {
    const free = await t.merchant({ plan: 'free' });
    const put = (events: object) => free.call('PUT', '/v1/address-watch/webhook', JSON.stringify({ url: 'http://127.0.0.1:9/hook', enabled: true, events }));
    const r = await put({ block: true, block_networks: ['eth'] });
    expect(r).toMatchObject({ status: 400, body: { error: 'events.block_networks: block subscriptions need Address Watch, which the Free plan does not include' } });
    // Without named networks (block events follow the watched addresses, of which it has none) it is accepted.
    expect((await put({ block: true })).status).toBe(200);
    const pro = await t.merchant({ plan: 'pro' });
    const ok = await pro.call('PUT', '/v1/address-watch/webhook', JSON.stringify({ url: 'http://127.0.0.1:9/hook', enabled: true, events: { block: true, block_networks: ['eth'] } }));
    expect(ok.status).toBe(200);
  });
});

describe('events --follow and the account\'s API rate limit', () => {
  let t: TestService;
  let chain: FakeEvm;
  beforeAll(async () => {
    chain = await startFakeEvmChain();
    t = await startTestService({
      networks: [{ slug: 'eth', name: 'Ethereum', environments: [{ slug: 'mainnet', upstreams: [chain.url] }] }],
      limits: { api_rps_per_ip: 100_000, api_rpm_per_account: 20, webhook_tests_per_minute: 100 },
    }, { watch: { pollMs: 100 } });
  });
  afterAll(async () => {
    await t?.stop();
    await chain?.close();
  });

  // The limit is a fixed one-minute window: this waits for its end, up to a minute.
  it('waits out a 429 from other traffic on the account (Retry-After) and keeps following', { timeout: 120_000 }, async () => {
    const ADDR = '0x52908400098527886E0F7030069857D2E4169EE7';
    const m = await t.merchant({ plan: 'pro' });
    expect((await m.call('POST', '/v1/address-watch/addresses', JSON.stringify({ network_slug: 'eth', address: ADDR }), { 'content-type': 'application/json' })).status).toBe(200);
    // --timeout 5: the client's own Retry-After waits (up to 30 s) would not fit, so the 429 reaches the follower at once.
    const follow = cliStarted(['events', '--follow', '--interval', '1', '--timeout', '5'], {
      env: { PUBLIC_API_KEY: m.apiKey, PUBLIC_API_SECRET: m.secret, PUBLIC_API_BASE: t.baseUrl },
    });
    await follow.waitFor(/Waiting for events/, 'stderr');
    // Another program on the same account uses up the minute's requests (again, should the
    // window turn before the follower's next poll).
    const note = /Rate limit exceeded \(the account's API limit\); following again in \d+ s/;
    while (!note.test(follow.stderr())) {
      let status = 0;
      for (let i = 0; i < 40 && status !== 429; i++) status = (await m.call('GET', '/v1/account')).status;
      expect(status).toBe(429);
      await new Promise((r) => setTimeout(r, 100));
    }
    const b = chain.mine([{ from: `0x${'ab'.repeat(20)}`, to: ADDR, wei: 5n }]);
    // Once the window turns, the follower asks from its cursor and prints the new event.
    await follow.waitFor(new RegExp(b.txs[0]!.hash), 'stdout', 90_000);
    const r = await follow.interrupt();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/^error/m);
  });
});

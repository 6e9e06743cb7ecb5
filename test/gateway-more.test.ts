import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { get } from 'node:http';
import { parseConfig, type ConfigInput } from '../src/config/index.js';
import { setAccountPlan, Store, usageReport } from '../src/store/index.js';
import { FakeEvm } from './helpers/fake-evm.js';
import { dropTestSchema, startTestService, storeUrlOf, type TestService } from './helpers/service.js';

let eth: FakeEvm;
let horizon: FakeEvm;
beforeAll(async () => {
  [eth, horizon] = await Promise.all([new FakeEvm().start(), new FakeEvm().start()]);
  // Horizon answers REST: echo the method, path and query so the test can see what arrived.
  horizon.respond = (req, res) => {
    const body = req.url === '/' ? { horizon_version: '2.30.0', core_version: 'v21', history_latest_ledger: 5150000 } : { method: req.method, url: req.url, body: req.body };
    res.writeHead(200, { 'content-type': 'application/hal+json; charset=utf-8' });
    res.end(JSON.stringify(body));
    return true;
  };
});
afterAll(async () => { await Promise.all([eth.stop(), horizon.stop()]); });

const networks = (): NonNullable<ConfigInput['networks']> => [
  { id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [eth.url] }], credits: { default: 20, methods: { eth_blockNumber: 10 } } },
  { id: 7, slug: 'stellar', name: 'Stellar', family: 'stellar', environments: [{ id: 11, slug: 'mainnet', upstreams: [horizon.url] }], credits: { default: 20, methods: {} } },
];

describe('REST-style (Horizon-like) networks', () => {
  let t: TestService;
  beforeAll(async () => { t = await startTestService({ networks: networks(), gateway: { probe_interval_ms: 60_000 } }); });
  afterAll(() => t.stop());

  it('forwards any method and path with its query and body, and prices by the route table', async () => {
    const m = await t.merchant();
    const e = (await m.call('POST', '/v1/endpoints', '{"name":"xlm","network_environment_id":11}')).body.endpoint;
    const get = await request(`${t.gatewayUrl}/${e.uuid}/ledgers/123/payments?limit=2&order=desc`);
    expect(get.statusCode).toBe(200);
    expect(get.headers['content-type']).toBe('application/hal+json; charset=utf-8');
    expect(await get.body.json()).toEqual({ method: 'GET', url: '/ledgers/123/payments?limit=2&order=desc', body: '' });

    const post = await request(`${t.gatewayUrl}/${e.uuid}/transactions`, { method: 'POST', body: 'tx=AAAA', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(await post.body.json()).toEqual({ method: 'POST', url: '/transactions', body: 'tx=AAAA' });
    expect(horizon.seen.at(-1)!.headers['content-type']).toBe('application/x-www-form-urlencoded');

    for (const path of ['', '/', '/accounts/GABC/offers', '/fee_stats', '/claimable_balances']) {
      const r = await request(`${t.gatewayUrl}/${e.uuid}${path}`);
      expect(r.statusCode).toBe(200);
      await r.body.dump();
    }
    await t.service.gateway.meter.flush();
    const usage = (await m.call('GET', `/v1/endpoints/${e.id}/usage?days=7`)).body.usage;
    const byMethod = Object.fromEntries(usage.methods.map((x: { method: string; credits: number; requests: number }) => [x.method, x]));
    expect(byMethod['GET /ledgers/{sequence}/payments']).toEqual({ method: 'GET /ledgers/{sequence}/payments', requests: 1, credits: 30 });
    expect(byMethod['POST /transactions'].credits).toBe(150);
    expect(byMethod['GET /']).toMatchObject({ requests: 2, credits: 10 });
    expect(byMethod['GET /accounts/{account_id}/offers'].credits).toBe(25);
    expect(byMethod['GET /fee_stats'].credits).toBe(10);
    expect(byMethod['GET (other)'].credits).toBe(20);
    expect(usage.total_requests).toBe(7);
  });

  it('refuses . and .. path segments, plain or escaped, before they reach the upstream', async () => {
    const m = await t.merchant();
    const e = (await m.call('POST', '/v1/endpoints', '{"name":"dots","network_environment_id":11}')).body.endpoint;
    const before = horizon.seen.length;
    const url = new URL(t.gatewayUrl);
    // node:http sends the path as written; URL-based clients would resolve the dots first.
    const rawGet = (path: string) => new Promise<{ status: number; body: string }>((resolve, reject) => {
      get({ host: url.hostname, port: url.port, path }, (res) => {
        let body = '';
        res.on('data', (d) => { body += d; });
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      }).on('error', reject);
    });
    for (const path of ['/../../secret', '/ledgers/%2e%2e/x', '/./fee_stats', '/ledgers/%2E%2E']) {
      const r = await rawGet(`/${e.uuid}${path}`);
      expect(r.status, path).toBe(400);
      expect(JSON.parse(r.body)).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'invalid path' }, id: null });
    }
    expect(horizon.seen.length).toBe(before);
  });

  it('probes Horizon for its version and latest ledger', async () => {
    const m = await t.merchant();
    const e = (await m.call('POST', '/v1/endpoints', '{"name":"xlm2","network_environment_id":11}')).body.endpoint;
    await t.service.gateway.probe.probeAll();
    const got = (await m.call('GET', `/v1/endpoints/${e.id}`)).body.endpoint;
    expect(got).toMatchObject({ version: '2.30.0', block_height: 5150000 });
  });
});

describe('IPv6 clients', () => {
  let t: TestService;
  beforeAll(async () => { t = await startTestService({ networks: networks(), gateway: { host: '::', probe_interval_ms: 60_000 } }); });
  afterAll(() => t.stop());

  it('an allowlist of IPv6 addresses admits ::1 and refuses 127.0.0.1, and the other way round', async () => {
    const m = await t.merchant();
    const e = (await m.call('POST', '/v1/endpoints', '{"name":"v6","network_environment_id":1}')).body.endpoint;
    const port = new URL(t.gatewayUrl).port;
    const call = (host: string) => request(`http://${host}:${port}/${e.uuid}`, { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}' })
      .then(async (r) => { await r.body.dump(); return r.statusCode; });
    await m.call('PATCH', `/v1/endpoints/${e.id}/allowed-ips`, '{"allowed_ips":["0:0:0:0:0:0:0:1"]}');
    expect(await call('[::1]')).toBe(200);
    expect(await call('127.0.0.1')).toBe(403);
    await m.call('PATCH', `/v1/endpoints/${e.id}/allowed-ips`, '{"allowed_ips":["127.0.0.1"]}');
    // Through the dual-stack socket the IPv4 client arrives as ::ffff:127.0.0.1.
    expect(await call('127.0.0.1')).toBe(200);
    expect(await call('[::1]')).toBe(403);
  });
});

describe('shutdown', () => {
  it('a clean stop writes every counted call, even those younger than a flush interval', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-flush-'));
    const t = await startTestService({ networks: networks(), gateway: { probe_interval_ms: 60_000 } }, { dataDir, keepDataDir: true });
    const m = await t.merchant();
    const e = (await m.call('POST', '/v1/endpoints', '{"name":"f","network_environment_id":1}')).body.endpoint;
    const calls = await Promise.all(Array.from({ length: 25 }, (_, i) =>
      request(`${t.gatewayUrl}/${e.uuid}`, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_blockNumber' }) })
        .then(async (r) => { await r.body.dump(); return r.statusCode; })));
    expect(calls.every((s) => s === 200)).toBe(true);
    await t.stop();

    const store = await Store.open({ dataDir, config: parseConfig({ networks: networks() }), syncCatalog: 'if-empty', url: storeUrlOf(dataDir) });
    const usage = await usageReport(store, { kind: 'endpoint', accountId: m.userId, endpointId: e.id }, 7);
    await store.close();
    await dropTestSchema(dataDir);
    expect(usage.total_requests).toBe(25);
    expect(usage.total_credits).toBe(250);
  });
});

describe('plan changes from another process', () => {
  it('reach the gateway on its version check', async () => {
    const t = await startTestService({
      networks: networks(), gateway: { probe_interval_ms: 60_000, registry_reload_ms: 200 },
      plans: [
        { id: 1, slug: 'one', name: 'One', included_credits: 1, rps_limit: 1, endpoints_limit: 5 },
        { id: 2, slug: 'many', name: 'Many', included_credits: 1, rps_limit: 1000, endpoints_limit: 5 },
      ],
    });
    try {
      const m = await t.merchant({ plan: 'one' });
      const e = (await m.call('POST', '/v1/endpoints', '{"name":"p","network_environment_id":1}')).body.endpoint;
      expect(t.service.gateway.registry.get(e.uuid)!.rpsLimit).toBe(1);
      // As `rpcctl admin accounts set-plan` does it (no notification on SQLite): the version check finds it.
      await setAccountPlan(t.store, m.userId, 2);
      // Checked every 200 ms; under load a check takes longer than that, so no fixed wait will do.
      for (const deadline = Date.now() + 10_000; t.service.gateway.registry.get(e.uuid)!.rpsLimit !== 1000 && Date.now() < deadline;) {
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(t.service.gateway.registry.get(e.uuid)!.rpsLimit).toBe(1000);
    } finally {
      await t.stop();
    }
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/serve/service.js';
import { createAccount, createApiKey, usageReport } from '../src/store/index.js';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { privatePostgresUnavailable, privateRedisUnavailable, startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from './helpers/private-servers.js';
import { signedCall, testConfig } from './helpers/service.js';

const why = privatePostgresUnavailable() ?? privateRedisUnavailable();
if (why) console.warn(`multi-instance-outage: skipped: ${why}`);

/**
 * The dependencies of multi-instance mode fail under a running service: a private PostgreSQL
 * and a private Redis (never the machine's shared ones) are stopped and started again.
 */
describe.skipIf(why)('PostgreSQL and Redis outages under a running service', () => {
  let pg: PrivatePostgres;
  let redis: PrivateRedis;
  let eth: FakeUpstream;
  let svc: RunningService;
  let dataDir: string;
  const logs: string[] = [];

  beforeAll(async () => {
    [pg, redis, eth] = await Promise.all([startPrivatePostgres(), startPrivateRedis(), new FakeUpstream().start()]);
    dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-outage-'));
    const configFile = join(dataDir, 'config.json');
    writeFileSync(configFile, JSON.stringify(testConfig({
      networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [eth.url] }], credits: { default: 20, methods: { eth_blockNumber: 10 } } }],
      plans: [{ id: 1, slug: 'p', name: 'P', included_credits: 1_000_000, rps_limit: 5, endpoints_limit: 5 }],
      gateway: { probe_interval_ms: 60_000 },
    })));
    svc = await startService({
      configFile, dataDir, databaseUrl: pg.url, redisUrl: redis.url,
      env: { ...process.env, RPCCTL_MASTER_KEY: '', RPCCTL_DATABASE_URL: '', RPCCTL_REDIS_URL: '' }, log: (l) => logs.push(l),
    });
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await Promise.all([pg?.stop(), redis?.stop(), eth?.stop()]);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  const rpc = (uuid: string) => request(`${svc.gatewayUrl}/${uuid}`, { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}' })
    .then(async (r) => { await r.body.dump(); return r.statusCode; });
  const health = (base: string) => request(`${base}/health`).then(async (r) => ({ status: r.statusCode, body: await r.body.json() as any }));

  it('Redis stopped: limits fall back to memory with a warning, never an error; shared again when it returns', async () => {
    const account = await createAccount(svc.store, { planId: 1 });
    const key = await createApiKey(svc.store, { accountId: account.id });
    const e = (await signedCall(svc.apiUrl, key.api_key, key.secret, 'POST', '/v1/endpoints', '{"name":"r","network_environment_id":1}')).body.endpoint;
    await redis.kill();
    // A burst well over the plan's 5 RPS: every answer is 200 or 429, and the limit still holds.
    const statuses = await Promise.all(Array.from({ length: 20 }, () => rpc(e.uuid)));
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(10); // at most two seconds' worth
    expect((await signedCall(svc.apiUrl, key.api_key, key.secret, 'GET', '/v1/account')).status).toBe(200);
    expect(logs.some((l) => l.includes('Redis unavailable'))).toBe(true);
    await redis.start();
    const until = Date.now() + 10_000;
    while (!(svc.limits as { shared?: boolean }).shared && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect((svc.limits as { shared?: boolean }).shared).toBe(true);
  });

  it('PostgreSQL stopped: the API answers 503 in the envelope, health says so, the gateway keeps serving and buffers usage; all recovers when it returns', async () => {
    const account = await createAccount(svc.store, { planId: 1 });
    const key = await createApiKey(svc.store, { accountId: account.id });
    const call = (method: string, path: string, body = '') => signedCall(svc.apiUrl, key.api_key, key.secret, method, path, body);
    const e = (await call('POST', '/v1/endpoints', '{"name":"p","network_environment_id":1}')).body.endpoint;
    expect((await health(svc.apiUrl)).status).toBe(200);

    await pg.kill();
    const during = await call('GET', '/v1/endpoints');
    expect(during.status).toBe(503);
    expect(during.body).toEqual({ ok: false, error: 'Service unavailable' });
    await new Promise((r) => setTimeout(r, 1100)); // past the health cache
    expect(await health(svc.apiUrl)).toEqual({ status: 503, body: { ok: false, error: 'Service unavailable' } });
    expect((await health(svc.gatewayUrl)).status).toBe(503);
    let served = 0;
    for (let i = 0; i < 3; i++) {
      if (await rpc(e.uuid) === 200) served++;
    }
    expect(served).toBe(3);
    await new Promise((r) => setTimeout(r, 1500)); // a flush fails and keeps its counts

    await pg.start();
    const until = Date.now() + 20_000;
    let status = 0;
    while (Date.now() < until) {
      status = (await call('GET', '/v1/endpoints')).status;
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
    await svc.gateway.meter.flush();
    const usage = await usageReport(svc.store, { kind: 'endpoint', accountId: account.id, endpointId: e.id }, 1);
    expect(usage.total_requests).toBe(3);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await health(svc.gatewayUrl)).status).toBe(200);
    expect(logs.filter((l) => l.includes('usage flush failed')).length).toBe(1);
  });
});

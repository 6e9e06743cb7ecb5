import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { createAccount, createApiKey, Store, usageReport } from '../src/store/index.js';
import { FakeEvm } from './helpers/fake-evm.js';
import { privatePostgresUnavailable, privateRedisUnavailable, startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from './helpers/private-servers.js';
import { signedCall, testConfig } from './helpers/service.js';
import { describeUnless } from './helpers/skips.js';

const why = privatePostgresUnavailable() ?? privateRedisUnavailable();

const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const MASTER_KEY = 'a1'.repeat(32);
const RPS = 5;

interface Instance { proc: ResultPromise; api: string; gateway: string; out: () => string }

/**
 * The dependencies of multi-instance mode fail under two running `rpcctl serve` processes: a
 * private PostgreSQL and a private Redis (never the machine's shared ones) are killed and
 * started again. Nothing may crash; the API says 503 while the store is away; the gateways keep
 * serving and count; everything recovers by itself.
 */
describeUnless(why, 'PostgreSQL and Redis outages under running instances', () => {
  let pg: PrivatePostgres;
  let redis: PrivateRedis;
  let eth: FakeEvm;
  let dir: string;
  let store: Store;
  const instances: Instance[] = [];

  beforeAll(async () => {
    [pg, redis, eth] = await Promise.all([startPrivatePostgres(), startPrivateRedis(), new FakeEvm().start()]);
    dir = mkdtempSync(join(tmpdir(), 'rpcctl-outage-'));
    const configFile = join(dir, 'config.json');
    const config = testConfig({
      networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [eth.url] }], credits: { default: 20, methods: { eth_blockNumber: 10 } } }],
      plans: [{ id: 1, slug: 'p', name: 'P', included_credits: 1_000_000, rps_limit: RPS, endpoints_limit: 5 }],
      // The probe runs all through the outage: its failed store read ended every instance once.
      gateway: { probe_interval_ms: 300 },
    });
    writeFileSync(configFile, JSON.stringify(config));
    const start = async (): Promise<Instance> => {
      const proc = execa(process.execPath, [bin, 'serve', '--config', configFile, '--data-dir', mkdtempSync(join(dir, 'i-')), '--database', pg.url, '--redis', redis.url], {
        reject: false, all: true, env: { RPCCTL_MASTER_KEY: MASTER_KEY, RPCCTL_DATABASE_URL: '', RPCCTL_REDIS_URL: '' },
      });
      let out = '';
      return new Promise<Instance>((resolve, reject) => {
        proc.all!.on('data', (d: Buffer) => {
          out += d.toString();
          const api = /api\s+(http:\/\/\S+)/.exec(out)?.[1];
          const gateway = /gateway\s+(http:\/\/\S+)/.exec(out)?.[1];
          if (api && gateway && /instance\s+\S+/.test(out)) resolve({ proc, api, gateway, out: () => out });
        });
        proc.once('exit', () => reject(new Error(`serve exited early:\n${out}`)));
      });
    };
    instances.push(...await Promise.all([start(), start()]));
    store = await Store.open({ dataDir: dir, config: parseConfig(config), syncCatalog: 'if-empty', url: pg.url, env: { RPCCTL_MASTER_KEY: MASTER_KEY } });
  }, 120_000);
  afterAll(async () => {
    for (const i of instances) i.proc.kill('SIGKILL');
    await Promise.all(instances.map((i) => i.proc.catch(() => {})));
    await store?.close();
    await Promise.all([pg?.stop(), redis?.stop(), eth?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const rpc = (gateway: string, uuid: string) => request(`${gateway}/${uuid}`, { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}' })
    .then(async (r) => { await r.body.dump(); return r.statusCode; });
  const health = (base: string) => request(`${base}/health`).then(async (r) => ({ status: r.statusCode, body: await r.body.json() as any }));
  const alive = () => instances.every((i) => i.proc.exitCode === null);
  async function until(fn: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await fn())) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  async function merchant() {
    const account = await createAccount(store, { planId: 1 });
    const key = await createApiKey(store, { accountId: account.id });
    const call = (i: Instance, method: string, path: string, body = '') => signedCall(i.api, key.api_key, key.secret, method, path, body);
    return { account, call };
  }

  it('Redis stopped mid-run: limits fall back to each instance\'s memory with a warning, never an error; shared again when it returns', async () => {
    const { call } = await merchant();
    const e = (await call(instances[0]!, 'POST', '/v1/endpoints', '{"name":"r","network_environment_id":1}')).body.endpoint;
    await until(async () => await rpc(instances[1]!.gateway, e.uuid) !== 404, 5000); // B heard of it
    await new Promise((r) => setTimeout(r, 1000)); // a fresh RPS window
    await redis.kill();
    const statuses = await Promise.all(Array.from({ length: 30 }, (_, n) => rpc(instances[n % 2]!.gateway, e.uuid)));
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    // Each instance's own window: never unlimited (two instances, at most two seconds of a burst).
    const ok = statuses.filter((s) => s === 200).length;
    expect(ok).toBeGreaterThan(0);
    expect(ok).toBeLessThanOrEqual(2 * 2 * RPS);
    expect((await call(instances[1]!, 'GET', '/v1/account')).status).toBe(200);
    for (const i of instances) expect(i.out()).toContain('Redis unavailable');
    await redis.start();
    await until(() => instances.every((i) => i.out().includes('Redis is back')));
    expect(alive()).toBe(true);
  });

  it('PostgreSQL stopped mid-run: 503s in the envelope and from /health, gateways keep serving and counting, nothing crashes; all recovers when it returns', async () => {
    const { account, call } = await merchant();
    const e = (await call(instances[0]!, 'POST', '/v1/endpoints', '{"name":"p","network_environment_id":1}')).body.endpoint;
    await until(async () => await rpc(instances[1]!.gateway, e.uuid) === 200, 5000); // B knows it
    const before = 1;

    await pg.kill();
    const downAt = Date.now();
    for (const i of instances) {
      const during = await call(i, 'GET', '/v1/endpoints');
      expect(during.status).toBe(503);
      expect(during.body).toEqual({ ok: false, error: 'Service unavailable' });
    }
    await new Promise((r) => setTimeout(r, 1100)); // past the health cache
    for (const i of instances) {
      expect(await health(i.api)).toEqual({ status: 503, body: { ok: false, error: 'Service unavailable' } });
      expect((await health(i.gateway)).status).toBe(503);
    }
    // About 9 s without PostgreSQL: probes, flushes, scanners and the delivery worker all fail
    // meanwhile. Every second each instance serves calls (counted in memory) and its API says
    // 503 with Retry-After; no process exits.
    let served = 0;
    const outageEnds = downAt + 9000;
    while (Date.now() < outageEnds) {
      await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 50)); // a fresh RPS window
      const statuses = await Promise.all([rpc(instances[0]!.gateway, e.uuid), rpc(instances[1]!.gateway, e.uuid), rpc(instances[1]!.gateway, e.uuid)]);
      expect(statuses).toEqual([200, 200, 200]);
      served += statuses.length;
      for (const i of instances) {
        const during = await call(i, 'GET', '/v1/account');
        expect(during.status).toBe(503);
        expect(during.headers['retry-after']).toBe('1');
      }
      expect(alive()).toBe(true);
    }

    await pg.start();
    await until(async () => (await call(instances[1]!, 'GET', '/v1/endpoints')).status === 200);
    await until(async () => (await usageReport(store, { kind: 'endpoint', accountId: account.id, endpointId: e.id }, 1)).total_requests >= before + served);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await usageReport(store, { kind: 'endpoint', accountId: account.id, endpointId: e.id }, 1)).total_requests).toBe(before + served);
    // The failures were logged at error by task; the probe and the flush ran through them.
    for (const i of instances) expect(i.out()).toMatch(/background task (probe|usage-flush) failed/);
    await until(async () => (await health(instances[0]!.gateway)).status === 200);
    for (const i of instances) expect(i.out().match(/usage flush failed/g) ?? []).toHaveLength(1);
    expect(alive()).toBe(true);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisLimits } from '../src/limits/index.js';
import { createLogger } from '../src/log/index.js';
import { startService, type RunningService } from '../src/serve/service.js';
import { createAccount, createApiKey } from '../src/store/index.js';
import { FakeEvm } from './helpers/fake-evm.js';
import { privateRedisUnavailable, startPrivateRedis, type PrivateRedis } from './helpers/private-servers.js';
import { signedCall, testConfig } from './helpers/service.js';
import { describeUnless } from './helpers/skips.js';

const why = privateRedisUnavailable();

/**
 * What an operator sees of a Redis outage on one instance (its own store, a private Redis that
 * is killed): the gateway workers' local decisions in `rpcctl_redis_fallbacks_total`, one `warn`
 * for the outage and one `info` for its end, for the process however many workers it has.
 */
describeUnless(why, 'a Redis outage, as operators watch it', () => {
  let redis: PrivateRedis;
  let up: FakeEvm;
  let dir: string;
  let service: RunningService;
  const lines: Array<{ level: string; msg: string }> = [];

  beforeAll(async () => {
    [redis, up] = await Promise.all([startPrivateRedis(), new FakeEvm().start()]);
    dir = mkdtempSync(join(tmpdir(), 'rpcctl-redis-ops-'));
    const configFile = join(dir, 'config.json');
    writeFileSync(configFile, JSON.stringify(testConfig({
      networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [up.url] }] }],
      plans: [{ id: 1, slug: 'p', name: 'P', included_credits: 1_000_000_000, rps_limit: 1000, endpoints_limit: 5 }],
      gateway: { probe_interval_ms: 60_000, workers: 3 },
      redis: { url: redis.url },
    })));
    const stream = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
    service = await startService({
      configFile, dataDir: dir, env: { RPCCTL_MASTER_KEY: '', RPCCTL_DATABASE_URL: '', RPCCTL_REDIS_URL: '' },
      logger: createLogger({ format: 'json', level: 'info', stream }),
    });
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    await Promise.all([redis?.stop(), up?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const redisLines = () => lines.filter((l) => /Redis/.test(l.msg));
  async function until(what: string, fn: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await fn())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(redisLines())}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('counts the workers\' local decisions and logs one warn per outage and one info on recovery', async () => {
    const account = await createAccount(service.store, { planId: 1 });
    const key = await createApiKey(service.store, { accountId: account.id });
    const uuid = (await signedCall(service.apiUrl, key.api_key, key.secret, 'POST', '/v1/endpoints', '{"name":"ops","network_environment_id":1}')).body.endpoint.uuid as string;
    const call = () => request(`${service.gatewayUrl}/${uuid}`, { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"eth_gasPrice"}', headers: { 'content-type': 'application/json' } })
      .then(async (r) => { await r.body.dump(); return r.statusCode; });
    const fallbacks = async () => {
      const text = await (await request(`${service.metricsUrl}/metrics`)).body.text();
      return Number(/^rpcctl_redis_fallbacks_total\{part="limits"\} (\S+)$/m.exec(text)?.[1]);
    };
    expect(await call()).toBe(200);
    expect(await fallbacks()).toBe(0);

    await redis.kill();
    await until('the limits on memory', () => !(service.limits as RedisLimits).shared);
    const statuses = await Promise.all(Array.from({ length: 200 }, () => call()));
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    // Every one of those RPS decisions was taken in a gateway worker, without Redis.
    expect(await fallbacks()).toBeGreaterThanOrEqual(200);
    expect(redisLines().map((l) => l.level)).toEqual(['warn']);
    expect(redisLines()[0]!.msg).toMatch(/^Redis unavailable \(.+\); rate limits fall back/);

    await redis.start();
    await until('Redis is back', () => redisLines().some((l) => /Redis is back/.test(l.msg)));
    for (let i = 0; i < 20; i++) expect(await call()).toBe(200); // every worker's clients see it back
    await new Promise((r) => setTimeout(r, 500));
    expect(redisLines().map((l) => l.level)).toEqual(['warn', 'info']);
  });

  it('the heartbeat task runs under the supervisor: a failure is logged at error, counted, and the next run succeeds', async () => {
    const { supervisor, metrics } = service;
    const valueOf = async (name: string) => (await metrics.registry.getSingleMetric(name)?.get())?.values.find((v) => v.labels.task === 'heartbeat')?.value ?? 0;
    expect(supervisor.tasks()).toContain('heartbeat');
    const errors = await valueOf('rpcctl_background_errors_total');
    supervisor.inject('heartbeat', new Error('injected fault in heartbeat'));
    const injectedAt = Date.now() / 1000;
    await until('the failure counted', async () => await valueOf('rpcctl_background_errors_total') === errors + 1);
    expect(lines.some((l) => l.level === 'error' && l.msg.includes('injected fault in heartbeat'))).toBe(true);
    await until('the next heartbeat', async () => await valueOf('rpcctl_background_last_success_timestamp_seconds') > injectedAt);
  });
});

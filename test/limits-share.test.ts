import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisLimits } from '../src/limits/index.js';
import { createLogger } from '../src/log/index.js';
import { startService, type RunningService } from '../src/serve/service.js';
import { createAccount, createApiKey } from '../src/store/index.js';
import { FakeEvm } from './helpers/fake-evm.js';
import { privateRedisUnavailable, startPrivateRedis, type PrivateRedis } from './helpers/private-servers.js';
import { signedCall, testConfig } from './helpers/service.js';
import { freshSchema, testDatabaseUrl, type TestSchema } from './helpers/shared-stores.js';
import { describeUnless } from './helpers/skips.js';

const why = !testDatabaseUrl
  ? 'needs PostgreSQL (set RPCCTL_TEST_DATABASE_URL): instances count each other through heartbeats in one shared store, which SQLite (one instance) has no use for'
  : privateRedisUnavailable();

const LIMIT = 50;
const MASTER_KEY = 'b2'.repeat(32);

interface Instance { service: RunningService; lines: Array<{ level: string; msg: string; component?: string }> }

/**
 * Two instances on one PostgreSQL and a private Redis that is then killed. While Redis is away
 * each instance enforces its share of the plan's RPS limit (limit / live instances, from the
 * heartbeats), so the fleet admits about the limit rather than the limit per instance.
 */
describeUnless(why, 'limits while Redis is away', () => {
  let schema: TestSchema;
  let redis: PrivateRedis;
  let up: FakeEvm;
  let dir: string;
  const instances: Instance[] = [];
  /** When each call the gateway admitted reached the upstream: the second it was counted in. */
  const admittedAt: number[] = [];

  beforeAll(async () => {
    [schema, redis, up] = await Promise.all([freshSchema(), startPrivateRedis(), new FakeEvm().start()]);
    up.respond = (seen) => {
      if (seen.body.includes('eth_gasPrice')) admittedAt.push(Date.now());
      return false;
    };
    dir = mkdtempSync(join(tmpdir(), 'rpcctl-share-'));
    const configFile = join(dir, 'config.json');
    writeFileSync(configFile, JSON.stringify(testConfig({
      networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [up.url] }] }],
      plans: [{ id: 1, slug: 'p', name: 'P', included_credits: 1_000_000_000, rps_limit: LIMIT, endpoints_limit: 5 }],
      gateway: { probe_interval_ms: 60_000 },
    })));
    const start = async (): Promise<Instance> => {
      const lines: Instance['lines'] = [];
      const stream = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
      const service = await startService({
        configFile, dataDir: mkdtempSync(join(dir, 'i-')), databaseUrl: schema.url, redisUrl: redis.url,
        env: { RPCCTL_MASTER_KEY: MASTER_KEY, RPCCTL_DATABASE_URL: '', RPCCTL_REDIS_URL: '' },
        logger: createLogger({ format: 'json', level: 'info', stream }),
      });
      return { service, lines };
    };
    instances.push(await start(), await start());
  }, 120_000);
  afterAll(async () => {
    await Promise.all(instances.map((i) => i.service.stop()));
    await Promise.all([redis?.stop(), up?.stop(), schema?.drop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  async function until(what: string, fn: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await fn())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const limitsOf = (i: Instance) => i.service.limits as RedisLimits;
  const scrape = async (i: Instance) => (await request(`${i.service.metricsUrl}/metrics`)).body.text();
  const counter = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);

  it('each instance enforces limit / live instances: in every whole second of the outage after the first, the fleet admits at most 1.2x the limit', async () => {
    const [a, b] = instances as [Instance, Instance];
    const store = a.service.store;
    const account = await createAccount(store, { planId: 1 });
    const key = await createApiKey(store, { accountId: account.id });
    const created = await signedCall(a.service.apiUrl, key.api_key, key.secret, 'POST', '/v1/endpoints', '{"name":"share","network_environment_id":1}');
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const uuid = created.body.endpoint.uuid as string;
    const agent = new Agent({ connections: 32 });
    const call = (i: Instance) => request(`${i.service.gatewayUrl}/${uuid}`, {
      method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"eth_gasPrice"}', headers: { 'content-type': 'application/json' }, dispatcher: agent,
    }).then(async (r) => { await r.body.dump(); return r.statusCode; });
    await until('both gateways serve the endpoint', async () => (await call(a)) === 200 && (await call(b)) === 200);
    // Heartbeats: each instance counts the other (and pushed the count to its gateway workers).
    await until('two live instances', () => limitsOf(a).liveInstances === 2 && limitsOf(b).liveInstances === 2);

    await redis.kill();
    await until('both instances on their own windows', () => !limitsOf(a).shared && !limitsOf(b).shared);
    const fallbacksBefore = counter(await scrape(a), 'rpcctl_redis_fallbacks_total{part="limits"}');

    // Four seconds of 2x the limit, each second's calls sent between .100 and .600: off the
    // window's edges, so a call decided a little late is still counted in the second it was sent.
    const first = Math.floor(Date.now() / 1000) + 1;
    const statuses: number[] = [];
    const pending: Array<Promise<unknown>> = [];
    for (let s = first; s < first + 4; s++) {
      for (let n = 0; n < 2 * LIMIT; n++) {
        const at = s * 1000 + 100 + Math.floor((n * 500) / (2 * LIMIT));
        const wait = at - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        pending.push(call(n % 2 === 0 ? a : b).then((st) => statuses.push(st), () => statuses.push(-1)));
      }
    }
    await Promise.all(pending);
    await agent.close();
    // Never an error and never unlimited: admitted or 429.
    expect(statuses.filter((st) => st !== 200 && st !== 429)).toEqual([]);

    const perSecond = new Map<number, number>();
    for (const t of admittedAt) {
      const s = Math.floor(t / 1000);
      if (s >= first) perSecond.set(s, (perSecond.get(s) ?? 0) + 1);
    }
    const seconds = [first + 1, first + 2, first + 3].map((s) => perSecond.get(s) ?? 0);
    // On one instance alone each would admit the whole limit: 2x in all.
    for (const n of seconds) {
      expect(n, `admitted per second: ${seconds.join(', ')}`).toBeGreaterThan(0);
      expect(n, `admitted per second: ${seconds.join(', ')}`).toBeLessThanOrEqual(1.2 * LIMIT);
    }

    // What operators watch: the workers' local decisions are counted ...
    const fallbacks = counter(await scrape(a), 'rpcctl_redis_fallbacks_total{part="limits"}') - fallbacksBefore;
    expect(fallbacks).toBeGreaterThanOrEqual(4 * LIMIT);
    // ... and the outage is one warning per process, its end one info line.
    for (const i of instances) {
      const warns = i.lines.filter((l) => l.level === 'warn' && /Redis unavailable/.test(l.msg));
      expect(warns, JSON.stringify(i.lines.filter((l) => /redis/i.test(l.msg)))).toHaveLength(1);
      expect(i.lines.filter((l) => l.level === 'info' && /Redis/.test(l.msg))).toEqual([]);
    }
    await redis.start();
    await until('Redis is back in both instances', () => instances.every((i) => i.lines.some((l) => /Redis is back/.test(l.msg))));
    await until('both instances share again', () => limitsOf(a).shared && limitsOf(b).shared);
    await new Promise((r) => setTimeout(r, 500));
    for (const i of instances) {
      const redisLines = i.lines.filter((l) => /Redis/.test(l.msg));
      expect(redisLines.map((l) => l.level), JSON.stringify(redisLines)).toEqual(['warn', 'info']);
    }
  });

  it('a stopped instance leaves the count: the other takes the whole limit again', async () => {
    const [a, b] = instances as [Instance, Instance];
    await b.service.stop();
    instances.pop();
    await until('one live instance', () => limitsOf(a).liveInstances === 1);
  });
});

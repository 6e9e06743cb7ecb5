import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createClient } from 'redis';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { startProxy, type LoopbackProxy } from './helpers/proxy.js';
import { startTestService, type TestService } from './helpers/service.js';
import { freshRedisPrefix, testRedis } from './helpers/shared-stores.js';
import { ResponseCache } from '../src/gateway/cache.js';
import { MAX_COMMANDS_IN_FLIGHT, RedisCacheTier } from '../src/gateway/cache-redis.js';
import { privateRedisUnavailable, startPrivateRedis } from './helpers/private-servers.js';
import { describeUnless } from './helpers/skips.js';

// The Redis RPCCTL_TEST_REDIS_URL names (each test under a key prefix of its own), else a private one.
const redis = await testRedis();
afterAll(() => redis.stop());
const REDIS_URL = redis.url ?? '';
const up = redis.url !== undefined;

async function until(cond: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`condition not met in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function redisClient() {
  return createClient({ url: REDIS_URL });
}

async function withRedis<T>(fn: (c: ReturnType<typeof redisClient>) => Promise<T>): Promise<T> {
  const c = redisClient();
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

describeUnless(!up && redis.why, `the response cache shared through Redis${up ? '' : ` (skipped: ${redis.why})`}`, () => {
  it('shares answers, drops exactly what a reorg covers in Redis, and tells the other instances', async () => {
    const prefix = freshRedisPrefix();
    const tiers = await Promise.all([0, 1].map(() => RedisCacheTier.open({ url: REDIS_URL, keyPrefix: prefix, log: () => {}, ttlMs: 60_000, maxValueBytes: 100 })));
    try {
      const [a, b] = tiers.map((t) => new ResponseCache(100_000, t)) as [ResponseCache, ResponseCache];
      a.set('low', '"9"', 1, 9, '0x9');
      a.set('high', '"20"', 1, 20, '0x20');
      a.set('other-env', '"20"', 2, 20, '0x20');
      a.set('chain', '"0x1"', 1, undefined, undefined);
      a.set('huge', `"${'x'.repeat(200)}"`, 1, 5, '0x5');
      await until(async () => (await tiers[1]!.get('chain')) !== undefined);

      expect(b.get('high')).toBeUndefined();
      expect(await b.getShared('high')).toBe('"20"');
      expect(b.get('high')).toBe('"20"'); // kept in B's memory too
      // With the block hash it relies on, so B's own probe checks it as well.
      expect(b.anchors(1)).toEqual([[20, '0x20']]);
      expect(await b.getShared('low')).toBe('"9"');
      expect(await b.getShared('chain')).toBe('"0x1"');
      // Over the per-value cap: A's memory only.
      expect(a.get('huge')).toBeDefined();
      expect(await b.getShared('huge')).toBeUndefined();
      await withRedis(async (c) => {
        const ttl = await c.pTTL(`${prefix}cache:high`);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(60_000);
        // The height index expires with its newest answer: every key this tier writes has a TTL.
        expect(await c.pTTL(`${prefix}cache:by-height:1`)).toBeGreaterThan(0);
      });

      // A reorg at 10 seen by A: B's memory and Redis lose what is at 10 and above, in that environment only.
      a.dropFrom(1, 10);
      await until(() => b.snapshot().dropped > 0);
      expect(b.get('high')).toBeUndefined();
      expect(b.get('low')).toBe('"9"');
      expect(await tiers[1]!.get('high')).toBeUndefined();
      expect(await tiers[1]!.get('low')).toBeDefined();
      expect(await tiers[1]!.get('other-env')).toBeDefined();
      expect(await tiers[1]!.get('chain')).toBeDefined();
      await withRedis(async (c) => {
        expect(await c.zRange(`${prefix}cache:by-height:1`, 0, -1)).toEqual([`${prefix}cache:low`]);
      });
      expect(tiers.every((t) => t.fallbacks === 0)).toBe(true);
    } finally {
      await Promise.all(tiers.map((t) => t.close()));
      await withRedis(async (c) => { const ks = await c.keys(`${prefix}*`); if (ks.length) await c.del(ks); });
    }
  });
});

describe('Redis away', () => {
  it('the memory cache alone serves: reads miss at once, writes and drops do nothing, nothing throws', async () => {
    // A port nothing listens on.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => resolve(p)); });
    });
    const log: string[] = [];
    const tier = await RedisCacheTier.open({ url: `redis://127.0.0.1:${port}`, keyPrefix: freshRedisPrefix(), log: (l) => log.push(l), connectWaitMs: 300 });
    try {
      const cache = new ResponseCache(100_000, tier);
      cache.set('k', '"1"', 1, 5, '0x5');
      expect(cache.get('k')).toBe('"1"');
      expect(await cache.getShared('other')).toBeUndefined();
      expect(cache.dropFrom(1, 0)).toBe(1);
      expect(tier.shared).toBe(false);
      expect(tier.fallbacks).toBeGreaterThan(0);
      expect(log.filter((l) => l.includes('Redis unavailable'))).toHaveLength(1);
    } finally {
      await tier.close();
    }
  });
});

const noPrivateRedis = privateRedisUnavailable();

/** Calls of the cache's write script Redis has executed (its own count, not the client's). */
async function evalsRun(url: string): Promise<number> {
  const c = createClient({ url });
  await c.connect();
  try {
    const m = /cmdstat_eval:calls=(\d+)/.exec(await c.info('commandstats'));
    return m ? Number(m[1]) : 0;
  } finally {
    await c.close();
  }
}

describeUnless(noPrivateRedis, `a frozen Redis${noPrivateRedis ? ` (skipped: ${noPrivateRedis})` : ''}`, () => {
  it('SIGSTOP: writes in flight stay bounded (the rest are dropped and counted), and writes resume after SIGCONT', async () => {
    const redis = await startPrivateRedis();
    const tier = await RedisCacheTier.open({ url: redis.url, keyPrefix: 'frozen:', log: () => {}, maxValueBytes: 1024 * 1024 });
    try {
      const cache = new ResponseCache(1024 * 1024, tier);
      const value = `"${'a'.repeat(50_000)}"`;
      cache.set('before', value, 1, 1, '0x1');
      await until(async () => (await tier.get('before')) !== undefined);
      const evalsBefore = await evalsRun(redis.url);

      // The connection stays up and nothing answers: the client alone cannot tell.
      redis.pause();
      let sent = 0;
      let maxInFlight = 0;
      while (sent < 4 * MAX_COMMANDS_IN_FLIGHT) {
        // As the gateway writes: for every answer it fetched, without waiting for Redis.
        for (let i = 0; i < 5; i++) cache.set(`frozen-${sent++}`, value, 1, 2, '0x2');
        maxInFlight = Math.max(maxInFlight, tier.commandsInFlight);
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(maxInFlight).toBeLessThanOrEqual(MAX_COMMANDS_IN_FLIGHT);
      expect(tier.fallbacks).toBeGreaterThan(0);
      expect(tier.shared).toBe(false);

      redis.resume();
      // What the client had queued reaches Redis on SIGCONT: Redis's own count says how much it was.
      await until(() => tier.commandsInFlight === 0);
      expect(await evalsRun(redis.url) - evalsBefore).toBeLessThanOrEqual(MAX_COMMANDS_IN_FLIGHT);

      // Writes flow again once the back-off is over, without a reconnect.
      let n = 0;
      await until(async () => {
        cache.set(`after-${n}`, '"1"', 1, 3, '0x3');
        return (await tier.get(`after-${n++}`)) !== undefined;
      });
      expect(tier.shared).toBe(true);
    } finally {
      try { redis.resume(); } catch { /* not running */ }
      await tier.close();
      await redis.stop();
    }
  });
});

describeUnless(!up && redis.why, `two gateways on one Redis${up ? '' : ` (skipped: ${redis.why})`}`, () => {
  let anvil: Anvil;
  const proxies: LoopbackProxy[] = [];
  const services: TestService[] = [];
  const urls: string[] = [];

  beforeAll(async () => {
    anvil = await startAnvil();
    // head 100, finalized 36 (anvil's `finalized` is head - 64)
    await request(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: ['0x64'] }) });
    const redis = { url: REDIS_URL, key_prefix: freshRedisPrefix() };
    for (let i = 0; i < 2; i++) {
      const proxy = await startProxy(anvil.url);
      proxies.push(proxy);
      const t = await startTestService({
        networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'anvil', upstreams: [proxy.url] }] }],
        gateway: { probe_interval_ms: 200 },
        redis,
      });
      services.push(t);
      const m = await t.merchant();
      const e = (await m.call('POST', '/v1/endpoints', '{"name":"shared","network_environment_id":1}')).body.endpoint;
      urls.push(`${t.gatewayUrl}/${e.uuid}`);
    }
    await until(() => services.every((t) => t.service.gateway.chain.get(1)?.finalized === 36));
  }, 90_000);

  afterAll(async () => {
    for (const t of services) await t.stop();
    for (const p of proxies) await p.close();
    await anvil?.stop();
  });

  async function getBlock(i: number, id: number): Promise<any> {
    const r = await request(urls[i]!, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_getBlockByNumber', params: ['0xa', false] }),
    });
    expect(r.statusCode).toBe(200);
    return r.body.json();
  }

  const asked = (i: number) => proxies[i]!.calls.filter((c) => c === 'eth_getBlockByNumber ["0xa",false]').length;

  it('B answers a final block A fetched without asking its upstream; a reorg A sees drops it on B', async () => {
    const a = await getBlock(0, 1);
    expect(a.result.number).toBe('0xa');
    expect(asked(0)).toBe(1);
    const key = '1\u0000eth_getBlockByNumber\u0000["0xa",false]';
    await until(() => withRedis(async (c) => (await c.exists(`${services[0]!.service.config.redis.key_prefix}cache:${key}`)) === 1));

    const b = await getBlock(1, 7);
    expect(b).toEqual({ ...a, id: 7 });
    expect(asked(1)).toBe(0);
    // The caches live in the gateway workers: asked through the main thread, hence awaited.
    expect(await services[1]!.service.gateway.cache!.get(key)).toBeDefined();

    await services[0]!.service.gateway.cache!.dropFrom(1, 5);
    await until(async () => (await services[1]!.service.gateway.cache!.get(key)) === undefined);
    const again = await getBlock(1, 8);
    expect(again.result).toEqual(a.result);
    expect(asked(1)).toBe(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, RedisLimits } from '../src/limits/index.js';
import { Metrics } from '../src/metrics/index.js';
import { observeRedis } from '../src/serve/metrics.js';
import { freshRedisPrefix } from './helpers/shared-stores.js';
import { privateRedisUnavailable, startPrivateRedis, type PrivateRedis } from './helpers/private-servers.js';
import { describeUnless } from './helpers/skips.js';

const why = privateRedisUnavailable();

// A moment in the middle of a window, passed explicitly: no test depends on the clock's edge.
const NOW = Math.floor(Date.now() / 1000) * 1000 + 500;

describeUnless(why, 'RPS windows in Redis', () => {
  let redis: PrivateRedis;
  beforeAll(async () => { redis = await startPrivateRedis(); });
  afterAll(async () => { await redis?.stop(); });

  async function instances(n: number, prefix = freshRedisPrefix(), log: string[] = []) {
    return Promise.all(Array.from({ length: n }, () => RedisLimits.open({ url: redis.url, keyPrefix: prefix, log: (l) => log.push(l) })));
  }

  it('three instances share one window: exactly the limit is admitted in total, batches all or nothing', async () => {
    const all = await instances(3);
    try {
      const windows = all.map((l) => l.window('rps', 1000));
      const decisions = await Promise.all(Array.from({ length: 60 }, (_, i) => windows[i % 3]!.take('ep', 25, 1, NOW)));
      expect(decisions.filter((d) => d === 0)).toHaveLength(25);
      expect(decisions.filter((d) => d === 1)).toHaveLength(35);
      // The next second is a new window; a batch of 3 over a remaining 2 takes nothing.
      const next = NOW + 1000;
      expect(await windows[0]!.take('b', 5, 3, next)).toBe(0);
      expect(await windows[1]!.take('b', 5, 3, next)).toBe(1);
      expect(await windows[2]!.take('b', 5, 2, next)).toBe(0);
      expect(all.every((l) => l.fallbacks === 0)).toBe(true);
    } finally {
      await Promise.all(all.map((l) => l.close()));
    }
  });

  it('a batch is admitted as far as the shared window allows (three instances, one window)', async () => {
    const all = await instances(3);
    try {
      const [a, b, c] = all.map((l) => l.window('rps', 1000));
      expect(await a!.admit('ep', 10, 4, NOW)).toBe(4);
      expect(await b!.admit('ep', 10, 4, NOW)).toBe(4);
      expect(await c!.admit('ep', 10, 4, NOW)).toBe(2); // the rest of the window, not all or nothing
      expect(await a!.admit('ep', 10, 1, NOW)).toBe(0);
      expect(await b!.take('ep', 10, 1, NOW)).toBe(1); // a single call sees the same full window
      expect(all.every((l) => l.fallbacks === 0)).toBe(true);
    } finally {
      await Promise.all(all.map((l) => l.close()));
    }
  });

  it('a window known to be full is refused from memory for the rest of its second (no Redis round trip)', async () => {
    const [l] = await instances(1);
    try {
      const w = l!.window('rps', 1000);
      for (let i = 0; i < 3; i++) expect(await w.take('ep', 3, 1, NOW)).toBe(0);
      const answer = w.take('ep', 3, 1, NOW);
      expect(answer).toBe(1); // a number, not a promise: answered without Redis
      expect(w.take('ep', 3, 1, NOW + 1000)).toBeInstanceOf(Promise); // the next second asks again
    } finally {
      await l!.close();
    }
  });

  it('Redis gone: each instance enforces its own memory window with one warning, and shares again once Redis is back', async () => {
    const log: string[] = [];
    const [l] = await instances(1, freshRedisPrefix(), log);
    try {
      const w = l!.window('rps', 1000);
      expect(await w.take('ep', 4, 1, NOW)).toBe(0);
      const metrics = new Metrics({ enabled: true, processMetrics: false });
      observeRedis(metrics, l!, undefined);
      expect(await metrics.registry.metrics()).toContain('rpcctl_redis_shared{part="limits"} 1');
      await redis.kill();
      const during = await Promise.all(Array.from({ length: 10 }, () => w.take('ep2', 4, 1, NOW)));
      // The fallback is never silent: a warning (below) and the metric.
      const scraped = await metrics.registry.metrics();
      expect(scraped).toContain('rpcctl_redis_shared{part="limits"} 0');
      expect(Number(/rpcctl_redis_fallbacks_total\{part="limits"\} (\d+)/.exec(scraped)?.[1])).toBeGreaterThanOrEqual(10);
      // Never an error, never unlimited: the instance's own window of 4.
      expect(during.filter((d) => d === 0)).toHaveLength(4);
      expect(l!.fallbacks).toBeGreaterThanOrEqual(10);
      expect(log.filter((x) => x.includes('Redis unavailable'))).toHaveLength(1);
      // With the heartbeats counting two live instances, this one takes its share: 4 / 2.
      l!.liveInstances = 2;
      const shared = await Promise.all(Array.from({ length: 10 }, () => w.take('ep4', 4, 1, NOW)));
      expect(shared.filter((d) => d === 0)).toHaveLength(2);
      l!.liveInstances = 1;

      await redis.start();
      const until = Date.now() + 10_000;
      while (!l!.shared && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      expect(l!.shared).toBe(true);
      const before = l!.fallbacks;
      expect(await w.take('ep3', 4, 1, NOW)).toBe(0);
      expect(l!.fallbacks).toBe(before);
      expect(log.some((x) => x.includes('Redis is back'))).toBe(true);
    } finally {
      await l!.close();
    }
  });

  it('Redis frozen (SIGSTOP): after one decision found it silent, the next go to memory without asking it; one asks again a second later', async () => {
    const prefix = freshRedisPrefix();
    const [l] = await instances(1, prefix);
    const reader = connectRedis(redis.url);
    reader.on('error', () => {});
    try {
      const w = l!.window('rps', 1000);
      expect(await w.take('warm', 100, 1, NOW)).toBe(0);
      redis.pause();
      try {
        expect(await w.take('first', 100, 1, NOW)).toBe(0); // asked Redis, no answer in 250 ms: memory
        expect(l!.shared).toBe(false);
        const during = await Promise.all(Array.from({ length: 20 }, () => w.take('next', 100, 1, NOW)));
        expect(during.every((d) => d === 0)).toBe(true);
      } finally {
        redis.resume();
      }
      // What a frozen Redis was sent, it runs once thawed: the 20 went to memory only.
      await reader.connect();
      const window = Math.floor(NOW / 1000);
      expect(await reader.get(`${prefix}rps:first:${window}`)).toBe('1');
      expect(Number(await reader.get(`${prefix}rps:next:${window}`) ?? 0)).toBeLessThanOrEqual(1);
      // A second on, one decision asks again, finds it back, and the rest follow.
      const until = Date.now() + 10_000;
      while (!l!.shared && Date.now() < until) {
        await w.take('again', 100, 1, NOW);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(l!.shared).toBe(true);
    } finally {
      await reader.close().catch(() => reader.destroy());
      await l!.close();
    }
  });
  async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
    const end = Date.now() + ms;
    while (!(await cond())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('Redis back within the window: what each instance admitted from memory is carried into the shared count (issue 36: up to 2x was admitted)', async () => {
    const prefix = freshRedisPrefix();
    const all = await instances(3, prefix);
    const reader = connectRedis(redis.url);
    reader.on('error', () => {});
    // A minute's window: its key outlives any pause of a loaded machine between the steps below.
    const windows = all.map((l) => l.window('minute', 60_000));
    try {
      await redis.kill();
      for (const l of all) l.liveInstances = 3;
      // Each instance admits its share (30 / 3) from memory, and refuses the rest.
      for (const w of windows) {
        const decisions = await Promise.all(Array.from({ length: 12 }, () => w.take('ep', 30, 1, NOW)));
        expect(decisions.filter((d) => d === 0)).toHaveLength(10);
      }
      await redis.start();
      await waitFor('every instance sharing again', () => all.every((l) => l.shared));
      // Carried as soon as Redis is back, not at each key's next decision: the fleet's 30.
      await reader.connect();
      const key = `${prefix}minute:ep:${Math.floor(NOW / 60_000)}`;
      await waitFor('the carried counts in Redis', async () => (await reader.get(key)) === '30');
      // So the rest of the window is refused everywhere (before: 30 more admitted through Redis).
      const after = await Promise.all(windows.map((w) => w.take('ep', 30, 1, NOW)));
      expect(after.every((d) => d > 0)).toBe(true);
      expect(await reader.get(key)).toBe('30');
    } finally {
      await reader.close().catch(() => reader.destroy());
      await Promise.all(all.map((l) => l.close()));
    }
  });

  it('one slow answer: the part finds Redis back by itself, with no traffic, so the real outage after it is reported (issue 36)', async () => {
    const reports: boolean[] = [];
    const l = await RedisLimits.open({ url: redis.url, keyPrefix: freshRedisPrefix(), log: () => {}, onOutage: (down) => reports.push(down) });
    try {
      const w = l.window('rps', 1000);
      expect(await w.take('a', 100, 1, NOW)).toBe(0);
      redis.pause();
      try {
        expect(await w.take('b', 100, 1, NOW)).toBe(0); // no answer in 250 ms: memory decided
      } finally {
        redis.resume();
      }
      expect(reports).toEqual([true]);
      // No decision is asked from here on.
      await waitFor('the outage to end without traffic', () => l.shared);
      expect(reports).toEqual([true, false]);
      await redis.kill();
      await waitFor('the real outage reported', () => reports.length === 3);
      expect(reports).toEqual([true, false, true]);
    } finally {
      await redis.start();
      await l.close();
    }
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { LiveInstances, shareOf } from '../src/limits/index.js';
import { Store } from '../src/store/index.js';
import { testConfig } from './helpers/service.js';
import { freshSchema, testDatabaseUrl, type TestSchema } from './helpers/shared-stores.js';

describe('shareOf: one instance\'s part of a fleet-wide limit', () => {
  it('is limit / live instances, rounded down, at least 1; the whole limit alone', () => {
    expect(shareOf(50, 1)).toBe(50);
    expect(shareOf(50, 2)).toBe(25);
    expect(shareOf(50, 3)).toBe(16);
    expect(shareOf(2, 3)).toBe(1);
    expect(shareOf(1, 10)).toBe(1);
  });
});

/** Heartbeats in the store (SQLite here, PostgreSQL with RPCCTL_TEST_DATABASE_URL). */
describe('LiveInstances', () => {
  let dir: string;
  let schema: TestSchema | undefined;
  let store: Store;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rpcctl-live-'));
    schema = testDatabaseUrl ? await freshSchema() : undefined;
    store = await Store.open({ dataDir: dir, config: parseConfig(testConfig()), syncCatalog: 'if-empty', url: schema?.url, env: { RPCCTL_MASTER_KEY: 'e5'.repeat(32) } });
  });
  afterAll(async () => {
    await store?.close();
    await schema?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts the instances that beat within the last few seconds, itself included; one that left or went silent drops out', async () => {
    const changes: number[] = [];
    const now = 1_800_000_000_000;
    const a = new LiveInstances({ db: store.db, instanceId: 'a', onChange: (n) => changes.push(n) });
    const b = new LiveInstances({ db: store.db, instanceId: 'b' });
    const c = new LiveInstances({ db: store.db, instanceId: 'c' });
    expect(await a.beat(now)).toBe(1);
    expect(await b.beat(now + 100)).toBe(2);
    expect(await c.beat(now + 200)).toBe(3);
    expect(await a.beat(now + 1000)).toBe(3);
    await c.leave();
    expect(await a.beat(now + 2000)).toBe(2);
    // b stops beating (killed): after a few missed heartbeats it no longer counts.
    expect(await a.beat(now + 3000)).toBe(2);
    expect(await a.beat(now + 5000)).toBe(1);
    expect(changes).toEqual([3, 2, 1]);
    expect(a.live).toBe(1);
  });
});

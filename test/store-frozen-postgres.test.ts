import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { startService } from '../src/serve/service.js';
import { isStoreUnavailable } from '../src/store/index.js';
import { privatePostgresUnavailable, startPrivatePostgres } from './helpers/private-servers.js';
import { testConfig } from './helpers/service.js';
import { describeUnless } from './helpers/skips.js';

const why = privatePostgresUnavailable();
const QUERY_TIMEOUT_MS = 1000;

/** Settles with what `p` settled with, or says it had not after `ms`: a hang fails the test instead of timing it out. */
async function within<T>(p: Promise<T>, ms: number): Promise<{ value: T } | { error: unknown } | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((r) => { timer = setTimeout(() => r('hung'), ms); });
  try {
    return await Promise.race([p.then((value) => ({ value }), (error: unknown) => ({ error })), hung]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A frozen PostgreSQL (SIGSTOP, a paused VM) keeps its connections open and answers nothing:
 * no connection error ever comes, so only a client-side bound ends a query. Without it the
 * usage flush, the probe and the scanners waited for ever, and so did a stop.
 */
describeUnless(why, `a frozen PostgreSQL${why ? ` (skipped: ${why})` : ''}`, () => {
  it('a query fails within store.query_timeout_ms as the store being away, and the service still stops', async () => {
    const pg = await startPrivatePostgres();
    const dir = mkdtempSync(join(tmpdir(), 'rpcctl-frozen-pg-'));
    let paused = false;
    try {
      const config = testConfig({ store: { query_timeout_ms: QUERY_TIMEOUT_MS } });
      parseConfig(config);
      const configFile = join(dir, 'config.json');
      writeFileSync(configFile, JSON.stringify(config));
      const service = await startService({
        configFile, dataDir: dir, databaseUrl: pg.url, log: () => {},
        env: { ...process.env, RPCCTL_MASTER_KEY: 'c3'.repeat(32), RPCCTL_DATABASE_URL: '', RPCCTL_REDIS_URL: '' },
      });
      await sql`select 1`.execute(service.store.db);

      pg.pause();
      paused = true;
      const started = Date.now();
      const query = await within(sql`select 1`.execute(service.store.db), 10 * QUERY_TIMEOUT_MS);
      expect(query).not.toBe('hung');
      expect(query).toHaveProperty('error');
      // The API answers it as it answers a store that is away: 503, retry.
      expect(isStoreUnavailable((query as { error: unknown }).error)).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(QUERY_TIMEOUT_MS - 50);

      // Its final usage flush and the background tasks' queries fail in time too.
      expect(await within(service.stop(), 20 * QUERY_TIMEOUT_MS)).toHaveProperty('value');
    } finally {
      if (paused) pg.resume();
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

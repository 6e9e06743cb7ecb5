import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * The suites run on SQLite by default, and on PostgreSQL + Redis when
 * `RPCCTL_TEST_DATABASE_URL` / `RPCCTL_TEST_REDIS_URL` are set (`.ci/run` does both passes).
 * Every service a test starts gets a schema of its own, so parallel files never collide.
 */
export const testDatabaseUrl = process.env.RPCCTL_TEST_DATABASE_URL || undefined;
export const testRedisUrl = process.env.RPCCTL_TEST_REDIS_URL || undefined;

/** A new, empty schema in the test database; its URL sets the search_path to it. */
export interface TestSchema { url: string; schema: string; drop(): Promise<void> }

/** `suffix` (lower-case letters, digits, `_`) lengthens the name, up to PostgreSQL's 63 bytes. */
export async function freshSchema(baseUrl = testDatabaseUrl, suffix = ''): Promise<TestSchema> {
  if (!baseUrl) throw new Error('no test database: set RPCCTL_TEST_DATABASE_URL');
  const schema = `t_${randomBytes(6).toString('hex')}${suffix}`;
  await admin(baseUrl, `CREATE SCHEMA ${schema}`);
  const u = new URL(baseUrl);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return reuseSchema({ url: u.toString(), schema }, baseUrl);
}

export function reuseSchema(s: { url: string; schema: string }, baseUrl = testDatabaseUrl!): TestSchema {
  return { ...s, drop: () => admin(baseUrl, `DROP SCHEMA IF EXISTS ${s.schema} CASCADE`).catch(() => {}) };
}

async function admin(url: string, statement: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(statement);
  } finally {
    await c.end();
  }
}

/** A Redis key prefix of the test's own, so parallel files sharing one Redis never share a window. */
export function freshRedisPrefix(): string {
  return `rpcctl-test:${randomBytes(6).toString('hex')}:`;
}

/** Reachable PostgreSQL/Redis on the machine, for tests that need them and say why they skip. */
export async function reachable(url: string | undefined): Promise<boolean> {
  if (!url) return false;
  try {
    if (url.startsWith('redis')) {
      const { createClient } = await import('redis');
      const c = createClient({ url, socket: { connectTimeout: 1000, reconnectStrategy: false } });
      c.on('error', () => {});
      await c.connect();
      await c.quit();
      return true;
    }
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

/**
 * For tests that run `rpcctl serve`/`admin` as child processes: with a test database, a fresh
 * schema in `RPCCTL_DATABASE_URL` for the children (they inherit the environment); returns the
 * cleanup. Without one, nothing changes and the children use SQLite.
 */
export async function childProcessesOnTestDatabase(): Promise<() => Promise<void>> {
  if (!testDatabaseUrl) return async () => {};
  const s = await freshSchema();
  process.env.RPCCTL_DATABASE_URL = s.url;
  return async () => {
    delete process.env.RPCCTL_DATABASE_URL;
    await s.drop();
  };
}

export interface TestRedis {
  /** Undefined when no Redis can be had; `why` then says why (for the skip message). */
  url: string | undefined;
  why: string | undefined;
  stop(): Promise<void>;
}

/**
 * The Redis a test file may use: the one `RPCCTL_TEST_REDIS_URL` names, else a private server on
 * a spare port. Never whatever answers on 6379 unasked: on a contributor's machine that is their
 * own Redis, holding their own keys.
 */
export async function testRedis(): Promise<TestRedis> {
  if (testRedisUrl) {
    const up = await reachable(testRedisUrl);
    return { url: up ? testRedisUrl : undefined, why: up ? undefined : `no Redis answers at ${testRedisUrl}`, stop: async () => {} };
  }
  const { privateRedisUnavailable, startPrivateRedis } = await import('./private-servers.js');
  const why = privateRedisUnavailable();
  if (why) return { url: undefined, why, stop: async () => {} };
  const r = await startPrivateRedis();
  return { url: r.url, why: undefined, stop: () => r.stop() };
}

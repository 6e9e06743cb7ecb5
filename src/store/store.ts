import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, Migrator, sql, type LogEvent } from 'kysely';
import type { DatabaseSync } from 'node:sqlite';
import type { Config } from '../config/index.js';
import { openSqlite, withStartupLock } from './sqlite-dialect.js';
import { isPostgresUrl, openPostgres, PostgresSchemaPlugin, storeKindOf, type StoreKind } from './dialect.js';
import { Notifications } from './notify.js';
import { migrationProvider } from './migrations.js';
import { loadMasterKey, SecretBox } from './secrets.js';
import { loadCatalog, syncCatalog, type Catalog } from './catalog.js';
import type { Database } from './tables.js';

export interface OpenStoreOptions {
  dataDir: string;
  config: Config;
  /**
   * Write config's networks and plans into the store. `serve` always does; `admin` only on a
   * store that has none yet, so an admin run without `--config` cannot undo serve's catalog.
   */
  syncCatalog: 'always' | 'if-empty';
  env?: NodeJS.ProcessEnv;
  /** Told each query's duration (metrics). */
  onQuery?: (ms: number, ok: boolean) => void;
  /** `postgres://...` for the shared store of multi-instance mode; otherwise SQLite in the data dir. */
  url?: string;
  /** PostgreSQL: a query unanswered after this fails (config `store.query_timeout_ms`; default 30 s). */
  queryTimeoutMs?: number;
}

/** The store's URL: `--database`, else `$RPCCTL_DATABASE_URL`, else config `store.url`; none is SQLite. */
export function storeUrl(flag: string | undefined, config: Config, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return flag || env.RPCCTL_DATABASE_URL || config.store.url || undefined;
}

/** Serialises the start of instances on one PostgreSQL: migrations and the catalog sync. */
const START_LOCK = 0x72706363;

export class Store {
  readonly db: Kysely<Database>;
  readonly kind: StoreKind;
  /** The SQLite handle; undefined on PostgreSQL. Only the store's own maintenance uses it. */
  readonly raw: DatabaseSync | undefined;
  readonly secrets: SecretBox;
  readonly dataDir: string;
  /** Cross-instance wake-ups (PostgreSQL LISTEN); on SQLite subscribing does nothing. */
  readonly notifications: Notifications;
  catalog!: Catalog;

  private constructor(db: Kysely<Database>, kind: StoreKind, raw: DatabaseSync | undefined, secrets: SecretBox, dataDir: string, notifications: Notifications) {
    this.db = db;
    this.kind = kind;
    this.raw = raw;
    this.secrets = secrets;
    this.dataDir = dataDir;
    this.notifications = notifications;
  }

  static async open(opts: OpenStoreOptions): Promise<Store> {
    mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
    let db: Kysely<Database>;
    let store: Store;
    const onQuery = opts.onQuery;
    const log = onQuery ? (e: LogEvent) => onQuery(e.queryDurationMillis, e.level === 'query') : undefined;
    const secrets = new SecretBox(loadMasterKey(opts.dataDir, opts.env));
    if (isPostgresUrl(opts.url)) {
      const { dialect } = openPostgres(opts.url, { queryTimeoutMs: opts.queryTimeoutMs });
      db = new Kysely<Database>({ dialect, plugins: [new PostgresSchemaPlugin()], log });
      store = new Store(db, 'postgres', undefined, secrets, opts.dataDir, new Notifications(opts.url));
    } else {
      if (opts.url) throw new Error('store URL must start with postgres:// or postgresql:// (omit it for SQLite in the data dir)');
      const { dialect, raw } = openSqlite(join(opts.dataDir, 'rpcctl.db'));
      db = new Kysely<Database>({ dialect, log });
      store = new Store(db, 'sqlite', raw, secrets, opts.dataDir, new Notifications(undefined));
    }
    try {
      if (store.kind === 'postgres') {
        // Instances starting together: one migrates and syncs the catalog, the others wait and
        // then find nothing left to do.
        // A migration may run long (an index on a big table), and the others wait for it: the
        // start has its own connection, without the running service's query bound.
        const startDb = new Kysely<Database>({ dialect: openPostgres(opts.url!, { max: 1, queryTimeoutMs: 0 }).dialect, plugins: [new PostgresSchemaPlugin()] });
        try {
          await startDb.connection().execute(async (conn) => {
            await sql`select pg_advisory_lock(${START_LOCK})`.execute(conn);
            try {
              await prepare(conn, opts, secrets);
            } finally {
              await sql`select pg_advisory_unlock(${START_LOCK})`.execute(conn);
            }
          });
        } finally {
          await startDb.destroy();
        }
      } else {
        // Every process on a fresh data dir migrates in turn, never two at once.
        await withStartupLock(join(opts.dataDir, 'rpcctl.db.lock'), () => prepare(db, opts, secrets));
      }
      store.catalog = await loadCatalog(db);
    } catch (err) {
      await store.notifications.close();
      await db.destroy();
      throw err;
    }
    return store;
  }

  /** True when the store answers; `/health` reports it. */
  async ping(): Promise<boolean> {
    try {
      await sql`select 1`.execute(this.db);
      return true;
    } catch {
      return false;
    }
  }

  async reloadCatalog(): Promise<Catalog> {
    this.catalog = await loadCatalog(this.db);
    return this.catalog;
  }

  async close(): Promise<void> {
    await this.notifications.close();
    await this.db.destroy();
  }
}

async function prepare(db: Kysely<Database>, opts: OpenStoreOptions, secrets: SecretBox): Promise<void> {
  // Kysely looks for its migration tables in every schema; pin it to ours, so a database that
  // holds other schemas (a test per schema, another product) cannot mislead it.
  const migrationTableSchema = storeKindOf(db) === 'postgres'
    ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
    : undefined;
  const { error, results } = await new Migrator({ db, provider: migrationProvider, migrationTableSchema }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`store migration ${failed ?? ''} failed: ${(error as Error).message ?? String(error)}`);
  }
  await checkMasterKey(db, secrets);
  const empty = !(await db.selectFrom('plans').select('id').limit(1).executeTakeFirst());
  if (opts.syncCatalog === 'always' || empty) await syncCatalog(db, opts.config);
}

const KEY_CHECK = 'master_key_check';

/**
 * Every instance (and `rpcctl admin`) must seal and open secrets with one master key. A store
 * keeps a value sealed with the first key it saw; a process with another key stops here with
 * the reason, rather than later failing to read every API key.
 */
async function checkMasterKey(db: Kysely<Database>, secrets: SecretBox): Promise<void> {
  await db.insertInto('store_meta').values({ key: KEY_CHECK, value: secrets.seal('rpcctl', `store:${KEY_CHECK}`) })
    .onConflict((oc) => oc.column('key').doNothing()).execute();
  const row = await db.selectFrom('store_meta').select('value').where('key', '=', KEY_CHECK).executeTakeFirstOrThrow();
  try {
    secrets.open(row.value, `store:${KEY_CHECK}`);
  } catch {
    throw new Error('the master key is not the one this store\'s secrets are sealed with: give every instance and `rpcctl admin` the same RPCCTL_MASTER_KEY (or the same master.key)');
  }
}

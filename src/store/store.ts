import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, Migrator } from 'kysely';
import type { DatabaseSync } from 'node:sqlite';
import type { Config } from '../config/index.js';
import { openSqlite, withStartupLock } from './sqlite-dialect.js';
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
}

export class Store {
  readonly db: Kysely<Database>;
  readonly raw: DatabaseSync;
  readonly secrets: SecretBox;
  readonly dataDir: string;
  catalog!: Catalog;

  private constructor(db: Kysely<Database>, raw: DatabaseSync, secrets: SecretBox, dataDir: string) {
    this.db = db;
    this.raw = raw;
    this.secrets = secrets;
    this.dataDir = dataDir;
  }

  static async open(opts: OpenStoreOptions): Promise<Store> {
    mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
    const { dialect, raw } = openSqlite(join(opts.dataDir, 'rpcctl.db'));
    const onQuery = opts.onQuery;
    const db = new Kysely<Database>({ dialect, log: onQuery ? (e) => onQuery(e.queryDurationMillis, e.level === 'query') : undefined });
    const store = new Store(db, raw, new SecretBox(loadMasterKey(opts.dataDir, opts.env)), opts.dataDir);
    try {
      // Every process on a fresh data dir migrates in turn, never two at once.
      await withStartupLock(join(opts.dataDir, 'rpcctl.db.lock'), async () => {
        const { error, results } = await new Migrator({ db, provider: migrationProvider }).migrateToLatest();
        if (error) {
          const failed = results?.find((r) => r.status === 'Error')?.migrationName;
          throw new Error(`store migration ${failed ?? ''} failed: ${(error as Error).message ?? String(error)}`);
        }
        const empty = !(await db.selectFrom('plans').select('id').limit(1).executeTakeFirst());
        if (opts.syncCatalog === 'always' || empty) await syncCatalog(db, opts.config);
      });
      store.catalog = await loadCatalog(db);
    } catch (err) {
      await db.destroy();
      throw err;
    }
    return store;
  }

  async reloadCatalog(): Promise<Catalog> {
    this.catalog = await loadCatalog(this.db);
    return this.catalog;
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}

import { existsSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Kysely, Migrator, sql } from 'kysely';
import { migrationProvider } from './migrations.js';
import { isPostgresUrl, openPostgres, PostgresSchemaPlugin } from './dialect.js';
import { openSqlite } from './sqlite-dialect.js';
import { RpcctlError } from '../util/errors.js';

/**
 * Operator maintenance on a store without starting it: opening one through Store.open would
 * migrate it, which is exactly what a backup before an upgrade and `migrate --check` must not do.
 */

export const SQLITE_FILE = 'rpcctl.db';

export class StoreMaintenanceError extends RpcctlError {
  readonly code: 'E_NO_STORE' | 'E_TARGET_EXISTS' | 'E_BACKUP_CHECK';
  constructor(code: StoreMaintenanceError['code'], message: string) {
    super(message);
    this.name = 'StoreMaintenanceError';
    this.code = code;
  }
}

export interface MigrationStatus {
  /** Applied, in name order. */
  applied: string[];
  /** This version's migrations the store has not had yet, in the order they would run. */
  pending: string[];
  /** Applied to the store but unknown to this version: a newer version migrated it. */
  unknown: string[];
}

/** The migration state of the store at `url` (PostgreSQL) or in `dataDir` (SQLite); read only. */
export async function migrationStatus(opts: { dataDir: string; url?: string }): Promise<MigrationStatus> {
  const db = new Kysely<any>(isPostgresUrl(opts.url)
    ? { dialect: openPostgres(opts.url, { max: 1 }).dialect, plugins: [new PostgresSchemaPlugin()] }
    : { dialect: openSqlite(sqliteFile(opts.dataDir)).dialect });
  try {
    const schema = isPostgresUrl(opts.url) ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema : undefined;
    const migrator = new Migrator({ db, provider: migrationProvider, migrationTableSchema: schema });
    const known = await migrator.getMigrations();
    const names = new Set(known.map((m) => m.name));
    const applied = known.filter((m) => m.executedAt !== undefined).map((m) => m.name);
    const pending = known.filter((m) => m.executedAt === undefined).map((m) => m.name);
    // Names the store recorded that this version has no migration for (getMigrations() leaves them out).
    const recorded = !(await hasMigrationTable(db, schema)) ? []
      : (await sql<{ name: string }>`select name from ${sql.table('kysely_migration')} order by name`.execute(db)).rows.map((r) => r.name);
    return { applied, pending, unknown: recorded.filter((n) => !names.has(n)) };
  } finally {
    await db.destroy();
  }
}

async function hasMigrationTable(db: Kysely<any>, schema: string | undefined): Promise<boolean> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  return tables.some((t) => t.name === 'kysely_migration' && (schema === undefined || t.schema === schema));
}

function sqliteFile(dataDir: string): string {
  const file = join(dataDir, SQLITE_FILE);
  // Opening a missing file would create an empty store: say there is none instead.
  if (!existsSync(file)) throw new StoreMaintenanceError('E_NO_STORE', `no store in ${dataDir} (no ${SQLITE_FILE}): give the service's --data-dir`);
  return file;
}

/**
 * A consistent copy of the live SQLite store in `dataDir` at `target`: one read transaction
 * (VACUUM INTO), so writers carry on and the copy is the store as of one moment, compacted.
 * Written under a temporary name and renamed, so `target` is never a partial file; checked
 * with `PRAGMA quick_check` before the rename.
 */
export function backupSqlite(dataDir: string, target: string): { bytes: number } {
  const file = sqliteFile(dataDir);
  if (existsSync(target)) throw new StoreMaintenanceError('E_TARGET_EXISTS', `${target} exists: give a new file name (a backup never overwrites)`);
  const partial = join(dirname(target), `.${basename(target)}.partial-${process.pid}`);
  rmSync(partial, { force: true });
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    db.exec('PRAGMA busy_timeout = 10000');
    db.prepare('VACUUM INTO ?').run(partial);
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  } finally {
    db.close();
  }
  const copy = new DatabaseSync(partial, { readOnly: true });
  let check: string;
  let bytes: number;
  try {
    check = String((copy.prepare('PRAGMA quick_check').get() as { quick_check: string }).quick_check);
    const page = copy.prepare('PRAGMA page_count').get() as { page_count: number };
    const size = copy.prepare('PRAGMA page_size').get() as { page_size: number };
    bytes = Number(page.page_count) * Number(size.page_size);
  } finally {
    copy.close();
  }
  if (check !== 'ok') {
    rmSync(partial, { force: true });
    throw new StoreMaintenanceError('E_BACKUP_CHECK', `the copy failed its integrity check (${check}); nothing was written to ${target}`);
  }
  renameSync(partial, target);
  return { bytes };
}

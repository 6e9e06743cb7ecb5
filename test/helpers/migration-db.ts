import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, Migrator, sql } from 'kysely';
import { migrationProvider } from '../../src/store/migrations.js';
import { openSqlite } from '../../src/store/sqlite-dialect.js';
import { openPostgres, PostgresSchemaPlugin } from '../../src/store/dialect.js';
import { freshSchema } from './shared-stores.js';

/**
 * A store of its own (a temporary SQLite file, or a fresh PostgreSQL schema) and a migrator over
 * it, for a test that migrates up to one migration, writes what the data looked like then, and
 * runs the next one. `cleanup` drops it.
 */
export async function migrationDb(kind: 'sqlite' | 'postgres'): Promise<{ db: Kysely<any>; migrator: Migrator; cleanup: () => Promise<void> }> {
  let db: Kysely<any>;
  let cleanup: () => Promise<void>;
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'rpcctl-migration-'));
    db = new Kysely({ dialect: openSqlite(join(dir, 'rpcctl.db')).dialect });
    cleanup = async () => { await db.destroy(); rmSync(dir, { recursive: true, force: true }); };
  } else {
    const schema = await freshSchema();
    db = new Kysely({ dialect: openPostgres(schema.url).dialect, plugins: [new PostgresSchemaPlugin()] });
    cleanup = async () => { await db.destroy(); await schema.drop(); };
  }
  const migrationTableSchema = kind === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]!.s : undefined;
  return { db, migrator: new Migrator({ db, provider: migrationProvider, migrationTableSchema }), cleanup };
}

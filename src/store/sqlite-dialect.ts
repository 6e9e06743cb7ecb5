import { chmodSync } from 'node:fs';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { SqliteDialect, type SqliteDatabase, type SqliteStatement } from 'kysely';

/**
 * Kysely's SqliteDialect speaks the better-sqlite3 interface; node:sqlite differs only in
 * taking parameters variadically and in how it tells a reader from a writer. This adapter is
 * the whole difference, so we keep the built-in driver and need no native addon.
 */
class NodeSqliteStatement implements SqliteStatement {
  readonly reader: boolean;
  readonly #stmt: StatementSync;
  constructor(stmt: StatementSync) {
    this.#stmt = stmt;
    this.reader = stmt.columns().length > 0;
  }
  all(parameters: ReadonlyArray<unknown>): unknown[] {
    return this.#stmt.all(...(parameters as SqlValue[]));
  }
  run(parameters: ReadonlyArray<unknown>): { changes: number | bigint; lastInsertRowid: number | bigint } {
    return this.#stmt.run(...(parameters as SqlValue[]));
  }
  iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown> {
    return this.#stmt.iterate(...(parameters as SqlValue[])) as IterableIterator<unknown>;
  }
}

type SqlValue = null | number | bigint | string | Uint8Array;

class NodeSqliteDatabase implements SqliteDatabase {
  readonly #db: DatabaseSync;
  // Kysely prepares every query it runs; caching by SQL text keeps hot queries cheap.
  readonly #cache = new Map<string, NodeSqliteStatement>();
  constructor(db: DatabaseSync) {
    this.#db = db;
  }
  prepare(sql: string): SqliteStatement {
    let stmt = this.#cache.get(sql);
    if (!stmt) {
      stmt = new NodeSqliteStatement(this.#db.prepare(sql));
      if (this.#cache.size > 500) this.#cache.clear();
      this.#cache.set(sql, stmt);
    }
    return stmt;
  }
  close(): void {
    this.#cache.clear();
    this.#db.close();
  }
}

export function openSqlite(file: string): { dialect: SqliteDialect; raw: DatabaseSync } {
  const raw = new DatabaseSync(file);
  // Secrets in it are sealed, but the rest (accounts, usage) is nobody else's business either.
  chmodSync(file, 0o600);
  raw.exec('PRAGMA journal_mode = WAL');
  raw.exec('PRAGMA synchronous = NORMAL');
  // `rpcctl admin` writes to the same file while `serve` runs; wait for the lock instead of failing.
  raw.exec('PRAGMA busy_timeout = 5000');
  raw.exec('PRAGMA foreign_keys = ON');
  return { dialect: new SqliteDialect({ database: new NodeSqliteDatabase(raw) }), raw };
}

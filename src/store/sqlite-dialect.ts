import { chmodSync } from 'node:fs';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import {
  CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type SqliteDatabase, type SqliteDialectConfig,
  type SqliteStatement,
} from 'kysely';

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

/**
 * Write transactions take the write lock when they begin (`BEGIN IMMEDIATE`), so they wait
 * their turn under busy_timeout. A deferred `BEGIN` that reads first and writes later fails at
 * once with SQLITE_BUSY when another process wrote in between, busy_timeout or not.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  readonly #raw: DatabaseSync;
  constructor(config: SqliteDialectConfig, raw: DatabaseSync) {
    super(config);
    this.#raw = raw;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  /**
   * On a full disk or an I/O error SQLite has already rolled the transaction back: a second
   * ROLLBACK would fail with "no transaction is active" and hide the cause (the API answered
   * 500 instead of 503).
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.#raw.isTransaction) return;
    await super.rollbackTransaction(connection);
  }
}

class NodeSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #raw: DatabaseSync;
  constructor(config: SqliteDialectConfig, raw: DatabaseSync) {
    super(config);
    this.#config = config;
    this.#raw = raw;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config, this.#raw);
  }
}

/** How long a process waits for another one's lock: start-up migrations, a long write. */
const BUSY_TIMEOUT_MS = 5000;

export function openSqlite(file: string): { dialect: SqliteDialect; raw: DatabaseSync } {
  const raw = new DatabaseSync(file);
  // First, before anything that locks (switching to WAL does): `serve` and `rpcctl admin` may
  // open a fresh data dir at the same moment; wait for the lock instead of failing.
  raw.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  // Secrets in it are sealed, but the rest (accounts, usage) is nobody else's business either.
  chmodSync(file, 0o600);
  raw.exec('PRAGMA journal_mode = WAL');
  raw.exec('PRAGMA synchronous = NORMAL');
  raw.exec('PRAGMA foreign_keys = ON');
  return { dialect: new NodeSqliteDialect({ database: new NodeSqliteDatabase(raw) }, raw), raw };
}

/**
 * Runs `fn` while holding an exclusive lock that other processes on the same data dir wait
 * for: the start-up work (migrations, catalog sync) runs one process at a time. The lock is a
 * second SQLite file held in an exclusive transaction, so the OS drops it if its holder dies.
 */
export async function withStartupLock<T>(file: string, fn: () => Promise<T>, waitMs = 60_000): Promise<T> {
  const lock = new DatabaseSync(file);
  try {
    chmodSync(file, 0o600);
    lock.exec(`PRAGMA busy_timeout = ${waitMs}`);
    lock.exec('BEGIN EXCLUSIVE');
    try {
      return await fn();
    } finally {
      lock.exec('COMMIT');
    }
  } finally {
    lock.close();
  }
}

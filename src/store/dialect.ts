import {
  ColumnDefinitionNode, DataTypeNode, GeneratedNode, OperationNodeTransformer, PostgresAdapter, PostgresDialect, sql,
  type Kysely, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult,
  type RootOperationNode, type UnknownRow,
} from 'kysely';
import pg from 'pg';

/**
 * Everything where SQLite and PostgreSQL differ lives here; the rest of the store is portable
 * Kysely. SQLite runs every query on one connection (Kysely's driver holds a mutex for the
 * length of a transaction), so its transactions are serial and need no locks; PostgreSQL runs
 * them concurrently under READ COMMITTED and needs the explicit ones below.
 */
export type StoreKind = 'sqlite' | 'postgres';

export function isPostgresUrl(url: string | undefined): url is string {
  return url !== undefined && /^postgres(ql)?:\/\//i.test(url);
}

export function storeKindOf(db: Kysely<any>): StoreKind {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/** No query the running service makes takes near this long; migrations run without it (Store.open). */
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

export interface PostgresPoolOptions {
  max?: number;
  /**
   * A query that has no answer after this fails (`Query read timeout`) and its caller retries: a
   * frozen server (SIGSTOP, a paused VM) keeps its connections and answers nothing, so without
   * it the usage flush, probes and scanners would wait for ever, and a stop with them.
   * 0: no bound, for migrations, which may legitimately run long.
   */
  queryTimeoutMs?: number;
}

export function openPostgres(url: string, o: PostgresPoolOptions = {}): { dialect: PostgresDialect; pool: pg.Pool } {
  const queryTimeoutMs = o.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  const pool = new pg.Pool({
    connectionString: url,
    max: o.max ?? 10,
    // Fail a query fast when the server is gone instead of queueing it for ever: the API turns
    // that into a 503 and the gateway keeps serving from memory.
    connectionTimeoutMillis: 3000,
    ...(queryTimeoutMs > 0 ? { query_timeout: queryTimeoutMs } : {}),
    // A server whose host vanished (no RST ever comes) is found out by the kernel.
    keepAlive: true,
    idleTimeoutMillis: 30_000,
    // Counts and millisecond timestamps are bigint on PostgreSQL; they stay far below 2^53, and
    // the code reads them as numbers exactly as it does on SQLite.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID || oid === NUMERIC_OID ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // A client losing its server must not crash the process, idle (the pool's 'error') or
  // checked out (pg emits 'error' on the client too); its query rejects and the caller answers.
  pool.on('error', () => {});
  pool.on('connect', (client) => { client.on('error', () => {}); });
  return { dialect: new PostgresDialect({ pool }), pool };
}

/**
 * Migrations are written once, with SQLite's vocabulary. On PostgreSQL every `integer` column
 * becomes `bigint` (millisecond timestamps and block heights outgrow int4) and an
 * autoincrement key becomes an identity column.
 */
class PostgresSchemaTransformer extends OperationNodeTransformer {
  protected override transformColumnDefinition(node: ColumnDefinitionNode): ColumnDefinitionNode {
    const out = super.transformColumnDefinition(node);
    const isInteger = DataTypeNode.is(out.dataType) && out.dataType.dataType === 'integer';
    if (!isInteger && !out.autoIncrement) return out;
    return ColumnDefinitionNode.cloneWith(
      { ...out, dataType: isInteger ? DataTypeNode.create('bigint') : out.dataType } as ColumnDefinitionNode,
      out.autoIncrement ? { autoIncrement: false, generated: GeneratedNode.create({ byDefault: true, identity: true }) } : {},
    );
  }
}

export class PostgresSchemaPlugin implements KyselyPlugin {
  readonly #t = new PostgresSchemaTransformer();
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const k = args.node.kind;
    return k === 'CreateTableNode' || k === 'AlterTableNode' ? this.#t.transformNode(args.node) : args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/**
 * Serialises transactions that check-then-write one thing (an account's endpoint count, a
 * scanner's cursor) across instances: a transaction-scoped advisory lock on PostgreSQL, nothing
 * on SQLite where transactions are serial anyway.
 */
export async function lockFor(trx: Kysely<any>, name: string): Promise<void> {
  if (storeKindOf(trx) !== 'postgres') return;
  await sql`select pg_advisory_xact_lock(hashtext(${name}))`.execute(trx);
}

/**
 * Wakes other instances (`LISTEN`, notify.ts) when the transaction commits; nothing on SQLite.
 * Several payloads go in one statement: a batch of 1,000 changes is one round trip, not 1,000.
 * `channel` is one of CHANNELS; the name sent on is the store's schema's (channelNameSql).
 */
export async function notifyIn(trx: Kysely<any>, channel: string, payload: string | readonly string[]): Promise<void> {
  if (storeKindOf(trx) !== 'postgres') return;
  const name = sql.raw(channelNameSql(channel));
  if (typeof payload === 'string') {
    await sql`select pg_notify(${name}, ${payload})`.execute(trx);
    return;
  }
  if (payload.length === 0) return;
  await sql`select pg_notify(${name}, p) from unnest(${sql.val([...payload])}::text[]) as p`.execute(trx);
}

/** `pg_notify` channels the instances share; each is its store schema's (channelNameSql). */
export const CHANNELS = {
  endpoints: 'rpcctl_endpoints',
  outbox: 'rpcctl_outbox',
  watches: 'rpcctl_watches',
  auth: 'rpcctl_auth',
  /** A block's events were recorded or taken off (a reorg): payment engines look now. */
  events: 'rpcctl_events',
} as const;

/**
 * The name `channel` has on the server, as SQL evaluated on the connection that notifies or
 * listens: both use the store's URL, so both see one `current_schema()`. Channels are the
 * database's, not a schema's: without the schema in the name, deployments in two schemas of
 * one database would wake each other, with ids that mean other rows here. The `public` schema
 * keeps the bare name of the releases before (a default deployment's upgrade changes nothing);
 * another schema is appended, or its md5 when the name would pass PostgreSQL's 63-byte limit
 * (`.` and `#` keep the two forms apart). One text for both ends, so they cannot disagree.
 */
export function channelNameSql(channel: string): string {
  if (!/^[a-z_]+$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
  return `(select case when s = 'public' then '${channel}'
    when octet_length('${channel}.' || s) <= 63 then '${channel}.' || s
    else '${channel}#' || md5(s) end from coalesce(current_schema(), 'public') as s)`;
}

const SQLITE_DISK_ERRORS = new Set([8, 10, 13, 14]);

/**
 * The store did not answer (server down, connection refused or cut, pool timed out, SQLite
 * locked past its busy timeout, SQLite's disk full or read-only): the request is fine and may
 * be retried, so the API says 503, not 500.
 */
export function isStoreUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; errcode?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  // PostgreSQL SQLSTATE class 08 (connection exception), 57P01-57P03 (shutting down, cannot connect now).
  if (/^08/.test(code) || /^57P0[1-3]$/.test(code)) return true;
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND'].includes(code)) return true;
  // SQLite's disk: full (13), read-only (8), an I/O error (10), the file gone (14). Extended codes keep the primary in the low byte.
  if (code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number' && SQLITE_DISK_ERRORS.has(e.errcode & 0xff)) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  if (/Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connect ECONNREFUSED|Query read timeout/i.test(message)) return true;
  return /database is locked/.test(message);
}

/** A `/health` probe of the store, cached briefly so a scraper cannot turn it into load. */
export function storeHealth(ping: () => Promise<boolean>, ttlMs = 1000): () => Promise<boolean> {
  let last = 0;
  let value: Promise<boolean> | undefined;
  return () => {
    const now = Date.now();
    if (!value || now - last > ttlMs) {
      last = now;
      value = ping();
    }
    return value;
  };
}

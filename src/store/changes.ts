import type { Kysely } from 'kysely';
import type { StatementSync } from 'node:sqlite';
import type { Store } from './store.js';
import type { Database } from './tables.js';
import { CHANNELS, notifyIn } from './dialect.js';

/**
 * Kinds of change that in-memory caches of the store follow.
 * - `auth`: API keys (created, revoked, allowlists) and accounts (plan, webhook secret). Every
 *   writer bumps the `store_changes` counter in its transaction, so other processes see it.
 * - `endpoints`: endpoint rows. Writers announce it; other instances on PostgreSQL say so on
 *   `CHANNELS.endpoints`; there is no counter, so caches of them also age out.
 */
export type ChangeKind = 'auth' | 'endpoints';

/** A few microseconds each (a read lock on the WAL index): worth sparing on a hot path. */
const SQLITE_CHECK_MS = 100;

const CHANNEL: Record<ChangeKind, string> = { auth: CHANNELS.auth, endpoints: CHANNELS.endpoints };

const local = new WeakMap<Store, Map<ChangeKind, Set<() => void>>>();

/** Counts an `auth` change in the writer's transaction; other instances are told on commit. */
export async function countChangeIn(trx: Kysely<Database>, kind: 'auth'): Promise<void> {
  await trx.updateTable('store_changes').set((eb) => ({ version: eb('version', '+', 1) })).where('name', '=', kind).execute();
  await notifyIn(trx, CHANNEL[kind], kind);
}

/**
 * Tells this process's caches, after the change committed and before the caller answers:
 * a change made through the API is seen by the very next request.
 */
export function announceChange(store: Store, kind: ChangeKind): void {
  for (const f of local.get(store)?.get(kind) ?? []) f();
}

function onLocal(store: Store, kind: ChangeKind, f: () => void): () => void {
  let kinds = local.get(store);
  if (!kinds) local.set(store, (kinds = new Map()));
  let set = kinds.get(kind);
  if (!set) kinds.set(kind, (set = new Set()));
  set.add(f);
  return () => set.delete(f);
}

/**
 * A generation number that moves whenever the store's `kind` of data may have changed; a
 * cache entry filled at an older generation is stale. Changes made in this process move it at
 * once. Changes made by other processes (`rpcctl admin`, other instances) move it at the next
 * look: on SQLite a look asks `PRAGMA data_version` (no I/O; it changes only when another
 * connection committed), at most once per SQLITE_CHECK_MS, and only then reads the counter; on
 * PostgreSQL a NOTIFY moves it at once, and the counter is read at most once per `checkMs`, so
 * a lost notification delays a revocation by at most that.
 */
export class ChangeWatch {
  readonly #store: Store;
  readonly #kind: ChangeKind;
  readonly #checkMs: number;
  #generation = 0;
  #counter: number | undefined;
  #dataVersion: StatementSync | undefined;
  #counterStmt: StatementSync | undefined;
  #lastDataVersion: unknown;
  #checkedAt = 0;
  #checking: Promise<number> | undefined;
  readonly #unsubscribe: (() => void)[] = [];

  constructor(store: Store, kind: ChangeKind, opts: { checkMs?: number } = {}) {
    this.#store = store;
    this.#kind = kind;
    this.#checkMs = opts.checkMs ?? 1000;
    const bump = () => { this.#generation++; };
    this.#unsubscribe.push(onLocal(store, kind, bump));
    if (store.raw) {
      this.#dataVersion = store.raw.prepare('PRAGMA data_version');
      this.#lastDataVersion = this.#dataVersion.get()?.data_version;
      if (kind === 'auth') this.#counterStmt = store.raw.prepare('SELECT version FROM store_changes WHERE name = ?');
      this.#counter = this.#readCounterSync();
    } else {
      // A reconnect may have missed notifications: treat it as a change.
      this.#unsubscribe.push(store.notifications.on(CHANNEL[kind], bump, bump));
    }
  }

  /** The current generation, after a look at the store when one is due. */
  current(nowMs = Date.now()): number | Promise<number> {
    if (this.#dataVersion) {
      if (nowMs - this.#checkedAt < SQLITE_CHECK_MS) return this.#generation;
      this.#checkedAt = nowMs;
      const v = this.#dataVersion.get()?.data_version;
      if (v !== this.#lastDataVersion) {
        this.#lastDataVersion = v;
        if (this.#counterStmt) {
          const counter = this.#readCounterSync();
          if (counter !== this.#counter) {
            this.#counter = counter;
            this.#generation++;
          }
        } else {
          this.#generation++;
        }
      }
      return this.#generation;
    }
    if (this.#kind !== 'auth' || nowMs - this.#checkedAt < this.#checkMs) return this.#generation;
    // Requests arriving while the counter is read share the one read.
    this.#checking ??= this.#store.db.selectFrom('store_changes').select('version').where('name', '=', this.#kind).executeTakeFirst()
      .then((row) => {
        const counter = Number(row?.version ?? 0);
        if (this.#counter !== undefined && counter !== this.#counter) this.#generation++;
        this.#counter = counter;
        this.#checkedAt = Date.now();
        return this.#generation;
      })
      .finally(() => { this.#checking = undefined; });
    return this.#checking;
  }

  close(): void {
    for (const f of this.#unsubscribe) f();
  }

  #readCounterSync(): number | undefined {
    const row = this.#counterStmt?.get(this.#kind) as { version?: number } | undefined;
    return row?.version === undefined ? undefined : Number(row.version);
  }
}

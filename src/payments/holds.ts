import { sql, type Kysely } from 'kysely';
import type { Database, Environment, WatchedAddressRow } from '../store/index.js';
import type { Skipped } from '../chains/family.js';
import type { EnvironmentChains } from '../watch/chains.js';
import { useForOrders } from '../watch/watches.js';
import { guard, type EngineDeps } from './engine-core.js';

/**
 * Tells Address Watch what the orders use a watch for after an order's `open` or `held`
 * changed, in the same transaction: watch/ keeps it on the watch row (slots, webhooks, the
 * API's refusal to remove it) and removes an orders' watch no order uses any more. Returns
 * the removed watch, for the registry after the commit.
 */
export async function tellWatch(trx: Kysely<Database>, watchId: string): Promise<WatchedAddressRow | undefined> {
  const using = (q: 'open' | 'held') => {
    const base = trx.selectFrom('payment_orders').select('id').where('watch_id', '=', watchId);
    return (q === 'open' ? base.where('open', '=', 1) : base.where('held', '=', 1).where('open', '=', 0)).limit(1).executeTakeFirst();
  };
  const [open, held] = [await using('open'), await using('held')];
  // Only an instance of the previous release leaves an order owning a merchant's watch (watches.ts handToMerchant).
  const owned = await trx.selectFrom('payment_orders').select('id').where('watch_id', '=', watchId).where('owns_watch', '=', 1).limit(1).executeTakeFirst();
  return useForOrders(trx, watchId, { open: open !== undefined, held: held !== undefined, owned: owned !== undefined });
}

/**
 * The merchant took the orders' watch (`merchant`: no order owns it now) or gave it back to a
 * closed order's finality hold (`order`: the newest such order owns it), in `owns_watch`, which
 * an instance of the previous release reads as the holder (watches.ts HolderChanged).
 */
export async function ownsWatch(trx: Kysely<Database>, watchId: string, holder: 'merchant' | 'order'): Promise<void> {
  if (holder === 'merchant') {
    await trx.updateTable('payment_orders').set({ owns_watch: 0 }).where('watch_id', '=', watchId).where('owns_watch', '=', 1).execute();
    return;
  }
  const held = await trx.selectFrom('payment_orders').select('id').where('watch_id', '=', watchId).where('held', '=', 1).where('open', '=', 0)
    .orderBy('id', 'desc').executeTakeFirst();
  if (held) await trx.updateTable('payment_orders').set({ owns_watch: 1 }).where('id', '=', held.id).execute();
}

/** The open order listening through a watch of the account (to name it when the API refuses to remove the watch). */
export async function openOrderOf(db: Kysely<Database>, accountId: number, watchId: string): Promise<{ order_id: string; payment_id: string } | undefined> {
  return db.selectFrom('payment_orders').select(['order_id', 'payment_id'])
    .where('account_id', '=', accountId).where('watch_id', '=', watchId).where('open', '=', 1).executeTakeFirst();
}

/**
 * Closed orders keeping their watch until their funding is final, with their highest funding
 * block (null: none). Funding a reorg took off counts too, at the height it had: until the chain
 * there is final, the node may mine the transaction again, and only a watched address sees it.
 */
function heldQuery(db: Kysely<Database>) {
  return db.selectFrom('payment_orders as o')
    .leftJoin('payment_funding as f', (j) => j.onRef('f.order_pk', '=', 'o.id').on('f.counted', '=', 1))
    .select(['o.id', 'o.network_environment_id', sql<number | null>`max(f.block_height)`.as('top')])
    .where('o.held', '=', sql.lit(1)).groupBy(['o.id', 'o.network_environment_id']).orderBy('o.id').limit(200);
}

/** The last final height per environment, asked of the node at most once a second. */
export class Finality {
  /** Undefined: the node could not say, kept as long as an answer (a pass asks once per environment, not once per row). */
  readonly #final = new Map<number, { atMs: number; height: number | undefined }>();
  /** When each environment's failure was last logged: once a minute, not once a pass. */
  readonly #loggedAt = new Map<number, number>();
  readonly #chains: EnvironmentChains;
  readonly #log: (line: string) => void;

  constructor(chains: EnvironmentChains, log: (line: string) => void) {
    this.#chains = chains;
    this.#log = log;
  }

  /** The highest final block of `env`; undefined when the node cannot say. */
  async height(env: Environment, nowMs: number): Promise<number | undefined> {
    if (env.finalityDepth === 0) return Number.MAX_SAFE_INTEGER;
    const cached = this.#final.get(env.id);
    if (cached && nowMs - cached.atMs < 1000 && nowMs >= cached.atMs) return cached.height;
    if (env.upstreams.length === 0) return undefined;
    const chain = this.#chains.of(env);
    try {
      const height = (await chain.finalized?.()) ?? (await chain.head()) - env.finalityDepth + 1;
      this.#final.set(env.id, { atMs: nowMs, height });
      this.#loggedAt.delete(env.id);
      return height;
    } catch (err) {
      this.#final.set(env.id, { atMs: nowMs, height: undefined });
      this.#logFailure(env, nowMs, `payments: finality of ${env.network.slug}-${env.slug} unknown: ${(err as Error).message}`);
      return undefined;
    }
  }

  /**
   * The node's block at `height` now (as the scanner compares it with what it kept): its hash,
   * SKIPPED or undefined where it keeps none (no upstream: none to ask); null when the node
   * failed to answer (ask again later).
   */
  async blockHash(env: Environment, height: number, nowMs = Date.now()): Promise<string | Skipped | undefined | null> {
    if (env.upstreams.length === 0) return undefined;
    try {
      return await this.#chains.of(env).blockHash(height);
    } catch (err) {
      this.#logFailure(env, nowMs, `payments: block ${height} of ${env.network.slug}-${env.slug} unknown: ${(err as Error).message}`);
      return null;
    }
  }

  /** A node that fails is logged once a minute per environment, not once a row or a pass. */
  #logFailure(env: Environment, nowMs: number, line: string): void {
    const logged = this.#loggedAt.get(env.id);
    if (logged !== undefined && nowMs - logged < 60_000 && nowMs >= logged) return;
    this.#loggedAt.set(env.id, nowMs);
    this.#log(line);
  }
}

/**
 * Closed orders whose funding is final let their watch go (a removed watch costs nothing).
 * Final: at or below the node's `finalized` block where it reports one, else
 * `finality_depth` confirmations deep (0: at once, Stellar).
 */
export async function release(d: EngineDeps, finality: Finality, nowMs: number): Promise<number> {
  const held = await heldQuery(d.store.db).execute();
  let n = 0;
  for (const h of held) {
    const env = d.store.catalog.environment(h.network_environment_id);
    if (h.top !== null && env) {
      const final = await finality.height(env, nowMs);
      if (final === undefined || Number(h.top) > final) continue;
    }
    n += await guard(() => letGo(d, h.id));
  }
  return n;
}

/**
 * Ends a finality hold: Address Watch removes the orders' watch unless another order still
 * uses it (the address may back a newer order meanwhile); the merchant's stays theirs.
 */
async function letGo(d: EngineDeps, orderPk: number): Promise<number> {
  let done = 0;
  const removed = await d.store.db.transaction().execute(async (trx) => {
    const res = await trx.updateTable('payment_orders').set({ held: 0 }).where('id', '=', orderPk).where('held', '=', 1).where('open', '=', 0)
      .returning('watch_id').executeTakeFirst();
    if (!res) return undefined;
    done = 1;
    return tellWatch(trx, res.watch_id);
  });
  if (removed) d.watches.removed(removed);
  return done;
}

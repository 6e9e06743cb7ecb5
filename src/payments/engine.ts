import { sql, type Kysely } from 'kysely';
import type { Config } from '../config/index.js';
import type { Database, Store, WatchedAddressRow } from '../store/index.js';
import { DEFAULT_FAMILY } from '../chains/traits.js';
import { covers } from './amounts.js';
import { assetOfRow, hitIsAsset } from './assets.js';
import { combine, failsAt, type AmlProvider, type AmlResult } from './aml/types.js';
import { AmlRetryError } from './aml/types.js';
import { getSettings, OrderChangedError, openOrderAt, transition, type FailAt, type OrderRow } from './orders.js';
import type { WatchRegistry } from '../watch/registry.js';
import { TipWatcher } from './tip.js';
import { Supervisor, type Backoff } from '../runtime/supervisor.js';
import { deleteWatchIn, restoreWatchIn, watchAt } from '../watch/watches.js';
import { EnvironmentChains } from '../watch/chains.js';
import type { Environment } from '../store/index.js';

/** What the engine tells the in-memory watch registry after a commit. */
export interface WatchSync {
  added(row: WatchedAddressRow): void;
  removed(row: WatchedAddressRow): void;
}

export interface EngineOptions {
  store: Store;
  config: Config;
  aml: AmlProvider;
  watches: WatchSync;
  log: (line: string) => void;
  /** Told when deliveries were written, so the worker sends them now. */
  onDeliveries: () => void;
  tickMs: number;
  /** How long a screening claim holds a job: longer than the provider's slowest answer. */
  amlLeaseMs: number;
  /** Matches unconfirmed blocks (networks with confirmations > 1) for early `seen`. */
  registry?: WatchRegistry;
  /** Runs the loops (`payments-tick`, `payments-aml`, `payments-sightings`): a failure is logged at error, counted and retried with back-off. */
  supervisor?: Supervisor;
}

/** The engine's loops under the supervisor. */
export const PAYMENTS_TASKS = { orders: 'payments-tick', aml: 'payments-aml', sightings: 'payments-sightings' } as const;
/** Retries of a failing loop: at most every 5 s, so orders move again within 5 s of the store. */
const LOOP_BACKOFF: Backoff = { minMs: 250, maxMs: 5000 };

interface EventRow {
  event_id: number;
  body: string;
  block_height: number;
  order_pk: number;
}

/*
 * The engine's per-tick reads, each served by an index so that a tick costs the open orders and
 * the work waiting, not the events, orders and funding kept. Exported for the
 * query-plan tests. `open = 1` and `removed = 1` are literals: a partial index (`WHERE open = 1`)
 * is only usable when the query's own condition is the same constant, not a bound parameter.
 */

/**
 * New `payment` events of open orders' watches, not yet applied to the order, oldest first; with
 * `held`, the same for closed orders keeping their watch until their funding is final (a
 * transaction of theirs that a reorg took off and the chain mined again). From the orders (a
 * partial index holds only the open ones, another the held ones) to each one's watch's payment
 * events since the order was created (`watch_events_watch_payments`): joined the other way
 * round, the order of `e.id` made SQLite walk every event kept to find none.
 */
export function ingestQuery(db: Kysely<Database>, orders: 'open' | 'held' = 'open') {
  // CROSS JOIN keeps the orders outer on SQLite, whose planner (no statistics) would otherwise
  // walk the events in id order to spare the sort; PostgreSQL plans it as the join it is.
  return db.selectFrom('payment_orders as o').crossJoin('watch_events as e')
    .leftJoin('payment_funding as f', (j) => j.onRef('f.event_id', '=', 'e.id').onRef('f.order_pk', '=', 'o.id'))
    .select(['e.id as event_id', 'e.body', 'e.block_height', 'o.id as order_pk'])
    .where(`o.${orders}`, '=', sql.lit(1)).whereRef('e.watch_id', '=', 'o.watch_id').where('e.type', '=', 'payment').whereRef('e.created_at', '>=', 'o.created_at')
    .where('e.removed', '=', 0).where('f.id', 'is', null)
    .orderBy('e.id').limit(500);
}

/**
 * Closed orders keeping their watch until their funding is final, with their highest funding
 * block (null: none). Funding a reorg took off counts too, at the height it had: until the chain
 * there is final, the node may mine the transaction again, and only a watched address sees it.
 */
export function heldQuery(db: Kysely<Database>) {
  return db.selectFrom('payment_orders as o')
    .leftJoin('payment_funding as f', (j) => j.onRef('f.order_pk', '=', 'o.id').on('f.counted', '=', 1))
    .select(['o.id', 'o.network_environment_id', sql<number | null>`max(f.block_height)`.as('top')])
    .where('o.held', '=', sql.lit(1)).groupBy(['o.id', 'o.network_environment_id']).orderBy('o.id').limit(200);
}

/** Funding not yet taken off whose event left the chain: from the few removed events (a partial index). */
export function reorgedQuery(db: Kysely<Database>) {
  return db.selectFrom('watch_events as e').crossJoin('payment_funding as f')
    .select(['f.id', 'f.order_pk', 'f.tx_hash']).whereRef('f.event_id', '=', 'e.id').where('e.removed', '=', sql.lit(1)).where('f.removed', '=', 0).limit(500);
}

/** Orders due to expire: `status` leads `payment_orders_status`, so finished orders are never read. */
export function expireQuery(db: Kysely<Database>, nowMs: number) {
  return db.selectFrom('payment_orders').select('id')
    .where((eb) => eb.or([
      eb.and([eb('status', 'in', ['pending', 'underpaid']), eb('expires_ms', '<=', nowMs)]),
      eb.and([eb('status', '=', 'seen'), eb('monitor_until_ms', '<=', nowMs)]),
    ])).limit(200);
}

/** Expired orders still holding their address past the late window: the open ones only. */
export function closeWindowsQuery(db: Kysely<Database>, nowMs: number) {
  return db.selectFrom('payment_orders').select('id')
    .where('status', '=', 'expired').where('open', '=', sql.lit(1)).where('monitor_until_ms', '<=', nowMs).limit(200);
}

/** Open orders that can still be seen (for unconfirmed sightings). */
export function sightingsQuery(db: Kysely<Database>) {
  return db.selectFrom('payment_orders').select(['id', 'watch_id', 'network_environment_id'])
    .where('open', '=', sql.lit(1)).where('status', 'in', ['pending', 'underpaid', 'seen', 'expired']);
}

/** Screening retry backoff: a provider that keeps failing holds the order, never passes it. */
const AML_BACKOFF_MS = [2_000, 10_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000];

/** Statuses still waiting for (more) funds. */
const ACTIVE: readonly string[] = ['pending', 'seen', 'underpaid'];

/**
 * Drives orders from Address Watch's recorded events: funding, reorgs, expiry, the end of
 * the late-payment window, and the screening queue. Every transition is written with its
 * outbox delivery in one transaction; every step is a compare-and-set on the order, so
 * two processes on one store cannot apply one change twice. Two loops: screening (which
 * waits on a remote provider) never holds up funding and expiry.
 */
export class PaymentEngine {
  readonly #o: EngineOptions;
  #running = false;
  #loops: Promise<void>[] = [];
  #timers = new Set<NodeJS.Timeout>();
  #wakers = new Set<() => void>();
  readonly #tip: TipWatcher | undefined;
  readonly #supervisor: Supervisor;
  /** Chain adapters, shared by the finality checks and the unconfirmed-block look. */
  readonly #chains = new EnvironmentChains();
  /** The last final height per environment and when it was asked: at most once a second. */
  readonly #final = new Map<number, { atMs: number; height: number }>();

  /** The engine's adapters, for what else asks the nodes (the checkout page's EVM chain id). */
  get chains(): EnvironmentChains {
    return this.#chains;
  }

  constructor(o: EngineOptions) {
    this.#o = o;
    this.#supervisor = o.supervisor ?? new Supervisor({ log: o.log });
    this.#tip = o.registry && new TipWatcher(o.store, o.registry, this.#chains);
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loops = [this.#loop(PAYMENTS_TASKS.orders, () => this.step()), this.#loop(PAYMENTS_TASKS.aml, () => this.screenDue())];
    if (this.#tip) this.#loops.push(this.#loop(PAYMENTS_TASKS.sightings, () => this.sightings()));
  }

  async stop(): Promise<void> {
    this.#running = false;
    for (const t of this.#timers) clearTimeout(t);
    for (const w of this.#wakers) w();
    await Promise.all(this.#loops);
    await this.#chains.close();
  }

  /** Look now (after a block was recorded or an order changed). */
  kick(): void {
    for (const w of this.#wakers) w();
  }

  async #loop(name: string, fn: () => Promise<number>): Promise<void> {
    while (this.#running) {
      let busy = 0;
      const ok = await this.#supervisor.run(name, async () => { busy = await fn(); });
      if (!this.#running) break;
      if (busy === 0) {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            this.#timers.delete(timer);
            this.#wakers.delete(done);
            resolve();
          };
          const timer = setTimeout(done, ok ? this.#o.tickMs : this.#supervisor.delay(name, this.#o.tickMs, LOOP_BACKOFF));
          this.#timers.add(timer);
          this.#wakers.add(done);
        });
      }
    }
  }

  /** One pass of funding, reorgs, expiry and window ends; the number of changes made. */
  async step(nowMs = Date.now()): Promise<number> {
    let n = 0;
    // Take-offs first: a transaction a reorg removed and the chain mined again is then `returning`.
    n += await this.#reorged(nowMs);
    n += await this.#ingest(nowMs);
    n += await this.#expire(nowMs);
    n += await this.#closeWindows(nowMs);
    n += await this.#release(nowMs);
    return n;
  }

  /**
   * Transfers to open orders in blocks still short of the network's confirmations: `seen`
   * at once (once per transaction), the rest when the scanner records the confirmed block.
   */
  async sightings(nowMs = Date.now()): Promise<number> {
    const { store, config } = this.#o;
    const open = await sightingsQuery(store.db).execute();
    const byEnv = new Map<number, Map<string, number>>();
    for (const o of open) {
      const env = store.catalog.environment(o.network_environment_id);
      if (!env || env.confirmations <= 1) continue;
      const m = byEnv.get(env.id) ?? new Map<string, number>();
      m.set(o.watch_id, o.id);
      byEnv.set(env.id, m);
    }
    let n = 0;
    for (const [envId, watches] of byEnv) {
      const env = store.catalog.environment(envId)!;
      const look = await this.#tip!.hits(env, new Set(watches.keys()));
      for (const hit of look.hits) {
        const orderPk = watches.get(hit.watchId)!;
        n += await this.#guard(async () => {
          const done = await store.db.transaction().execute(async (trx) => {
            const order = (await this.#order(trx, orderPk))!;
            const asset = assetOfRow(config, env, order.asset, order.decimals);
            if (!hitIsAsset(asset, hit.token) || BigInt(hit.amount) <= 0n) return 0;
            // The sighting's key (order, transaction, still on the chain) is unique in the store:
            // whichever of this look and the scanner's record (#fund) inserts it sends the one `seen`.
            if (!(await this.#sight(trx, orderPk, hit.txHash, nowMs))) return 0;
            if (order.open !== 1 || !['pending', 'underpaid', 'seen', 'expired'].includes(order.status)) return 0;
            const late = order.status === 'expired' || nowMs > Number(order.expires_ms);
            await transition(trx, { store, config }, order, { status: 'seen', txHash: hit.txHash, late }, nowMs);
            return 1;
          });
          if (done) this.#o.onDeliveries();
          return done;
        });
      }
      if (look.present) n += await this.#vanished(watches, look.present, nowMs);
    }
    return n;
  }

  /** Inserts the sighting of `txHash` on the order; false when it was there (its `seen` went out). */
  async #sight(trx: Kysely<Database>, orderPk: number, txHash: string, nowMs: number): Promise<boolean> {
    const inserted = await trx.insertInto('payment_sightings').values({ order_pk: orderPk, tx_hash: txHash, seen_ms: nowMs })
      // No conflict target: the partial unique index (order_pk, tx_hash) WHERE removed = 0 is the
      // table's only key besides the id, on SQLite and PostgreSQL alike (a concurrent insert waits, then conflicts).
      .onConflict((oc) => oc.doNothing()).executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  /**
   * Sightings no longer in the unconfirmed blocks nor recorded by the scanner: the transaction
   * left the chain before it was confirmed. It comes off the order at once; an order at `seen`
   * on it alone goes to `underpaid` (before `expires_at`) or `expired`, reason `reorg`.
   */
  async #vanished(watches: Map<string, number>, present: Set<string>, nowMs: number): Promise<number> {
    const { store, config } = this.#o;
    const orderPks = [...watches.values()];
    if (orderPks.length === 0) return 0;
    const live = await store.db.selectFrom('payment_sightings as s').innerJoin('payment_orders as o', 'o.id', 's.order_pk')
      .leftJoin('payment_funding as f', (j) => j.onRef('f.order_pk', '=', 's.order_pk').onRef('f.tx_hash', '=', 's.tx_hash').on('f.removed', '=', 0))
      .select(['s.id', 's.order_pk', 's.tx_hash', 'o.watch_id']).where('s.order_pk', 'in', orderPks).where('s.removed', '=', 0).where('f.id', 'is', null)
      .execute();
    const gone = live.filter((r) => !present.has(`${r.watch_id} ${r.tx_hash}`));
    if (gone.length === 0) return 0;
    const byOrder = new Map<number, typeof gone>();
    for (const r of gone) byOrder.set(r.order_pk, [...(byOrder.get(r.order_pk) ?? []), r]);
    let n = 0;
    for (const [orderPk, rows] of byOrder) {
      n += await this.#guard(async () => {
        const moved = await store.db.transaction().execute(async (trx) => {
          const order = (await this.#order(trx, orderPk))!;
          // Recorded by the scanner since the look (its block confirmed): #fund takes it, not gone.
          const recorded = new Set((await trx.selectFrom('watch_events as e')
            .leftJoin('payment_funding as f', (j) => j.onRef('f.event_id', '=', 'e.id').on('f.order_pk', '=', orderPk))
            .select('e.body').where('e.watch_id', '=', order.watch_id).where('e.type', '=', 'payment').where('e.removed', '=', 0)
            .where('e.created_at', '>=', order.created_at).where('f.id', 'is', null).execute())
            .map((e) => (JSON.parse(e.body) as { tx_hash: string }).tx_hash));
          const off = rows.filter((r) => !recorded.has(r.tx_hash));
          if (off.length === 0) return 0;
          await trx.updateTable('payment_sightings').set({ removed: 1 }).where('id', 'in', off.map((r) => r.id)).where('removed', '=', 0).execute();
          if (order.status !== 'seen') return 0;
          // Another transfer still waiting for its confirmations keeps the order at `seen`.
          const waiting = await trx.selectFrom('payment_sightings as s')
            .leftJoin('payment_funding as f', (j) => j.onRef('f.order_pk', '=', 's.order_pk').onRef('f.tx_hash', '=', 's.tx_hash').on('f.removed', '=', 0))
            .select('s.id').where('s.order_pk', '=', orderPk).where('s.removed', '=', 0).where('f.id', 'is', null).executeTakeFirst();
          if (waiting) return 0;
          const total = await this.#total(trx, orderPk);
          await transition(trx, { store, config }, order, {
            status: nowMs >= Number(order.expires_ms) ? 'expired' : 'underpaid', txHash: null, reason: 'reorg',
            receivedRaw: total, overpaid: total > BigInt(order.amount_raw),
          }, nowMs);
          return 1;
        });
        if (moved) this.#o.onDeliveries();
        return moved;
      });
    }
    return n;
  }

  /** New `payment` events of open orders' watches, not yet applied to the order. */
  async #ingest(nowMs: number): Promise<number> {
    const db = this.#o.store.db;
    const rows: EventRow[] = [...await ingestQuery(db).execute(), ...await ingestQuery(db, 'held').execute()];
    if (rows.length === 0) return 0;
    const byOrder = new Map<number, EventRow[]>();
    for (const r of rows) byOrder.set(r.order_pk, [...(byOrder.get(r.order_pk) ?? []), r]);
    let changed = 0;
    for (const [orderPk, events] of byOrder) changed += await this.#guard(() => this.#fund(orderPk, events, nowMs));
    return changed || rows.length;
  }

  async #fund(orderPk: number, events: EventRow[], nowMs: number): Promise<number> {
    const { store, config } = this.#o;
    const settings = await getSettings(store.db, (await this.#order(store.db, orderPk))!.account_id);
    const result = await store.db.transaction().execute(async (trx) => {
      let order = (await this.#order(trx, orderPk))!;
      // Funding whose block left the chain and is not taken off yet (the scanner rewound after
      // #reorged looked): counting the new chain now would count a re-mined transaction twice.
      const stale = await trx.selectFrom('payment_funding as f').innerJoin('watch_events as e', 'e.id', 'f.event_id').select('f.id')
        .where('f.order_pk', '=', orderPk).where('f.removed', '=', 0).where('e.removed', '=', 1).executeTakeFirst();
      if (stale) return 0;
      const env = store.catalog.environment(order.network_environment_id);
      const asset = assetOfRow(config, env, order.asset, order.decimals);
      // A transaction the order counted before a reorg took it off, now back in a new block.
      const before = await trx.selectFrom('payment_funding').select(['tx_hash', 'late']).where('order_pk', '=', orderPk)
        .where('removed', '=', 1).where('counted', '=', 1).execute();
      const returning = new Map(before.map((r) => [r.tx_hash, r.late === 1]));
      // Sighted in a block before `expires_at` (the look-ahead's `seen`), even if a reorg took it
      // off before it was confirmed: paid in time, so in time when mined again after expiry.
      const sightedInTime = new Set((await trx.selectFrom('payment_sightings').select('tx_hash').where('order_pk', '=', orderPk)
        .where('seen_ms', '<', Number(order.expires_ms)).execute()).map((r) => r.tx_hash));
      // A closed order still watching its address (the finality hold) keeps what comes to it, as
      // funds after `paid` always were (amount_received, no transition), unless a newer open
      // order took the address: then a new transfer is that order's.
      const keepsNew = order.open === 1 || !(await openOrderAt(trx, order.network_environment_id, order.address_key));
      const fresh: Array<{ tx: string }> = [];
      let onlyReturning = true;
      let lateTx = false;
      for (const e of events) {
        const body = JSON.parse(e.body) as { tx_hash: string; from: string | null; token: string | null; amount: string; direction: string };
        const counted = body.direction === 'in' && hitIsAsset(asset, body.token) && BigInt(body.amount) > 0n && (keepsNew || returning.has(body.tx_hash));
        const txLate = returning.has(body.tx_hash) ? returning.get(body.tx_hash)!
          : !sightedInTime.has(body.tx_hash) && (order.status === 'expired' || order.late === 1);
        await trx.insertInto('payment_funding').values({
          order_pk: orderPk, event_id: e.event_id, tx_hash: body.tx_hash, from_address: body.from, amount_raw: body.amount,
          block_height: e.block_height, counted: counted ? 1 : 0, late: txLate ? 1 : 0, removed: 0, created_at: new Date(nowMs).toISOString(),
        }).execute();
        if (counted) {
          fresh.push({ tx: body.tx_hash });
          if (!returning.has(body.tx_hash)) onlyReturning = false;
          if (txLate) lateTx = true;
        }
      }
      if (fresh.length === 0) return 0;
      // Late when a transfer is: one paid in time and mined again after `expires_at` is not.
      const late = lateTx || (order.late === 1 && !onlyReturning);
      const total = await this.#total(trx, orderPk);
      const amount = BigInt(order.amount_raw);
      const overpaid = total > amount;
      // Funds after the order was decided, or while it is being screened, are recorded on it
      // (amount_received, tx_hashes) without a new transition.
      if (!ACTIVE.includes(order.status) && order.status !== 'expired') {
        await trx.updateTable('payment_orders').set({ received_raw: total.toString(), overpaid: overpaid ? 1 : 0, updated_at: new Date(nowMs).toISOString() })
          .where('id', '=', orderPk).execute();
        return 0;
      }
      let n = 0;
      // One `seen` per funding transaction and sighting: the store's unique key decides who sends
      // it, the unconfirmed look (sightings()) or this record, whichever inserts the sighting.
      for (const f of fresh) {
        if (!(await this.#sight(trx, orderPk, f.tx, nowMs))) continue;
        order = await transition(trx, { store, config }, order, { status: 'seen', txHash: f.tx, receivedRaw: total, overpaid, late }, nowMs);
        n++;
      }
      const lastTx = fresh.at(-1)!.tx;
      const enough = covers(total, amount, settings.underpaid_tolerance_bps);
      // The total rides on the decision too: a transaction whose `seen` went out unconfirmed has no other.
      const received = { receivedRaw: total, overpaid };
      if (late && !settings.accept_late) {
        order = await transition(trx, { store, config }, order, { status: 'expired', txHash: lastTx, reason: enough ? 'late' : 'partial', ...received }, nowMs);
      } else if (enough) {
        order = await transition(trx, { store, config }, order, { status: 'aml_check', txHash: lastTx, aml: null, ...received }, nowMs);
        await trx.insertInto('aml_jobs').values({
          order_pk: orderPk, status: 'pending', attempts: 0, next_attempt_ms: nowMs, lease_until: null, last_error: null, created_at: new Date(nowMs).toISOString(),
        }).execute();
      } else if (late || order.status === 'expired') {
        order = await transition(trx, { store, config }, order, { status: 'expired', txHash: lastTx, reason: 'partial', ...received }, nowMs);
      } else {
        order = await transition(trx, { store, config }, order, { status: 'underpaid', txHash: lastTx, ...received }, nowMs);
      }
      return n + 1;
    });
    if (result > 0) this.#o.onDeliveries();
    return result;
  }

  /**
   * Funding whose block left the chain comes off its order at once, whatever its status; the
   * order moves back if no longer covered. Its sighting goes too, so the same transaction in a
   * new block is `seen` again.
   */
  async #reorged(nowMs: number): Promise<number> {
    const { store, config } = this.#o;
    const rows = await reorgedQuery(store.db).execute();
    if (rows.length === 0) return 0;
    const byOrder = new Map<number, Array<{ id: number; tx_hash: string }>>();
    for (const r of rows) byOrder.set(r.order_pk, [...(byOrder.get(r.order_pk) ?? []), r]);
    for (const [orderPk, gone] of byOrder) {
      await this.#guard(async () => {
        const reopened = await store.db.transaction().execute(async (trx) => {
          await trx.updateTable('payment_funding').set({ removed: 1 }).where('id', 'in', gone.map((g) => g.id)).execute();
          await trx.updateTable('payment_sightings').set({ removed: 1 }).where('order_pk', '=', orderPk)
            .where('tx_hash', 'in', [...new Set(gone.map((g) => g.tx_hash))]).where('removed', '=', 0).execute();
          const order = (await this.#order(trx, orderPk))!;
          const settings = await getSettings(trx, order.account_id);
          const total = await this.#total(trx, orderPk);
          const amount = BigInt(order.amount_raw);
          const decided = order.status === 'failed' || order.status === 'pending';
          if (decided || (covers(total, amount, settings.underpaid_tolerance_bps) && order.status !== 'seen')) {
            await trx.updateTable('payment_orders').set({ received_raw: total.toString(), overpaid: total > amount ? 1 : 0 }).where('id', '=', orderPk).execute();
            return undefined;
          }
          await trx.updateTable('aml_jobs').set({ status: 'cancelled', last_error: 'funding left the chain (reorg)' })
            .where('order_pk', '=', orderPk).where('status', '=', 'pending').execute();
          const expired = nowMs >= Number(order.expires_ms);
          let watch: WatchedAddressRow | undefined;
          // A paid order had let its address go: it is payable again, so it takes it back; taken
          // back after `expires_at` it is an expired order like any other, which keeps its address
          // (late payments recorded) until the late window ends.
          const taken = await trx.selectFrom('payment_orders').select('id').where('network_environment_id', '=', order.network_environment_id)
            .where('address_key', '=', order.address_key).where('open', '=', 1).executeTakeFirst();
          const reopen = order.open === 0 && !taken && (!expired || nowMs < Number(order.monitor_until_ms));
          const current = reopen ? await this.#rewatch(trx, order) : { order, watch: undefined };
          watch = current.watch;
          await transition(trx, { store, config }, current.order, {
            status: expired ? 'expired' : 'underpaid', txHash: null, reason: 'reorg', receivedRaw: total, overpaid: total > amount,
            aml: null, close: false,
          }, nowMs);
          // Open again: it holds its address (and a slot) like any open order, not a finality hold.
          if (reopen) await trx.updateTable('payment_orders').set({ open: 1, held: 0 }).where('id', '=', orderPk).execute();
          return watch;
        });
        if (reopened) this.#o.watches.added(reopened);
        this.#o.onDeliveries();
        return 1;
      });
    }
    return rows.length;
  }

  /** Orders past `expires_at` with nothing confirmed, or not enough. */
  async #expire(nowMs: number): Promise<number> {
    const { store, config } = this.#o;
    // `seen` at rest waits for confirmations of a transfer made in time; it expires only if
    // they never come (the transfer left the chain) by the end of the late window.
    const due = await expireQuery(store.db, nowMs).execute();
    for (const { id } of due) {
      await this.#guard(() => store.db.transaction().execute(async (trx) => {
        const order = (await this.#order(trx, id))!;
        if (!ACTIVE.includes(order.status)) return 0;
        const window = config.payments.late_window_s * 1000;
        await transition(trx, { store, config }, order, {
          status: 'expired', txHash: null, reason: BigInt(order.received_raw) > 0n ? 'partial' : null,
          monitorUntilMs: Math.max(Number(order.expires_ms) + window, order.status === 'seen' ? nowMs + window : 0),
        }, nowMs);
        return 1;
      }));
    }
    if (due.length) this.#o.onDeliveries();
    return due.length;
  }

  /** Expired orders whose late window is over let their address (and watch) go. */
  async #closeWindows(nowMs: number): Promise<number> {
    const due = await closeWindowsQuery(this.#o.store.db, nowMs).execute();
    for (const { id } of due) await this.#guard(() => this.#close(id));
    return due.length;
  }

  /** Ends an order's hold on its address: its watch stays (held) until its funding is final. */
  async #close(orderPk: number): Promise<number> {
    await this.#o.store.db.updateTable('payment_orders').set({ open: 0, held: 1 }).where('id', '=', orderPk).where('open', '=', 1).execute();
    return 1;
  }

  /**
   * Closed orders whose funding is final let their watch go (a removed watch costs nothing).
   * Final: at or below the node's `finalized` block where it reports one, else
   * `finality_depth` confirmations deep (0: at once, Stellar).
   */
  async #release(nowMs: number): Promise<number> {
    const { store } = this.#o;
    const held = await heldQuery(store.db).execute();
    let n = 0;
    for (const h of held) {
      const env = store.catalog.environment(h.network_environment_id);
      if (h.top !== null && env) {
        const final = await this.#finalHeight(env, nowMs);
        if (final === undefined || Number(h.top) > final) continue;
      }
      n += await this.#guard(() => this.#letGo(h.id));
    }
    return n;
  }

  /** The highest final block of `env` (asked at most once a second); undefined when the node cannot say. */
  async #finalHeight(env: Environment, nowMs: number): Promise<number | undefined> {
    if (env.finalityDepth === 0) return Number.MAX_SAFE_INTEGER;
    const cached = this.#final.get(env.id);
    if (cached && nowMs - cached.atMs < 1000 && nowMs >= cached.atMs) return cached.height;
    if (env.upstreams.length === 0) return undefined;
    const chain = this.#chains.of(env);
    try {
      const height = (await chain.finalized?.()) ?? (await chain.head()) - env.finalityDepth + 1;
      this.#final.set(env.id, { atMs: nowMs, height });
      return height;
    } catch (err) {
      this.#o.log(`payments: finality of ${env.network.slug}-${env.slug} unknown: ${(err as Error).message}`);
      return undefined;
    }
  }

  /** Ends a finality hold: the owned watch is removed, or handed to another order that uses it. */
  async #letGo(orderPk: number): Promise<number> {
    let done = 0;
    const removed = await this.#o.store.db.transaction().execute(async (trx) => {
      const res = await trx.updateTable('payment_orders').set({ held: 0 }).where('id', '=', orderPk).where('held', '=', 1).where('open', '=', 0).executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return undefined;
      done = 1;
      const order = (await this.#order(trx, orderPk))!;
      if (order.owns_watch !== 1) return undefined;
      // The address may back a newer order meanwhile (it shares this watch): it keeps the watch.
      const heir = await trx.selectFrom('payment_orders').select('id').where('watch_id', '=', order.watch_id).where('id', '!=', orderPk)
        .where((eb) => eb.or([eb('open', '=', 1), eb('held', '=', 1)])).orderBy('open', 'desc').orderBy('id', 'desc').executeTakeFirst();
      if (heir) {
        await trx.updateTable('payment_orders').set({ owns_watch: 1 }).where('id', '=', heir.id).execute();
        await trx.updateTable('payment_orders').set({ owns_watch: 0 }).where('id', '=', orderPk).execute();
        return undefined;
      }
      return deleteWatchIn(trx, order.watch_id);
    });
    if (removed) this.#o.watches.removed(removed);
    return done;
  }

  /**
   * A reopened order's watch: its own again, or, when the merchant watches the address through
   * the API meanwhile, that watch, shared (the unique (account, environment, address) allows one).
   */
  async #rewatch(trx: Kysely<Database>, order: OrderRow): Promise<{ order: OrderRow; watch: WatchedAddressRow | undefined }> {
    if (order.owns_watch !== 1) return { order, watch: undefined };
    const own = await trx.selectFrom('watched_addresses').select('id').where('watch_id', '=', order.watch_id).executeTakeFirst();
    if (own) return { order, watch: undefined };
    const other = await watchAt(trx, order.account_id, order.network_environment_id, order.address_key);
    if (other) {
      await trx.updateTable('payment_orders').set({ watch_id: other.watch_id, owns_watch: 0 }).where('id', '=', order.id).execute();
      return { order: { ...order, watch_id: other.watch_id, owns_watch: 0 }, watch: undefined };
    }
    const watch = await restoreWatchIn(trx, {
      watch_id: order.watch_id, account_id: order.account_id, network_environment_id: order.network_environment_id,
      network_slug: order.network, address: order.address, address_key: order.address_key,
    });
    return { order, watch };
  }

  /** Screens due jobs: every funding sender of the order; the worst result decides. */
  async screenDue(nowMs = Date.now()): Promise<number> {
    const { store, config, aml } = this.#o;
    const jobs = await store.db.selectFrom('aml_jobs').selectAll().where('status', '=', 'pending').where('next_attempt_ms', '<=', nowMs)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowMs)])).orderBy('id').limit(10).execute();
    let done = 0;
    for (const job of jobs) {
      const claimed = await store.db.updateTable('aml_jobs').set({ lease_until: nowMs + this.#o.amlLeaseMs, attempts: job.attempts + 1 })
        .where('id', '=', job.id).where('status', '=', 'pending').where('attempts', '=', job.attempts).executeTakeFirst();
      if (Number(claimed.numUpdatedRows) !== 1) continue;
      const order = (await this.#order(store.db, job.order_pk))!;
      if (order.status !== 'aml_check') {
        await store.db.updateTable('aml_jobs').set({ status: 'cancelled', lease_until: null }).where('id', '=', job.id).execute();
        continue;
      }
      const env = store.catalog.environment(order.network_environment_id);
      const senders = await store.db.selectFrom('payment_funding').select(['from_address', 'tx_hash']).where('order_pk', '=', order.id)
        .where('counted', '=', 1).where('removed', '=', 0).orderBy('id').execute();
      let result: AmlResult;
      try {
        const seen = new Set<string>();
        const results: AmlResult[] = [];
        for (const s of senders) {
          if (!s.from_address || seen.has(s.from_address.toLowerCase())) continue;
          seen.add(s.from_address.toLowerCase());
          results.push(await aml.screen({ family: env?.network.family ?? DEFAULT_FAMILY, network: order.network, address: s.from_address, txHash: s.tx_hash }));
        }
        if (results.length === 0) throw new Error('no sender to screen');
        result = combine(results);
      } catch (err) {
        const attempt = job.attempts + 1;
        const delay = err instanceof AmlRetryError && err.retryAfterMs !== undefined
          ? Math.max(err.retryAfterMs, 500) : AML_BACKOFF_MS[Math.min(attempt - 1, AML_BACKOFF_MS.length - 1)]!;
        await store.db.updateTable('aml_jobs').set({ next_attempt_ms: Date.now() + delay, lease_until: null, last_error: (err as Error).message })
          .where('id', '=', job.id).execute();
        this.#o.log(`payments: screening ${order.payment_id} failed (attempt ${attempt}, next in ${Math.round(delay / 1000)} s): ${(err as Error).message}`);
        continue;
      }
      await this.#guard(async () => {
        await store.db.transaction().execute(async (trx) => {
          const current = (await this.#order(trx, order.id))!;
          if (current.status !== 'aml_check' || current.seq !== order.seq) return;
          const settings = await getSettings(trx, current.account_id);
          const rejected = failsAt(result.risk_level, settings.aml_fail_at as FailAt);
          const total = await this.#total(trx, current.id);
          const lastTx = senders.at(-1)?.tx_hash ?? null;
          await transition(trx, { store, config }, current, rejected
            ? { status: 'failed', txHash: lastTx, reason: 'aml_rejected', aml: result, close: true }
            : { status: 'paid', txHash: lastTx, reason: null, aml: result, receivedRaw: total, overpaid: total > BigInt(current.amount_raw), close: true });
          await trx.updateTable('aml_jobs').set({ status: 'done', lease_until: null, last_error: null }).where('id', '=', job.id).execute();
          // Closed: the address is free for another order, but the watch stays until the funding
          // is final, so a reorg that takes it off (and a chain that mines it again) is seen.
          await trx.updateTable('payment_orders').set({ held: 1 }).where('id', '=', current.id).execute();
        });
        this.#o.onDeliveries();
        done++;
        return 1;
      });
    }
    return done;
  }

  /** Cancels an order on which nothing was seen: `failed`, reason `canceled`. */
  async cancel(order: OrderRow): Promise<OrderRow> {
    const { store, config } = this.#o;
    const { next, removed } = await store.db.transaction().execute(async (trx) => {
      const current = (await this.#order(trx, order.id))!;
      if (current.status !== 'pending') return { next: current, removed: undefined };
      const next = await transition(trx, { store, config }, current, { status: 'failed', txHash: null, reason: 'canceled', close: true });
      const removed = current.owns_watch === 1
        ? await deleteWatchIn(trx, current.watch_id) : undefined;
      return { next, removed };
    });
    if (removed) this.#o.watches.removed(removed);
    this.#o.onDeliveries();
    return next;
  }

  async #order(db: Kysely<Database>, id: number): Promise<OrderRow | undefined> {
    return db.selectFrom('payment_orders').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async #total(db: Kysely<Database>, orderPk: number): Promise<bigint> {
    const rows = await db.selectFrom('payment_funding').select('amount_raw').where('order_pk', '=', orderPk)
      .where('counted', '=', 1).where('removed', '=', 0).execute();
    return rows.reduce((sum, r) => sum + BigInt(r.amount_raw), 0n);
  }

  /** A lost compare-and-set (another process moved the order) is retried on the next pass. */
  async #guard(fn: () => Promise<number>): Promise<number> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof OrderChangedError) return 0;
      throw err;
    }
  }
}

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { parseConfig, type Config } from '../../src/config/index.js';
import { environmentSchema } from '../../src/config/schema.js';
import { PaymentEngine } from '../../src/payments/engine.js';
import type { OrderRow } from '../../src/payments/orders.js';
import { createOrder } from '../../src/payments/create.js';
import { StaticRates } from '../../src/payments/rates.js';
import type { AmlProvider } from '../../src/payments/aml/types.js';
import { createAccount, Store, type Environment, type CatalogPlan } from '../../src/store/index.js';
import { chainFor } from '../../src/watch/chains.js';
import { WatchRegistry } from '../../src/watch/registry.js';
import { Scanner } from '../../src/watch/scanner.js';
import { allWatches } from '../../src/watch/watches.js';
import { getCursor } from '../../src/watch/record.js';
import type { Supervisor } from '../../src/runtime/supervisor.js';
import { freshSchema, testDatabaseUrl, type TestSchema } from '../helpers/shared-stores.js';
import type { SimTx } from './chain.js';
import { legal, OrderModel, type Status } from './model.js';
import { startNode, type SimFamily, type SimNode } from './nodes.js';
import { PayoutSim } from './payouts.js';

/** One step of a scenario: what happens to the chain, the clock or the instance. */
export type Op =
  | { k: 'pay'; part: 'partial' | 'full' | 'over' }
  | { k: 'mine'; n: number }
  | { k: 'fork'; depth: number; fate: 'remine' | 'remine-late' | 'drop' | 'double'; len: number }
  | { k: 'clock'; to: 'tick' | 'expiry' }
  | { k: 'restart' };

export interface Scenario { ops: Op[]; order: number }

export const AMOUNT = 1_000_000n;
const EXPIRES_S = 600;

/**
 * Scenarios: payments (partial, exact, over), blocks, forks of depth 1 to past the finality
 * depth whose funding is re-mined (at once or later), dropped or double-spent, the clock
 * moving past expiry, and restarts. `order` picks how scanner, look-ahead and engine
 * interleave while an instance catches up: one after the other in one of six orders, or all at once.
 */
export function scenarioArb(finality: number): fc.Arbitrary<Scenario> {
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 3, arbitrary: fc.record({ k: fc.constant('pay' as const), part: fc.constantFrom('partial' as const, 'full' as const, 'over' as const) }) },
    { weight: 4, arbitrary: fc.record({ k: fc.constant('mine' as const), n: fc.integer({ min: 1, max: 3 }) }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('fork' as const), depth: fc.integer({ min: 1, max: finality + 1 }), fate: fc.constantFrom('remine' as const, 'remine-late' as const, 'drop' as const, 'double' as const), len: fc.integer({ min: 0, max: 2 }) }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('clock' as const), to: fc.constantFrom('tick' as const, 'expiry' as const) }) },
    { weight: 1, arbitrary: fc.constant({ k: 'restart' as const }) },
  );
  return fc.record({ ops: fc.array(op, { minLength: 1, maxLength: 10 }), order: fc.integer({ min: 0, max: PERMS.length }) });
}

const PERMS = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] as const;

/** A violated property: its name (for the report) and what was seen. */
export class SimFailure extends Error {
  readonly property: string;
  constructor(property: string, message: string) {
    super(`[${property}] ${message}`);
    this.property = property;
  }
}

/**
 * Properties that hold only once issue 23's rules are in (the address watched until funding is
 * final, one webhook per transition under any interleaving); see the test file's switch.
 */
export const I23_PROPERTIES = new Set(['status', 'received', 'feed-complete', 'one-seen', 'one-per-transition']);

const lowRisk: AmlProvider = {
  name: 'sim',
  screen: async () => ({ provider: 'sim', score: 0, risk_level: 'low', details: [], report_url: null, checked_at: new Date().toISOString() }),
};

/** A supervisor that never runs the scanner's own loop: the simulator steps it. */
const inert = { run: async () => true, delay: () => 1_000_000_000 } as unknown as Supervisor;

interface Instance { registry: WatchRegistry; scanner: Scanner; engine: PaymentEngine }

/**
 * The real code in-process on one store per family: the catalog points at the family's fake
 * node; each scenario is a fresh account and order on the chain where the last one ended.
 */
export class Sim {
  #instance!: Instance;
  #n = 0;
  readonly node: SimNode;
  readonly store: Store;
  readonly config: Config;
  readonly env: Environment;
  readonly plan: CatalogPlan;
  readonly schema: TestSchema | undefined;

  constructor(o: { node: SimNode; store: Store; config: Config; env: Environment; plan: CatalogPlan; schema: TestSchema | undefined }) {
    this.node = o.node;
    this.store = o.store;
    this.config = o.config;
    this.env = o.env;
    this.plan = o.plan;
    this.schema = o.schema;
  }

  static async open(family: SimFamily): Promise<Sim> {
    const node = await startNode(family);
    // The finality depth where the config knows one (issue 23), so a deep fork is past it.
    const extra = 'finality_depth' in environmentSchema.shape ? { finality_depth: node.finality } : {};
    const config = parseConfig({ networks: [node.network(node.url, extra)] });
    const schema = testDatabaseUrl ? await freshSchema() : undefined;
    const store = await Store.open({ dataDir: mkdtempSync(join(tmpdir(), 'rpcctl-sim-')), config, syncCatalog: 'always', env: { RPCCTL_MASTER_KEY: 'ef'.repeat(32) }, url: schema?.url });
    const env = store.catalog.networks.find((n) => n.family === family)!.environments[0]!;
    const plan = [...store.catalog.plans].sort((a, b) => b.webhook_address_slots - a.webhook_address_slots)[0]!;
    const sim = new Sim({ node, store, config, env, plan, schema });
    await sim.#boot();
    return sim;
  }

  async #boot(): Promise<void> {
    const registry = new WatchRegistry();
    registry.load(await allWatches(this.store));
    const scanner = new Scanner({ store: this.store, registry, env: this.env, chain: chainFor(this.env), log: () => {}, pollMs: 1_000_000, owner: 'sim', supervisor: inert });
    await scanner.start();
    const engine = new PaymentEngine({
      store: this.store, config: this.config, aml: lowRisk, log: () => {}, onDeliveries() {}, tickMs: 1_000_000, amlLeaseMs: 60_000, registry,
      watches: { added: (r) => registry.add(r), removed: (r) => registry.remove(r) },
    });
    this.#instance = { registry, scanner, engine };
  }

  /** The instance goes away (in-memory state lost) and a new one starts on the same store. */
  async restart(): Promise<void> {
    await this.#instance.scanner.stop();
    await this.#instance.engine.stop();
    await this.#boot();
  }

  /** Payout lines tracked on this chain by the running instance's scanner (test/sim/payouts.ts). */
  payouts(): PayoutSim {
    return new PayoutSim({ store: this.store, config: this.config, env: this.env, plan: this.plan, node: this.node, registry: () => this.#instance.registry, scanner: () => this.#instance.scanner });
  }

  async close(): Promise<void> {
    await this.#instance.scanner.stop();
    await this.#instance.engine.stop();
    await this.store.close();
    await this.schema?.drop();
    await this.node.close();
  }

  /** Scanner, look-ahead, engine and screening until nothing moves, in the scenario's interleaving. */
  async #settle(now: number, order: number): Promise<void> {
    const { scanner, engine } = this.#instance;
    for (let i = 0; i < 200; i++) {
      let moved = 0;
      if (order >= PERMS.length) {
        // Two instances' worth of racing: scanner, look-ahead and engine at once (the duplicate `seen` race).
        const before = await getCursor(this.store, this.env.id);
        const [, a, b] = await Promise.all([scanner.step(), engine.sightings(now), engine.step(now)]);
        moved = a + b + await engine.screenDue(now) + ((await getCursor(this.store, this.env.id)) === before ? 0 : 1);
        if (moved === 0) return;
        continue;
      }
      for (const which of PERMS[order]!) {
        if (which === 0) {
          // step() says "caught up" also after recording the last confirmed block: progress is the cursor moving.
          const before = await getCursor(this.store, this.env.id);
          await scanner.step();
          moved += (await getCursor(this.store, this.env.id)) === before ? 0 : 1;
        }
        else if (which === 1) moved += await engine.sightings(now);
        else moved += await engine.step(now) + await engine.screenDue(now);
      }
      if (moved === 0) return;
    }
    throw new SimFailure('settles', 'the instance never came to rest');
  }

  /** Runs one scenario; throws a SimFailure naming the step and the property. */
  /** How the scenarios went: lifecycles reached and forks that took funding, so a green run is seen to have explored. */
  readonly coverage = new Map<string, number>();

  async run(s: Scenario): Promise<void> {
    const { node } = this;
    const chain = node.chain;
    const account = (await createAccount(this.store, { planId: this.plan.id })).id;
    const addr = node.address();
    const payer = node.address();
    const { order: created, newWatch } = await createOrder(
      { store: this.store, config: this.config, accountId: account, plan: this.plan, rates: new StaticRates(this.store.db, this.config.payments.rates) },
      { order_id: `sim-${++this.#n}`, network_slug: this.env.network.slug, amount: (Number(AMOUNT) / 10 ** this.#decimals()).toFixed(this.#decimals()), address: addr.given, expires_in: EXPIRES_S },
    );
    if (newWatch) this.#instance.registry.add(newWatch);
    const base = Number(created.created_at ? Date.parse(created.created_at) : Date.now());
    const model = new OrderModel({ address: addr.wire, amount: AMOUNT, startHeight: chain.head + 1, expiresMs: EXPIRES_S * 1000, confirmations: node.confirmations, finality: node.finality });
    let t = 0;
    const mempool: SimTx[] = [];
    const later: SimTx[] = [];
    let mined = 0;
    const done: string[] = [];
    const mine = (txs: SimTx[]) => { chain.mine(txs); mined++; };
    try {
      await this.#settle(base + t, s.order);
      await this.#check(created, model, t);
      for (const op of s.ops) {
        done.push(JSON.stringify(op));
        switch (op.k) {
          case 'pay': {
            const amount = op.part === 'partial' ? AMOUNT / 3n : op.part === 'full' ? AMOUNT : AMOUNT + AMOUNT / 5n;
            // A referenced order (Solana Pay) is paid to the merchant's wallet naming its reference.
            mempool.push({ hash: chain.id('tx'), from: payer.wire, to: addr.wire, amount, ...created.reference !== null && { reference: created.reference } });
            break;
          }
          case 'mine':
            for (let i = 0; i < op.n; i++) mine(i === 0 ? [...mempool.splice(0), ...later.splice(0)] : []);
            break;
          case 'fork': {
            // Only this scenario's blocks: earlier scenarios' orders are done with.
            const depth = Math.min(op.depth, mined);
            if (depth === 0) break;
            model.beforeFork(chain, depth);
            const gone = chain.orphan(depth);
            model.departed(gone.map((tx) => tx.hash));
            mined -= depth;
            const branch: SimTx[][] = Array.from({ length: depth + op.len + (op.len === 0 ? 1 : 0) }, () => []);
            if (op.fate === 'remine') branch[0]!.push(...gone);
            else if (op.fate === 'remine-late') later.push(...gone);
            else if (op.fate === 'double') branch[0]!.push(...gone.map((tx) => ({ ...tx, hash: chain.id('tx'), to: payer.wire })));
            for (const txs of branch) mine(txs);
            break;
          }
          case 'clock':
            t = op.to === 'tick' ? t + 60_000 : Math.max(t + 60_000, EXPIRES_S * 1000 + 60_000);
            break;
          case 'restart':
            await this.restart();
            break;
        }
        node.sync();
        model.observe(chain, t);
        await this.#settle(base + t, s.order);
        await this.#check(created, model, t);
      }
    } catch (err) {
      if (err instanceof SimFailure) {
        err.message += `\n  after: ${done.join(' → ') || '(creation)'}`;
        // The webhooks as sent, to tell which transaction moved the order where.
        const sent = await this.store.db.selectFrom('webhook_deliveries').select(['body']).where('sequence_key', '=', created.payment_id).orderBy('id').execute();
        err.message += `\n  webhooks: ${sent.map((r) => { const b = JSON.parse(r.body) as { event: string; reason: string | null; tx_hash: string | null; late?: boolean }; return `${b.event}(${b.reason ?? '-'}, ${b.tx_hash ? b.tx_hash.replace(/^0x/, '').slice(0, 12) : '-'}${b.late ? ', late' : ''})`; }).join(' → ') || '(none)'}`;
      }
      throw err;
    }
    const last = await this.store.db.selectFrom('payment_orders').select(['status', 'lifecycle']).where('id', '=', created.id).executeTakeFirstOrThrow();
    const note = (k: string) => this.coverage.set(k, (this.coverage.get(k) ?? 0) + 1);
    note(`ends ${last.status}`);
    if (last.lifecycle.includes('paid>')) note('paid, then taken back');
    if (model.leftOnce.size) note('funding left the chain and not back in the same step');
    if (model.relaxed) note('past finality (relaxed)');
    // Past the late window: the order lets its address go, so the next scenarios' ticks do not carry it.
    const far = base + t + 2 * (EXPIRES_S * 1000 + this.config.payments.late_window_s * 1000);
    await this.#instance.engine.step(far);
    await this.#instance.engine.step(far);
  }

  #decimals(): number {
    return { evm: 18, utxo: 8, tron: 6, stellar: 7, solana: 9 }[this.node.family];
  }

  /** Every property, after one step. */
  async #check(created: OrderRow, model: OrderModel, t: number): Promise<void> {
    const db = this.store.db;
    const chain = this.node.chain;
    const order = (await db.selectFrom('payment_orders').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow());
    const hooks = (await db.selectFrom('webhook_deliveries').select(['body']).where('sequence_key', '=', order.payment_id).orderBy('id').execute())
      .map((r) => JSON.parse(r.body) as { event: Status; status: Status; sequence: number; lifecycle: string; tx_hash: string | null; reason: string | null; amount_received_raw: string });

    // Webhooks: one per transition, numbered 1, 2, …; status = event; lifecycle = the joined statuses.
    let path: Status[] = ['pending'];
    // Transactions announced by a `seen` since the last reorg webhook: the look-ahead may send a
    // later transfer's `seen` before an earlier one's confirmation is applied, and the decision
    // that follows has had its `seen` (one per transaction) — the table's path, compressed.
    let announced = new Set<string>();
    hooks.forEach((h, i) => {
      if (h.reason === 'reorg') announced = new Set();
      if (h.sequence !== i + 1) throw new SimFailure('sequence', `webhook ${i + 1} has sequence ${h.sequence}`);
      if (h.status !== h.event) throw new SimFailure('sequence', `webhook ${i + 1}: status ${h.status} != event ${h.event}`);
      const at = path.at(-1)!;
      const from = (at === 'underpaid' || at === 'expired') && h.event !== 'seen' && h.reason !== 'reorg' && h.tx_hash && announced.has(h.tx_hash) ? 'seen' : at;
      if (h.event === 'seen' && h.tx_hash) announced.add(h.tx_hash);
      // The same status again with no reorg: a second webhook for one transition (issue 23: one per transition).
      if (from === h.event && h.event !== 'seen' && h.reason !== 'reorg') throw new SimFailure('one-per-transition', `${h.event} twice in a row (webhooks ${i} and ${i + 1}, reason ${h.reason}): ${[...path, h.event].join('>')}`);
      if (!legal(from, h.event, h.reason)) throw new SimFailure('legal', `illegal transition ${from} → ${h.event} (reason ${h.reason}) in ${[...path, h.event].join('>')}`);
      path = [...path, h.event];
      if (h.lifecycle !== path.join('>')) throw new SimFailure('sequence', `webhook ${i + 1}: lifecycle ${h.lifecycle}, webhooks say ${path.join('>')}`);
    });
    if (order.lifecycle !== path.join('>') || order.status !== path.at(-1) || order.seq !== hooks.length) {
      throw new SimFailure('sequence', `order ${order.status} seq ${order.seq} lifecycle ${order.lifecycle}; webhooks: ${path.join('>')}`);
    }
    const norm = (h: string) => this.node.hex?.(h) ?? h.toLowerCase().replace(/^0x/, '');
    // One `seen` per funding transaction per sighting: another only each time it left the chain
    // and came back (the order may have stayed covered by other funding, so no reorg webhook).
    const seens = new Map<string, number>();
    for (const h of hooks) if (h.event === 'seen' && h.tx_hash) seens.set(norm(h.tx_hash), (seens.get(norm(h.tx_hash)) ?? 0) + 1);
    for (const [tx, n] of seens) {
      const allowed = 1 + (model.departures.get(tx) ?? 0);
      if (n > allowed) throw new SimFailure('one-seen', `${n} seen webhooks for ${tx}, which left the chain ${allowed - 1} time(s): ${path.join('>')}`);
    }

    // The events feed: every canonical confirmed transfer to the address is one live event; none of an orphaned block.
    const events = await db.selectFrom('watch_events').select(['body', 'removed', 'block_height', 'block_hash']).where('watch_id', '=', order.watch_id).where('type', '=', 'payment').execute();
    const live = events.filter((e) => e.removed === 0).map((e) => ({ tx: norm((JSON.parse(e.body) as { tx_hash: string }).tx_hash), height: e.block_height, hash: norm(e.block_hash) }));
    const liveTx = new Set<string>();
    for (const e of live) {
      if (liveTx.has(e.tx)) throw new SimFailure('feed', `transaction ${e.tx} is in the feed twice`);
      liveTx.add(e.tx);
      const b = chain.at(e.height);
      if (!b || !b.hash.endsWith(e.hash.slice(-40)) || !b.txs.some((x) => x.hash === e.tx)) {
        throw new SimFailure('feed', `live event for ${e.tx} at ${e.height} is not on the canonical chain (an orphaned block's event not removed)`);
      }
    }
    const line = model.confirmedLine(chain);
    const confirmed = model.funding(chain).filter((x) => x.height <= line);
    if (!model.relaxed) {
      const missing = confirmed.filter((x) => !liveTx.has(x.tx.hash));
      if (missing.length) throw new SimFailure('feed-complete', `confirmed transfer(s) ${missing.map((x) => `${x.tx.hash.slice(0, 12)}@${x.height}`).join(', ')} not in the feed (order ${order.status}, ${path.join('>')})`);
      const total = model.total(chain);
      if (BigInt(order.received_raw) !== total) throw new SimFailure('received', `amount_received_raw ${order.received_raw}, canonical confirmed funding ${total} (${path.join('>')})`);
      const allowed = model.allowed(chain, t);
      if (!allowed.has(order.status as Status)) {
        throw new SimFailure('status', `order is ${order.status}, the model allows ${[...allowed].join('|')} (t=${t / 1000}s, expires ${model.expiresMs / 1000}s; ${path.join('>')})`);
      }
    }
    model.settled(chain, order.status);
  }
}

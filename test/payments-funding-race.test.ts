import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { PaymentEngine } from '../src/payments/engine.js';
import type { Store } from '../src/store/index.js';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

let chain: FakeEvm;
let t: TestService;
let m: Merchant;

beforeAll(async () => {
  chain = await startFakeEvmChain();
  chain.mine();
  t = await startTestService({
    networks: [{ slug: 'fake', name: 'Fake', family: 'evm', environments: [{ slug: 'local', upstreams: [chain.url] }] }],
  });
  m = await t.merchant({ plan: 'pro' });
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await chain?.close();
});

/**
 * Lets the engine's funding read return, then applies what it read as another instance would
 * (the same funding rows, committed) before the engine's transaction: the race two instances
 * run when both record one payment, made certain instead of left to timing. The rows are
 * written when the transaction starts, not in the read's hook, which holds SQLite's one
 * connection.
 */
type IngestRow = { event_id: number; order_pk: number; block_height: number };

class OtherInstanceFirst implements KyselyPlugin {
  readonly #ingests = new Set<unknown>();
  readonly #read: IngestRow[] = [];
  raced = 0;
  readonly other: Store;
  constructor(other: Store) {
    this.other = other;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const text = JSON.stringify(args.node);
    if (args.node.kind === 'SelectQueryNode' && text.includes('"watch_events"') && text.includes('"payment_funding"') && text.includes('"payment_orders"')) {
      this.#ingests.add(args.queryId);
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.#ingests.has(args.queryId)) this.#read.push(...(args.result.rows as IngestRow[]));
    return args.result;
  }

  /** The other instance commits the funding of every event read so far. */
  async applyElsewhere(): Promise<void> {
    for (const row of this.#read.splice(0)) {
      await this.other.db.insertInto('payment_funding').values({
        order_pk: row.order_pk, event_id: row.event_id, tx_hash: '0xother', from_address: null, amount_raw: '1', block_height: row.block_height,
        counted: 0, late: 0, removed: 0, created_at: new Date().toISOString(),
      }).execute();
      this.raced++;
    }
  }
}

describe('two instances recording one payment', () => {
  it('the second to apply an event does nothing: no error, no second funding row', async () => {
    // This instance's own engine stays out of it: the test runs the two sides itself.
    await t.service.payments.engine.stop();
    const address = `0x${'ab'.repeat(20)}`;
    const created = await m.call('POST', '/v1/payments', JSON.stringify({ network_slug: 'fake', order_id: 'race-1', amount: '1', address }));
    expect(created.status).toBe(200);
    const order = await t.store.db.selectFrom('payment_orders').selectAll().where('payment_id', '=', created.body.payment.payment_id).executeTakeFirstOrThrow();
    const env = t.store.catalog.environment(order.network_environment_id)!;
    await t.store.db.insertInto('watch_events').values({
      account_id: order.account_id, watch_id: order.watch_id, network_environment_id: env.id, network: order.network, type: 'payment',
      block_height: 7, block_hash: `0x${'07'.repeat(32)}`, removed: 0, created_at: new Date(Date.parse(order.created_at) + 1000).toISOString(),
      body: JSON.stringify({ watch_id: order.watch_id, network: order.network, address, tx_hash: `0x${'cd'.repeat(32)}`, block_height: 7, type: 'payment', direction: 'in', block_hash: `0x${'07'.repeat(32)}`, from: null, to: address, token: null, amount: order.amount_raw, log_index: null }),
      tx_hash: `0x${'cd'.repeat(32)}`, direction: 'in', address, from_address: null, to_address: address, token: null, amount: order.amount_raw, log_index: null,
    }).execute();

    const plugin = new OtherInstanceFirst(t.store);
    const plugged = t.store.db.withPlugin(plugin);
    const transaction = () => ({
      execute: async (fn: (trx: never) => Promise<unknown>) => {
        await plugin.applyElsewhere();
        return plugged.transaction().execute(fn as never);
      },
    });
    // Methods run on the real objects (their private fields), not on the proxies.
    const bound = <T extends object>(target: T, key: string | symbol) => {
      const v = Reflect.get(target, key, target) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    };
    const db = new Proxy(plugged, { get: (target, key) => (key === 'transaction' ? transaction : bound(target, key)) });
    const store = new Proxy(t.store, { get: (target, key) => (key === 'db' ? db : bound(target, key)) });
    const errors: string[] = [];
    const engine = new PaymentEngine({
      store, config: t.service.config, aml: { name: 'none', screen: async () => { throw new Error('not screened here'); } } as never,
      watches: { added() {}, removed() {} }, log: (line) => errors.push(line), onDeliveries() {}, tickMs: 60_000, amlLeaseMs: 1000,
    });
    // Before: the unique key payment_funding_event threw out of the step (logged at error, counted).
    await expect(engine.step()).resolves.toBe(1);
    expect(plugin.raced).toBe(1);
    const funding = await t.store.db.selectFrom('payment_funding').select(['tx_hash']).where('order_pk', '=', order.id).execute();
    expect(funding.map((f) => f.tx_hash)).toEqual(['0xother']);
    // The order is as the other instance left it; this side wrote no transition.
    const after = await t.store.db.selectFrom('payment_orders').select(['status', 'seq']).where('id', '=', order.id).executeTakeFirstOrThrow();
    expect(after).toEqual({ status: 'pending', seq: 0 });
    expect(errors).toEqual([]);
    await engine.stop();
  });
});

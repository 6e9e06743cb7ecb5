import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPayments } from '../src/payments/service.js';
import { PAYMENTS_TASKS } from '../src/payments/engine.js';
import { Supervisor } from '../src/runtime/supervisor.js';
import { Store } from '../src/store/index.js';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';
import { startTestService, storeUrlOf, type Merchant, type TestService } from './helpers/service.js';
import { testDatabaseUrl } from './helpers/shared-stores.js';
import { itUnless } from './helpers/skips.js';

/*
 * Recorded events reach the payment engine by a call, not by its poll: here `payments.tick_ms`
 * is a minute, so an order funded within the wait below was woken. On this instance the
 * scanner tells the engine; on another instance (PostgreSQL only: SQLite is one instance) the
 * store's notification does.
 */
const TICK_MS = 60_000;
const WAIT_MS = 20_000;
let chain: FakeEvm;
let t: TestService;
let m: Merchant;

if (!testDatabaseUrl) console.warn('payments-wake: the other-instance test is skipped: RPCCTL_TEST_DATABASE_URL is not set (SQLite is one instance)');

beforeAll(async () => {
  chain = await startFakeEvmChain();
  chain.mine();
  t = await startTestService({
    networks: [{ slug: 'fake', name: 'Fake', family: 'evm', environments: [{ slug: 'local', upstreams: [chain.url] }] }],
    payments: { tick_ms: TICK_MS, aml: { provider: 'none' } },
  }, { watch: { pollMs: 50 } });
  m = await t.merchant({ plan: 'pro' });
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await chain?.close();
});

async function order(address: string): Promise<string> {
  const r = await m.call('POST', '/v1/payments', JSON.stringify({ network_slug: 'fake', order_id: `wake-${address}`, amount: '0.000000000000000005', address }));
  expect(r.status).toBe(200);
  return r.body.payment.payment_id as string;
}

async function statusOf(store: Store, paymentId: string): Promise<string> {
  return (await store.db.selectFrom('payment_orders').select('status').where('payment_id', '=', paymentId).executeTakeFirstOrThrow()).status;
}

async function until(what: string, fn: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`not within ${WAIT_MS} ms (the poll is ${TICK_MS} ms): ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('recorded events wake the payment engine', () => {
  it('on this instance: the scanner\'s record calls the engine', async () => {
    const address = `0x${'1a'.repeat(20)}`;
    const id = await order(address);
    // The engine has looked once at start and sleeps for a minute now.
    chain.mine([{ from: `0x${'99'.repeat(20)}`, to: address, wei: 5n }]);
    await until('the order is paid', async () => (await statusOf(t.store, id)) === 'paid');
  });

  itUnless(!testDatabaseUrl && 'needs PostgreSQL (set RPCCTL_TEST_DATABASE_URL): instances hear each other through its notifications', 'on another instance: through the store\'s notification', async () => {
    // Only the other instance's engine runs; this one's stops.
    await t.service.payments.engine.stop();
    const store = await Store.open({ dataDir: t.dataDir, config: t.service.config, syncCatalog: 'if-empty', url: storeUrlOf(t.dataDir), env: {} });
    /** Counts the other engine's passes over the orders, to know when it has gone to sleep. */
    class Counting extends Supervisor {
      passes = 0;
      override async run(name: string, step: (signal: AbortSignal) => Promise<void> | void): Promise<boolean> {
        const ok = await super.run(name, step);
        if (name === PAYMENTS_TASKS.orders) this.passes++;
        return ok;
      }
    }
    const supervisor = new Counting({ log: () => {} });
    const other = await startPayments({
      supervisor,
      store, config: t.service.config, log: () => {}, addressWatch: { onRecorded: () => () => {}, watchAdded: async () => {}, watchRemoved: () => {}, registry: t.service.addressWatch.registry } as never,
      webhooks: { kick() {} },
    });
    try {
      // Its first pass is over: it sleeps for a minute now, and nothing tells it of the order.
      await until('the other engine\'s first pass', async () => supervisor.passes > 0);
      const address = `0x${'2b'.repeat(20)}`;
      const id = await order(address);
      chain.mine([{ from: `0x${'99'.repeat(20)}`, to: address, wei: 5n }]);
      await until('the other instance pays the order', async () => (await statusOf(store, id)) === 'paid');
    } finally {
      await other.stop();
      await supervisor.stop();
      await store.close();
    }
  });
});

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEther, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { createAccount, createApiKey, Store } from '../src/store/index.js';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startServeProcess, type ServeProcess } from './helpers/serve-process.js';
import { signedCall, testConfig } from './helpers/service.js';
import { freshRedisPrefix, freshSchema, reachable, testDatabaseUrl, testRedisUrl, type TestSchema } from './helpers/shared-stores.js';
import { describeUnless } from './helpers/skips.js';

const why = !testDatabaseUrl || !testRedisUrl ? 'RPCCTL_TEST_DATABASE_URL and RPCCTL_TEST_REDIS_URL are not both set (several instances need one PostgreSQL and one Redis)'
  : !(await reachable(testDatabaseUrl)) ? `no PostgreSQL answers at ${testDatabaseUrl}`
  : !(await reachable(testRedisUrl)) ? `no Redis answers at ${testRedisUrl}` : undefined;

const MASTER_KEY = 'ef'.repeat(32);
const AMOUNT = '0.001';

type Instance = ServeProcess;
type Order = { payment_id: string; address: string; status: string };

/**
 * Issue 21: orders created through an instance that does not hold the scanner lease were never
 * paid. Every instance's API takes orders; whichever instance scans must see all of them, also
 * after the lease moves.
 */
describeUnless(why, 'payment orders on three rpcctl serve processes sharing one PostgreSQL and one Redis', () => {
  let schema: TestSchema;
  let anvil: Anvil;
  let rx: Receiver;
  let dir: string;
  let configFile: string;
  let store: Store;
  let call: (i: Instance, method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;
  const instances: Instance[] = [];

  const startInstance = () => startServeProcess({ configFile, dataDir: mkdtempSync(join(dir, 'i-')), database: schema.url, redis: testRedisUrl!, masterKey: MASTER_KEY });

  beforeAll(async () => {
    [schema, anvil, rx] = await Promise.all([freshSchema(), startAnvil(), startReceiver()]);
    dir = mkdtempSync(join(tmpdir(), 'rpcctl-mi-pay-'));
    configFile = join(dir, 'config.json');
    const config = testConfig({
      networks: [{ id: 1, slug: 'anvil', name: 'Anvil', family: 'evm', environments: [{ id: 1, slug: 'local', upstreams: [anvil.url], confirmations: 1 }] }],
      plans: [{ id: 1, slug: 'p', name: 'P', included_credits: 1_000_000, rps_limit: 100, endpoints_limit: 5, webhook_address_slots: 100 }],
      webhooks: { allow_private_urls: true, timeout_ms: 2000 },
      gateway: { workers: 1, probe_interval_ms: 60_000, registry_reload_ms: 600_000 },
      payments: { tick_ms: 100 },
      redis: { key_prefix: freshRedisPrefix() },
    });
    writeFileSync(configFile, JSON.stringify(config));
    instances.push(...await Promise.all([startInstance(), startInstance(), startInstance()]));
    store = await Store.open({ dataDir: dir, config: parseConfig(config), syncCatalog: 'if-empty', url: schema.url, env: { RPCCTL_MASTER_KEY: MASTER_KEY } });
    const account = await createAccount(store, { planId: 1 });
    const key = await createApiKey(store, { accountId: account.id });
    call = async (i, method, path, body) => signedCall(i.api, key.api_key, key.secret, method, path, body === undefined ? '' : JSON.stringify(body));
  }, 120_000);
  afterAll(async () => {
    for (const i of instances) i.proc.kill('SIGKILL');
    await Promise.all(instances.map((i) => i.proc.catch(() => {})));
    await store?.close();
    await Promise.all([anvil?.stop(), rx?.close()]);
    await schema?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  let n = 0;
  async function createOrder(i: Instance): Promise<Order> {
    const address = `0x${randomBytes(20).toString('hex')}`;
    const r = await call(i, 'POST', '/v1/payments', { order_id: `o-${++n}`, network_slug: 'anvil', amount: AMOUNT, address, webhook_url: rx.url });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.payment as Order;
  }

  /** Exactly the order's amount, mined at once (anvil mines a block per transaction). */
  async function pay(order: Order): Promise<void> {
    const hash = await anvil.wallet.sendTransaction({ account: anvil.accounts[0]!, to: order.address as Address, value: parseEther(AMOUNT), chain: null });
    await anvil.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  }

  const paidHooks = (ids: string[]) => new Set(rx.received.map((r) => JSON.parse(r.body) as { payment_id: string; event: string })
    .filter((b) => b.event === 'paid' && ids.includes(b.payment_id)).map((b) => b.payment_id));

  /** Every order `paid` (read through `via`) and its `paid` webhook received; else the statuses, for the failure message. */
  async function allPaid(orders: Order[], via: Instance, ms: number): Promise<Record<string, string>> {
    const ids = orders.map((o) => o.payment_id);
    const statuses = async () => Object.fromEntries(await Promise.all(ids.map(async (id) => [id, (await call(via, 'GET', `/v1/payments/${id}`)).body.payment.status as string])));
    const deadline = Date.now() + ms;
    let seen = await statuses();
    while (Date.now() < deadline && !(Object.values(seen).every((s) => s === 'paid') && paidHooks(ids).size === ids.length)) {
      await new Promise((r) => setTimeout(r, 250));
      seen = await statuses();
    }
    return seen;
  }
  const every = (orders: Order[], status: string) => Object.fromEntries(orders.map((o) => [o.payment_id, status]));

  /** The scanner lease of the chain and the running instance holding it (waits for one to hold it). */
  async function leaseHolder(after = 0) {
    for (const deadline = Date.now() + 15_000; ;) {
      const lease = await store.db.selectFrom('scanner_leases').selectAll().where('network_environment_id', '=', 1).executeTakeFirst();
      const holder = instances.find((i) => i.id === lease?.owner && i.proc.exitCode === null);
      if ((lease && holder && lease.generation > after) || Date.now() > deadline) return { lease, holder };
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('orders created through every instance are paid, whichever instance scans', async () => {
    const orders: Order[] = [];
    for (let round = 0; round < 2; round++) for (const i of instances) orders.push(await createOrder(i));
    // One instance scans; two thirds of the orders were created elsewhere.
    expect((await leaseHolder()).holder).toBeDefined();
    for (const o of orders) await pay(o);
    expect(await allPaid(orders, instances[2]!, 30_000)).toEqual(every(orders, 'paid'));
    expect(paidHooks(orders.map((o) => o.payment_id)).size).toBe(orders.length);
  }, 90_000);

  it('after the scanning instance is stopped (SIGTERM), orders paid during the move and orders created afterwards are paid', async () => {
    // Open before the move (one through each instance), paid while it happens.
    const during = [];
    for (const i of instances) during.push(await createOrder(i));
    const { lease, holder } = await leaseHolder();
    expect(holder).toBeDefined();
    const survivors = instances.filter((i) => i !== holder);
    holder!.proc.kill('SIGTERM');
    for (const o of during) await pay(o);
    expect((await holder!.proc).exitCode, holder!.out()).toBe(0);
    const after: Order[] = [];
    for (const i of [...survivors, ...survivors]) after.push(await createOrder(i));
    const moved = await leaseHolder(lease!.generation);
    expect(moved.lease?.generation).toBeGreaterThan(lease!.generation);
    expect(survivors).toContain(moved.holder);
    for (const o of after) await pay(o);
    const orders = [...during, ...after];
    expect(await allPaid(orders, survivors[1]!, 30_000)).toEqual(every(orders, 'paid'));
    expect(paidHooks(orders.map((o) => o.payment_id)).size).toBe(orders.length);
  }, 120_000);
});

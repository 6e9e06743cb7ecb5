import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Address, type Instruction, type KeyPairSigner, type Rpc, type Signature, type SolanaRpcApi,
  address, appendTransactionMessageInstructions, createSolanaRpc, createTransactionMessage, generateKeyPairSigner,
  getBase64EncodedWireTransaction, getSignatureFromTransaction, pipe, setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash, signTransactionMessageWithSigners,
} from '@solana/kit';
import { createTransfer, findReference, FindReferenceError, parseURL, validateTransfer, ValidateTransferError, type TransferRequestURL } from '@solana/pay';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { createAccount, createApiKey, Store } from '../src/store/index.js';
import { type FakeSolanaNode, USDC_MINT, startFakeSolana } from './helpers/fake-solana.js';
import { startServeProcess, type ServeProcess } from './helpers/serve-process.js';
import { signedCall, startTestService, testConfig, type TestService } from './helpers/service.js';
import { freshRedisPrefix, freshSchema, reachable, testDatabaseUrl, testRedisUrl, type TestSchema } from './helpers/shared-stores.js';
import { describeUnless } from './helpers/skips.js';

/**
 * Solana Pay orders (issue 33) over the litesvm node (test/helpers/fake-solana.ts): the
 * merchant's one wallet, a fresh reference per order; the customer's wallet is @solana/pay
 * itself (parseURL of the checkout page's URI, createTransfer, signed by @solana/kit), and
 * @solana/pay's findReference/validateTransfer against the node must agree with the order.
 * The same suite runs on PostgreSQL + Redis with RPCCTL_TEST_DATABASE_URL/RPCCTL_TEST_REDIS_URL;
 * there, the second part creates orders on a serve process that does not hold the scanner lease.
 */

type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;
type Order = { payment_id: string; order_id: string; address: string; reference: string; status: string; amount_received: string; overpaid: boolean; tx_hashes: string[]; reason: string | null };

const NETWORK = (upstream: string) => ({
  id: 10, slug: 'solana', name: 'Solana', family: 'solana' as const,
  tokens: [{ symbol: 'USDC', address: USDC_MINT, decimals: 6 }],
  environments: [{ id: 17, slug: 'mainnet', upstreams: [upstream], confirmations: 1 }],
});

/** The node, a customer holding SOL and USDC, the merchant's wallet (only its address) and another wallet. */
class Chain {
  node!: FakeSolanaNode;
  rpc!: Rpc<SolanaRpcApi>;
  customer!: KeyPairSigner;
  /** A customer whose wallet is on the sanctions list. */
  sanctioned!: KeyPairSigner;
  wallet!: string;
  other!: string;

  async start(): Promise<void> {
    this.node = await startFakeSolana();
    this.rpc = createSolanaRpc(this.node.url);
    const [customer, sanctioned, wallet, other] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner(), generateKeyPairSigner(), generateKeyPairSigner()]);
    [this.customer, this.sanctioned, this.wallet, this.other] = [customer, sanctioned, wallet.address, other.address];
    this.node.chain.createMint(USDC_MINT, { decimals: 6 });
    for (const payer of [customer, sanctioned]) this.node.chain.fundSol(payer.address, 100_000_000_000n);
    // createTransfer wants the recipient's token account to exist (Solana Pay's rule for SPL).
    for (const owner of [customer.address, sanctioned.address, wallet.address, other.address]) {
      await this.node.chain.mintTo(owner, USDC_MINT, owner === customer.address || owner === sanctioned.address ? 1_000_000_000n : 0n);
    }
    this.node.chain.advance(5);
  }

  /** The customer's wallet: reads the URI as @solana/pay does, builds the transfer (optionally changed), signs and sends it. */
  async pay(uri: string, change: Partial<TransferRequestURL> = {}, payer = this.customer): Promise<Signature> {
    const fields = { ...(parseURL(uri) as TransferRequestURL), ...change };
    const ixs: Instruction[] = await createTransfer(this.rpc, payer, { recipient: fields.recipient, amount: fields.amount!, splToken: fields.splToken, reference: fields.reference });
    const { value: bh } = await this.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
    const tx = await signTransactionMessageWithSigners(pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(bh, m),
      (m) => appendTransactionMessageInstructions(ixs, m),
    ));
    await this.rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
    return getSignatureFromTransaction(tx);
  }

  /** Freezes the open slot into a block and confirms it: the slot it landed in. */
  land(): number {
    const slot = this.node.chain.produceSlot().slot;
    this.node.chain.produceSlot();
    return slot;
  }

  /** What @solana/pay's merchant side says of the reference: the oldest signature naming it, and whether it validates against the URI. */
  async verdict(uri: string): Promise<{ found: Signature | null; valid: boolean | string }> {
    const fields = parseURL(uri) as TransferRequestURL;
    let found: Signature;
    try {
      found = (await findReference(this.rpc, fields.reference![0] as Address, { commitment: 'confirmed' })).signature;
    } catch (err) {
      if (err instanceof FindReferenceError) return { found: null, valid: false };
      throw err;
    }
    try {
      await validateTransfer(this.rpc, found, { recipient: fields.recipient, amount: fields.amount!, splToken: fields.splToken, reference: fields.reference }, { commitment: 'confirmed' });
      return { found, valid: true };
    } catch (err) {
      if (err instanceof ValidateTransferError) return { found, valid: err.message };
      throw err;
    }
  }
}

const htmlText = (s: string) => s.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');

/** The URI the checkout page's QR and "Open in wallet" carry. */
async function checkoutUri(api: string, paymentId: string): Promise<string> {
  const res = await fetch(`${api}/pay/${paymentId}`);
  const page = await res.text();
  const uri = /data-uri="([^"]*)"/.exec(page)?.[1];
  expect(uri, page.slice(0, 400)).toBeDefined();
  expect(page).toContain(`id="open-wallet" href="${uri}"`);
  return htmlText(uri!);
}

async function until<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not in time (last: ${JSON.stringify(v)})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let n = 0;
async function createOrder(call: Call, body: Record<string, unknown>): Promise<Order> {
  const r = await call('POST', '/v1/payments', { order_id: `sol-${++n}`, network_slug: 'solana', expires_in: 3600, ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.payment as Order;
}
const orderOf = async (call: Call, o: Order): Promise<Order> => (await call('GET', `/v1/payments/${o.payment_id}`)).body.payment as Order;

describe('Solana Pay orders, one instance', () => {
  const chain = new Chain();
  let t: TestService;
  let call: Call;

  let dir: string;

  beforeAll(async () => {
    await chain.start();
    // Screened against a list that has one Solana wallet, as OFAC's writes it (SOL, base58).
    dir = mkdtempSync(join(tmpdir(), 'rpcctl-solpay-sdn-'));
    writeFileSync(join(dir, 'sdn.txt'), `SOL ${chain.sanctioned.address}\n`);
    t = await startTestService({
      networks: [NETWORK(chain.node.url)],
      payments: { tick_ms: 100, reference_sweep_ms: 200, aml: { provider: 'sanctions-list', sanctions_file: join(dir, 'sdn.txt') } },
      gateway: { probe_interval_ms: 60_000 },
    }, { watch: { pollMs: 50 } });
    const m = await t.merchant({ plan: 'pro' });
    call = (method, path, body) => m.call(method, path, body === undefined ? '' : JSON.stringify(body));
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
    await chain.node?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the merchant\'s wallet is a setting; an order without it (or an address) is refused naming what to set', async () => {
    const none = await call('POST', '/v1/payments', { order_id: 'no-wallet', network_slug: 'solana', amount: '1' });
    expect(none.status).toBe(400);
    expect(none.body.error).toContain('wallets.solana');
    const bad = await call('PUT', '/v1/payments/settings', { wallets: { solana: '0xnot-solana' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('wallets.solana');
    const put = await call('PUT', '/v1/payments/settings', { wallets: { solana: chain.wallet }, display_name: 'Café & Co' });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect((await call('GET', '/v1/payments/settings')).body.wallets).toEqual({ solana: chain.wallet });
  });

  it('a USDC order: the checkout\'s Solana Pay URI, paid by @solana/pay\'s transfer; findReference/validateTransfer agree', async () => {
    const order = await createOrder(call, { asset: USDC_MINT, amount: '12.5' });
    const other = await createOrder(call, { asset: USDC_MINT, amount: '12.5' });
    // One wallet, a reference each.
    expect([order.address, other.address]).toEqual([chain.wallet, chain.wallet]);
    expect(order.reference).not.toBe(other.reference);
    const uri = await checkoutUri(t.baseUrl, order.payment_id);
    expect(uri).toBe(`solana:${chain.wallet}?amount=12.5&spl-token=${USDC_MINT}&reference=${order.reference}&label=Caf%C3%A9%20%26%20Co&message=Order%20${order.order_id}`);
    const parsed = parseURL(uri) as TransferRequestURL;
    expect([parsed.recipient, parsed.amount, parsed.splToken, parsed.reference, parsed.label, parsed.message])
      .toEqual([chain.wallet, 12.5, USDC_MINT, [order.reference], 'Café & Co', `Order ${order.order_id}`]);
    expect(await chain.verdict(uri)).toEqual({ found: null, valid: false });
    const sig = await chain.pay(uri);
    chain.land();
    const paid = await until('paid', () => orderOf(call, order), (o) => o.status === 'paid');
    expect(paid.tx_hashes).toEqual([sig]);
    expect(paid.amount_received).toBe('12.5');
    expect(await chain.verdict(uri)).toEqual({ found: sig, valid: true });
    // The other order, at the same wallet, saw nothing.
    expect((await orderOf(call, other)).status).toBe('pending');
  });

  it('a sanctioned sender fails the order: the wallet whose USDC or SOL moved is screened, not its token account', async () => {
    for (const amount of ['1.5', undefined]) {
      const order = await createOrder(call, amount ? { asset: USDC_MINT, amount } : { amount: '0.05' });
      const uri = await checkoutUri(t.baseUrl, order.payment_id);
      const sig = await chain.pay(uri, {}, chain.sanctioned);
      chain.land();
      const failed = await until('failed', () => orderOf(call, order), (o) => o.status === 'failed');
      expect(failed).toMatchObject({ reason: 'aml_rejected', tx_hashes: [sig], aml: { provider: 'sanctions-list', risk_level: 'severe', details: [{ address: chain.sanctioned.address }] } });
    }
  });

  it('a SOL order paid in full', async () => {
    const order = await createOrder(call, { amount: '0.25' });
    const uri = await checkoutUri(t.baseUrl, order.payment_id);
    expect(uri.startsWith(`solana:${chain.wallet}?amount=0.25&reference=${order.reference}&`)).toBe(true);
    const sig = await chain.pay(uri);
    chain.land();
    const paid = await until('paid', () => orderOf(call, order), (o) => o.status === 'paid');
    expect([paid.tx_hashes, paid.amount_received, paid.overpaid]).toEqual([[sig], '0.25', false]);
    expect(await chain.verdict(uri)).toEqual({ found: sig, valid: true });
  });

  it('less is underpaid (validateTransfer: amount not transferred), then the rest pays it; more is overpaid', async () => {
    const order = await createOrder(call, { asset: USDC_MINT, amount: '10' });
    const uri = await checkoutUri(t.baseUrl, order.payment_id);
    await chain.pay(uri, { amount: 4 });
    chain.land();
    const under = await until('underpaid', () => orderOf(call, order), (o) => o.status === 'underpaid');
    expect(under.amount_received).toBe('4');
    expect((await chain.verdict(uri)).valid).toBe('amount not transferred');
    // The page now asks for what is still due.
    const rest = await checkoutUri(t.baseUrl, order.payment_id);
    expect((parseURL(rest) as TransferRequestURL).amount).toBe(6);
    await chain.pay(rest);
    chain.land();
    expect((await until('paid', () => orderOf(call, order), (o) => o.status === 'paid')).amount_received).toBe('10');

    const over = await createOrder(call, { amount: '0.1' });
    const overUri = await checkoutUri(t.baseUrl, over.payment_id);
    await chain.pay(overUri, { amount: 0.15 });
    chain.land();
    const done = await until('paid', () => orderOf(call, over), (o) => o.status === 'paid');
    expect([done.amount_received, done.overpaid]).toEqual(['0.15', true]);
    expect(await chain.verdict(overUri)).toMatchObject({ valid: true });
  });

  it('a transfer naming the reference but paying another wallet does not count', async () => {
    const order = await createOrder(call, { asset: USDC_MINT, amount: '3' });
    const uri = await checkoutUri(t.baseUrl, order.payment_id);
    const sig = await chain.pay(uri, { recipient: address(chain.other) });
    chain.land();
    // Recorded on the reference's watch (the scanner saw it), not counted: the order stays pending.
    await until('the transfer recorded', async () => (await call('GET', `/v1/address-watch/events?limit=500`)).body.events.filter((e: any) => e.tx_hash === sig), (l: unknown[]) => l.length > 0);
    // A later payment of the order, recorded after it, is applied: so the engine has passed the first.
    const paidSig = await chain.pay(uri);
    chain.land();
    const paid = await until('paid by the right transfer', () => orderOf(call, order), (o) => o.status === 'paid');
    expect([paid.tx_hashes, paid.amount_received]).toEqual([[paidSig], '3']);
    // findReference answers the oldest transaction naming the reference: the one to another wallet, which validateTransfer refuses.
    expect(await chain.verdict(uri)).toEqual({ found: sig, valid: 'invalid transfer' });
  });

  it('a payment in a block the node lost (getBlock -32009), passed by the scanner, is found by getSignaturesForAddress(reference) once final', async () => {
    const order = await createOrder(call, { asset: USDC_MINT, amount: '5' });
    const uri = await checkoutUri(t.baseUrl, order.payment_id);
    const slot = chain.node.chain.processedSlot;
    chain.node.view.missingBlocks.add(slot);
    const sig = await chain.pay(uri);
    expect(chain.land()).toBe(slot);
    // The scanner asked for the block, was told it is gone, and went on without it.
    await until('the scanner passed the slot', async () => (await t.store.db.selectFrom('scanner_cursors').select('next_height').where('network_environment_id', '=', 17).executeTakeFirstOrThrow()).next_height,
      (next) => next > slot + 1);
    expect(chain.node.seen.some((c) => c.method === 'getBlock' && (c.params as [number, { transactionDetails?: string }])[0] === slot
      && (c.params as [number, { transactionDetails?: string }])[1].transactionDetails === 'full')).toBe(true);
    // Only confirmed yet: the lookup records final transactions only (below the scanner's cursor no reorg rule reaches).
    expect((await orderOf(call, order)).status).toBe('pending');
    chain.node.chain.advance(chain.node.chain.finalizedDepth + 1);
    const paid = await until('paid through the reference lookup', () => orderOf(call, order), (o) => o.status === 'paid');
    expect([paid.tx_hashes, paid.amount_received]).toEqual([[sig], '5']);
    expect(chain.node.seen.some((c) => c.method === 'getSignaturesForAddress' && (c.params as string[])[0] === order.reference)).toBe(true);
    // @solana/pay's merchant side agrees.
    expect(await chain.verdict(uri)).toEqual({ found: sig, valid: true });
    // Recorded once, on the order's reference, in the slot the node no longer serves (its hash unknown).
    const events = (await call('GET', '/v1/address-watch/events?limit=500')).body.events.filter((e: any) => e.tx_hash === sig);
    expect(events.map((e: any) => [e.address, e.block_height, e.block_hash, e.amount])).toEqual([[order.reference, slot, '', '5000000']]);
  });

  it('a transfer to another wallet found by the reference lookup is recorded, not counted (validateTransfer refuses it too)', async () => {
    const order = await createOrder(call, { amount: '0.5' });
    const uri = await checkoutUri(t.baseUrl, order.payment_id);
    const slot = chain.node.chain.processedSlot;
    chain.node.view.missingBlocks.add(slot);
    const sig = await chain.pay(uri, { recipient: address(chain.other) });
    chain.land();
    chain.node.chain.advance(chain.node.chain.finalizedDepth + 1);
    await until('the transfer recorded', async () => (await call('GET', '/v1/address-watch/events?limit=500')).body.events.filter((e: any) => e.tx_hash === sig), (l: unknown[]) => l.length > 0);
    expect(await chain.verdict(uri)).toEqual({ found: sig, valid: 'invalid transfer' });
    // A later payment of the order, recorded after it, is applied: so the engine has passed the first.
    const paidSig = await chain.pay(uri);
    chain.land();
    const paid = await until('paid by the right transfer', () => orderOf(call, order), (o) => o.status === 'paid');
    expect([paid.tx_hashes, paid.amount_received]).toEqual([[paidSig], '0.5']);
  });

  it('a dropped confirmed slot takes the payment back; mined again, the order is paid again', async () => {
    const order = await createOrder(call, { asset: USDC_MINT, amount: '2' });
    const uri = await checkoutUri(t.baseUrl, order.payment_id);
    await chain.pay(uri);
    const slot = chain.land();
    await until('paid', () => orderOf(call, order), (o) => o.status === 'paid');
    chain.node.chain.dropSlots(slot);
    chain.node.chain.advance(2);
    const back = await until('taken back', () => orderOf(call, order), (o) => o.status !== 'paid');
    expect([back.status, back.reason, back.amount_received]).toEqual(['underpaid', 'reorg', '0']);
    expect(await chain.verdict(uri)).toEqual({ found: null, valid: false });
    const again = await chain.pay(uri);
    chain.land();
    const paid = await until('paid again', () => orderOf(call, order), (o) => o.status === 'paid');
    expect(paid.tx_hashes).toEqual([again]);
    expect(await chain.verdict(uri)).toEqual({ found: again, valid: true });
  });
});

const why = !testDatabaseUrl || !testRedisUrl ? 'RPCCTL_TEST_DATABASE_URL and RPCCTL_TEST_REDIS_URL are not both set (several instances need one PostgreSQL and one Redis)'
  : !(await reachable(testDatabaseUrl)) ? `no PostgreSQL answers at ${testDatabaseUrl}`
  : !(await reachable(testRedisUrl)) ? `no Redis answers at ${testRedisUrl}` : undefined;

describeUnless(why, 'Solana Pay orders on two rpcctl serve processes sharing PostgreSQL and Redis', () => {
  const MASTER_KEY = 'ef'.repeat(32);
  const chain = new Chain();
  let schema: TestSchema;
  let dir: string;
  let store: Store;
  const instances: ServeProcess[] = [];
  let callVia: (i: ServeProcess) => Call;

  beforeAll(async () => {
    [schema] = await Promise.all([freshSchema(), chain.start()]);
    dir = mkdtempSync(join(tmpdir(), 'rpcctl-solpay-'));
    const configFile = join(dir, 'config.json');
    const config = testConfig({
      networks: [NETWORK(chain.node.url)],
      plans: [{ id: 1, slug: 'p', name: 'P', included_credits: 1_000_000, rps_limit: 100, endpoints_limit: 5, webhook_address_slots: 100 }],
      gateway: { workers: 1, probe_interval_ms: 60_000, registry_reload_ms: 600_000 },
      payments: { tick_ms: 100, aml: { provider: 'none' } },
      redis: { key_prefix: freshRedisPrefix() },
    });
    writeFileSync(configFile, JSON.stringify(config));
    const start = () => startServeProcess({ configFile, dataDir: mkdtempSync(join(dir, 'i-')), database: schema.url, redis: testRedisUrl!, masterKey: MASTER_KEY });
    instances.push(...await Promise.all([start(), start()]));
    store = await Store.open({ dataDir: dir, config: parseConfig(config), syncCatalog: 'if-empty', url: schema.url, env: { RPCCTL_MASTER_KEY: MASTER_KEY } });
    const account = await createAccount(store, { planId: 1 });
    const key = await createApiKey(store, { accountId: account.id });
    callVia = (i) => async (method, path, body) => signedCall(i.api, key.api_key, key.secret, method, path, body === undefined ? '' : JSON.stringify(body));
  }, 120_000);
  afterAll(async () => {
    for (const i of instances) i.proc.kill('SIGKILL');
    await Promise.all(instances.map((i) => i.proc.catch(() => {})));
    await store?.close();
    await chain.node?.stop();
    await schema?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('a USDC order created on the instance without the scanner lease is paid through its checkout by @solana/pay', async () => {
    // A watched address starts the network's scanners; one instance takes the lease.
    expect((await callVia(instances[0]!)('PUT', '/v1/payments/settings', { wallets: { solana: chain.wallet } })).status).toBe(200);
    await createOrder(callVia(instances[0]!), { amount: '1' });
    const lease = await until('a scanner lease', () => store.db.selectFrom('scanner_leases').selectAll().where('network_environment_id', '=', 17).executeTakeFirst(),
      (l) => l !== undefined && instances.some((i) => i.id === l.owner));
    const other = instances.find((i) => i.id !== lease!.owner)!;
    const call = callVia(other);
    const order = await createOrder(call, { asset: USDC_MINT, amount: '7.25' });
    const uri = await checkoutUri(other.api, order.payment_id);
    const sig = await chain.pay(uri);
    chain.land();
    const paid = await until('paid', () => orderOf(call, order), (o) => o.status === 'paid', 30_000);
    expect([paid.tx_hashes, paid.amount_received]).toEqual([[sig], '7.25']);
    expect(await chain.verdict(uri)).toEqual({ found: sig, valid: true });
  }, 60_000);
});

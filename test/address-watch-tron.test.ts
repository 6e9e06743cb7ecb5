import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAccount, webhookSecretOf } from '../src/store/index.js';
import { FakeTron, tronAccount, USDT } from './helpers/fake-tron.js';
import { signatureValid, startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

const json = (o: unknown) => JSON.stringify(o);
let node: FakeTron;
let t: TestService;
let rx: Receiver;
let m: Merchant;
let secret: string;
const A = tronAccount();
const B = tronAccount();
const X = tronAccount();

type Ev = Record<string, any>;
const wallet = (): Ev[] => rx.received.map((r) => JSON.parse(r.body) as Ev).filter((b) => b.type !== 'block');
const feed = async (): Promise<Ev[]> => (await m.call('GET', '/v1/address-watch/events?limit=500')).body.events.filter((e: Ev) => e.type !== 'block');
const row = (e: Ev) => [e.tx_hash, e.address, e.type, e.direction, e.token, e.amount, e.block_height];

beforeAll(async () => {
  [node, rx] = await Promise.all([new FakeTron().start(), startReceiver()]);
  for (let i = 0; i < 5; i++) node.mine([]);
  t = await startTestService({
    networks: [{ id: 9, slug: 'tron', name: 'Tron', family: 'tron', environments: [{ id: 15, slug: 'nile', upstreams: [node.url], confirmations: 1 }] }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
    gateway: { probe_interval_ms: 60_000 },
  }, { watch: { pollMs: 100 } });
  m = await t.merchant({ plan: 'pro' });
  secret = webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!);
  await m.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: true, events: { block: false } }));
  for (const address of [A.base58, B.hex]) {
    const r = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'tron', address }));
    expect(r.body.created, JSON.stringify(r.body)).toBe(true);
  }
});
afterAll(async () => {
  await t?.stop();
  await Promise.all([node?.stop(), rx?.close()]);
});

describe('Tron addresses', () => {
  it('base58check T… validated; hex 41… normalised to T…', async () => {
    const list = (await m.call('GET', '/v1/address-watch/addresses?network_slug=tron')).body.addresses.map((w: Ev) => w.address);
    expect(list.sort()).toEqual([A.base58, B.base58].sort());
    expect((await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'tron', address: A.hex }))).body.created).toBe(false);
    const typo = A.base58.slice(0, -1) + (A.base58.endsWith('a') ? 'b' : 'a');
    for (const bad of [typo, `42${A.hex.slice(2)}`, '0x52908400098527886E0F7030069857D2E4169EE7', 'T123']) {
      const r = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'tron', address: bad }));
      expect(r.status, bad).toBe(400);
      expect(r.body.error).toMatch(/^address: /);
    }
  });
});

describe('Tron scanning', () => {
  it('TRX, TRC-10 and TRC-20 hits; failed transfers as other; a reorg two blocks deep', async () => {
    const big = '9007199254740993'; // 2^53 + 1: int64 amounts survive JSON
    const t1 = node.trx(X.hex, A.hex, '1500000');
    const t2 = node.trc10(A.hex, X.hex, '1002000', big);
    const t3 = node.trc20(USDT.hex, X.hex, B.hex, 25_000_000n);
    const t4 = node.trc20(USDT.hex, X.hex, A.hex, 99_000_000n, 'REVERT');
    const t5 = node.call(USDT.hex, A.hex);
    const t6 = node.trx(B.hex, X.hex, '7', 'OUT_OF_ENERGY');
    const b1 = node.mine([t1, t2, t3, t4, t5, t6, node.trx(X.hex, tronAccount().hex, '5')]);
    const t7 = node.trc20(USDT.hex, B.hex, A.hex, 1n);
    const b2 = node.mine([t7]);
    const t8 = node.trx(X.hex, B.hex, '42');
    const b3 = node.mine([t8]);

    const expected = [
      [t1.txID, A.base58, 'payment', 'in', null, '1500000', b1.number],
      [t2.txID, A.base58, 'payout', 'out', '1002000', big, b1.number],
      [t3.txID, B.base58, 'payment', 'in', USDT.base58, '25000000', b1.number],
      [t4.txID, A.base58, 'other', 'in', USDT.base58, '0', b1.number],
      [t5.txID, A.base58, 'other', 'out', null, '0', b1.number],
      [t6.txID, B.base58, 'other', 'out', null, '0', b1.number],
      [t7.txID, B.base58, 'payout', 'out', USDT.base58, '1', b2.number],
      [t7.txID, A.base58, 'payment', 'in', USDT.base58, '1', b2.number],
      [t8.txID, B.base58, 'payment', 'in', null, '42', b3.number],
    ];
    await rx.waitFor(() => wallet().length >= expected.length);
    // Deliveries run in parallel: the webhooks carry the same events, in any order.
    expect(wallet().map(row).sort()).toEqual([...expected].sort());
    expect((await feed()).map(row)).toEqual(expected);
    const byTx = (id: string) => wallet().find((e) => e.tx_hash === id);
    expect(byTx(t3.txID)).toMatchObject({ network: 'tron', block_hash: b1.blockID, from: X.base58, to: B.base58, log_index: 0 });
    expect(byTx(t1.txID)).toMatchObject({ from: X.base58, to: A.base58, log_index: null });
    for (const r of rx.received) expect(signatureValid(secret, r)).toBe(true);

    // Two blocks deep: b2 and b3 are replaced; t8 comes back in another block, t7 does not.
    node.orphan(2);
    node.mine([]);
    node.mine([]);
    const b5 = node.mine([t8]); // one block higher than t8 was
    expect(b5.number).toBe(b3.number + 1);
    await waitFor(async () => (await feed()).some((e) => e.tx_hash === t8.txID && e.block_height === b5.number));
    expect((await feed()).map(row)).toEqual([...expected.slice(0, 6), [t8.txID, B.base58, 'payment', 'in', null, '42', b5.number]]);
  });
});

describe('Tron block events and billing', () => {
  it('a block event lists the txIDs; hits bill 30 credits, blocks the price of /wallet/getblockbynum', async () => {
    const b = await t.merchant({ plan: 'pro' });
    const brx = await startReceiver();
    try {
      await b.call('PUT', '/v1/address-watch/webhook', json({ url: brx.url, enabled: true, events: { block_networks: ['tron'] } }));
      const to = tronAccount();
      expect((await b.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'tron', address: to.base58 }))).body.created).toBe(true);
      const tx = node.trx(X.hex, to.hex, '1000000');
      const blk = node.mine([tx, node.trx(X.hex, tronAccount().hex, '1')]);
      const bodies = () => brx.received.map((r) => JSON.parse(r.body) as Ev);
      await brx.waitFor(() => bodies().some((e) => e.type === 'block' && e.block_height === blk.number) && bodies().some((e) => e.tx_hash === tx.txID));
      expect(bodies().find((e) => e.type === 'block' && e.block_height === blk.number)).toMatchObject({
        network: 'tron', block_hash: blk.blockID, tx_count: 2, transactions: blk.transactions.map((x) => x.txID),
      });
      const deadline = Date.now() + 10_000;
      let methods: Array<{ method: string; requests: number; credits: number }> = [];
      while (Date.now() < deadline) {
        methods = (await b.call('GET', '/v1/account/usage?days=7')).body.usage.methods;
        if (methods.some((x) => x.method === 'webhook:payment')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(methods.find((x) => x.method === 'webhook:payment')).toEqual({ method: 'webhook:payment', requests: 1, credits: 30 });
      const blocks = methods.find((x) => x.method === 'webhook:block')!;
      expect(blocks.credits).toBe(blocks.requests * 25);
    } finally {
      await brx.close();
    }
  });
});

describe('Tron through the gateway', () => {
  it('REST routes pass through and are priced per route', async () => {
    const e = (await m.call('POST', '/v1/endpoints', json({ name: 'trx', network_environment_id: 15 }))).body.endpoint;
    const now = await request(`${t.gatewayUrl}/${e.uuid}/wallet/getnowblock`, { method: 'POST', body: '{}' });
    expect(now.statusCode).toBe(200);
    expect(((await now.body.json()) as Ev).block_header.raw_data.number).toBe(node.height);
    const byNum = await request(`${t.gatewayUrl}/${e.uuid}/wallet/getblockbynum`, { method: 'POST', body: json({ num: 1 }) });
    expect(((await byNum.body.json()) as Ev).blockID).toBe(node.chain[1]!.blockID);
    await t.service.gateway.meter.flush();
    const usage = (await m.call('GET', `/v1/endpoints/${e.id}/usage?days=7`)).body.usage;
    const byMethod = Object.fromEntries(usage.methods.map((x: Ev) => [x.method, x.credits]));
    expect(byMethod).toEqual({ 'POST /wallet/getnowblock': 10, 'POST /wallet/getblockbynum': 25 });
    await t.service.gateway.probe.probeAll();
    expect((await m.call('GET', `/v1/endpoints/${e.id}`)).body.endpoint).toMatchObject({ block_height: node.height });
  });
});

async function waitFor(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAccount, webhookSecretOf } from '../src/store/index.js';
import { FakeBitcoinCore, regtestAddress } from './helpers/fake-bitcoin.js';
import { signatureValid, startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

const json = (o: unknown) => JSON.stringify(o);
let node: FakeBitcoinCore;
let t: TestService;
let rx: Receiver;
let m: Merchant;
let secret: string;
const A = regtestAddress('wpkh');
const B = regtestAddress('tr');
const C = regtestAddress('pkh');
const X = regtestAddress('wpkh');
const Y = regtestAddress('sh');

type Ev = Record<string, any>;
const wallet = (): Ev[] => rx.received.map((r) => JSON.parse(r.body) as Ev).filter((b) => b.type !== 'block');
const feed = async (): Promise<Ev[]> => (await m.call('GET', '/v1/address-watch/events?limit=500')).body.events.filter((e: Ev) => e.type !== 'block');
const row = (e: Ev) => [e.tx_hash, e.address, e.type, e.direction, e.amount, e.block_height];

beforeAll(async () => {
  [node, rx] = await Promise.all([new FakeBitcoinCore().start(), startReceiver()]);
  for (let i = 0; i < 5; i++) node.mine([], X);
  t = await startTestService({
    networks: [{ id: 8, slug: 'bitcoin', name: 'Bitcoin', family: 'utxo', environments: [{ id: 13, slug: 'regtest', upstreams: [node.url], confirmations: 1 }] }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
    gateway: { probe_interval_ms: 60_000 },
  }, { watch: { pollMs: 100 } });
  m = await t.merchant({ plan: 'pro' });
  secret = webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!);
  await m.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: true, events: { block: false } }));
  for (const address of [A.toUpperCase(), B, C]) {
    const r = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'bitcoin', address }));
    expect(r.body.created, JSON.stringify(r.body)).toBe(true);
  }
});
afterAll(async () => {
  await t?.stop();
  await Promise.all([node?.stop(), rx?.close()]);
});

describe('Bitcoin (UTXO) addresses', () => {
  it('validates per network and normalises bech32 to lower case; watches match any form', async () => {
    const list = (await m.call('GET', '/v1/address-watch/addresses?network_slug=bitcoin')).body.addresses.map((w: Ev) => w.address);
    expect(list.sort()).toEqual([A, B, C].sort());
    const again = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'bitcoin', address: A }));
    expect(again.body.created).toBe(false);
    for (const bad of ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4' /* mainnet on regtest */, `${A.slice(0, -1)}${A.endsWith('q') ? 'p' : 'q'}` /* checksum */, '0x52908400098527886E0F7030069857D2E4169EE7', 'mzBc4XEFSdzCDcTxAgf6EZXgsZWpztRhe']) {
      const r = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'bitcoin', address: bad }));
      expect(r.status, bad).toBe(400);
      expect(r.body.error).toMatch(/^address: /);
    }
  });
});

describe('Bitcoin (UTXO) scanning', () => {
  it('payments to every script type, a multi-input payout with change (net amounts), coinbase, a reorg two blocks deep', async () => {
    const fund = node.tx([{ txid: node.chain[1]!.tx[0]!.txid, vout: 0 }], [
      { address: A, btc: '0.50000000' }, { address: C, btc: '0.25000000' }, { address: X, btc: '49.24990000' },
    ]);
    const fundB = node.tx([{ txid: node.chain[2]!.tx[0]!.txid, vout: 0 }], [{ address: B, btc: '1.00000000' }, { scriptHex: '6a0568656c6c6f', btc: '0.00000000' }]);
    const b1 = node.mine([fund, fundB], X);
    // Spends A's and B's outputs (two inputs), pays Y, sends change back to A.
    const spend = node.tx([{ txid: fund.txid, vout: 0 }, { txid: fundB.txid, vout: 0 }], [{ address: Y, btc: '1.19990000' }, { address: A, btc: '0.30000000' }]);
    const b2 = node.mine([spend], X);
    const late = node.tx([{ txid: node.chain[3]!.tx[0]!.txid, vout: 0 }], [{ address: C, btc: '0.00001000' }]);
    const b3 = node.mine([late], C); // C also gets the coinbase
    await rx.waitFor(() => wallet().length >= 7);

    const expected = [
      [fund.txid, A, 'payment', 'in', '50000000', b1.height],
      [fund.txid, C, 'payment', 'in', '25000000', b1.height],
      [fundB.txid, B, 'payment', 'in', '100000000', b1.height],
      [spend.txid, A, 'payout', 'out', '20000000', b2.height],
      [spend.txid, A, 'other', 'in', '0', b2.height],
      [spend.txid, B, 'payout', 'out', '100000000', b2.height],
      [b3.tx[0]!.txid, C, 'payment', 'in', '5000000000', b3.height],
      [late.txid, C, 'payment', 'in', '1000', b3.height],
    ].map((r) => [...r]);
    await rx.waitFor(() => wallet().length >= expected.length);
    // Deliveries run in parallel: the webhooks carry the same events, in any order.
    expect(wallet().map(row).sort()).toEqual([...expected].sort());
    expect((await feed()).map(row)).toEqual(expected);
    const byTx = (id: string, type: string) => wallet().find((e) => e.tx_hash === id && e.type === type && e.address === A);
    expect(byTx(fund.txid, 'payment')).toMatchObject({ network: 'bitcoin', block_hash: b1.hash, from: X, to: A, token: null, log_index: null });
    expect(byTx(spend.txid, 'payout')).toMatchObject({ from: A, to: Y });
    for (const r of rx.received) expect(signatureValid(secret, r)).toBe(true);

    // Reorg two blocks deep: b2 and b3 leave the chain; the new chain carries `late` again
    // (in another block) but not the spend.
    node.orphan(2);
    node.mine([], X);
    node.mine([], X);
    const b5 = node.mine([late], X); // one block higher than `late` was
    expect(b5.height).toBe(b3.height + 1);
    await waitFor(async () => (await feed()).some((e) => e.tx_hash === late.txid && e.block_height === b5.height));
    const after = (await feed()).map(row);
    expect(after).toEqual([...expected.slice(0, 3), [late.txid, C, 'payment', 'in', '1000', b5.height]]);
    // The webhook of the new block's event came too (a new id, the new block hash).
    await rx.waitFor(() => wallet().some((e) => e.tx_hash === late.txid && e.block_hash === b5.hash));
  });

  it('an older node without prevout: spent outputs come from getrawtransaction', async () => {
    node.legacy = true;
    const fund = node.tx([{ txid: node.chain[4]!.tx[0]!.txid, vout: 0 }], [{ address: B, btc: '2.00000000' }]);
    node.mine([fund], X);
    const spend = node.tx([{ txid: fund.txid, vout: 0 }], [{ address: X, btc: '1.99990000' }]);
    const b = node.mine([spend], X);
    await waitFor(async () => (await feed()).some((e) => e.tx_hash === spend.txid));
    expect((await feed()).filter((e) => e.tx_hash === spend.txid).map(row)).toEqual([[spend.txid, B, 'payout', 'out', '200000000', b.height]]);
    expect(node.calls).toContain('getrawtransaction');
    node.legacy = false;
  });
});

describe('Bitcoin block events', () => {
  it('list the txids and bill the price of getblock', async () => {
    const b = await t.merchant({ plan: 'pro' });
    const brx = await startReceiver();
    try {
      await b.call('PUT', '/v1/address-watch/webhook', json({ url: brx.url, enabled: true, events: { block_networks: ['bitcoin'] } }));
      await new Promise((r) => setTimeout(r, 300)); // the subscription takes effect from the next block
      const blk = node.mine([node.tx([{ txid: node.chain[5]!.tx[0]!.txid, vout: 0 }], [{ address: Y, btc: '49.99990000' }])], X);
      const bodies = () => brx.received.map((r) => JSON.parse(r.body) as Ev);
      await brx.waitFor(() => bodies().some((e) => e.block_height === blk.height));
      expect(bodies().find((e) => e.block_height === blk.height)).toMatchObject({
        type: 'block', network: 'bitcoin', block_hash: blk.hash, tx_count: 2, transactions: blk.tx.map((x) => x.txid),
      });
      const deadline = Date.now() + 10_000;
      let block: { requests: number; credits: number } | undefined;
      while (Date.now() < deadline && !block) {
        block = (await b.call('GET', '/v1/account/usage?days=7')).body.usage.methods.find((x: Ev) => x.method === 'webhook:block');
        if (!block) await new Promise((r) => setTimeout(r, 100));
      }
      expect(block!.credits).toBe(block!.requests * 60);
    } finally {
      await brx.close();
    }
  });
});

describe('Bitcoin through the gateway', () => {
  it('JSON-RPC 1.0 bodies pass through, errors included, priced by the Bitcoin table', async () => {
    const e = (await m.call('POST', '/v1/endpoints', json({ name: 'btc', network_environment_id: 13 }))).body.endpoint;
    const post = (body: unknown) => request(`${t.gatewayUrl}/${e.uuid}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'text/plain' } });
    const r = await post({ jsonrpc: '1.0', id: 'curltest', method: 'getblockchaininfo', params: [] });
    expect(r.statusCode).toBe(200);
    expect(await r.body.json()).toMatchObject({ result: { chain: 'regtest' }, error: null, id: 'curltest' });
    const batch = await post([{ jsonrpc: '1.0', id: 1, method: 'getblockcount' }, { jsonrpc: '1.0', id: 2, method: 'getblockhash', params: [0] }]);
    expect(await batch.body.json()).toMatchObject([{ result: node.height, id: 1 }, { result: node.chain[0]!.hash, id: 2 }]);
    const err = await post({ jsonrpc: '1.0', id: 3, method: 'getblockhash', params: [99_999] });
    expect(err.statusCode).toBe(500);
    expect(await err.body.json()).toEqual({ result: null, error: { code: -8, message: 'Block height out of range' }, id: 3 });
    await t.service.gateway.meter.flush();
    const usage = (await m.call('GET', `/v1/endpoints/${e.id}/usage?days=7`)).body.usage;
    const byMethod = Object.fromEntries(usage.methods.map((x: Ev) => [x.method, x.credits]));
    expect(byMethod).toMatchObject({ getblockchaininfo: 10, getblockcount: 5, getblockhash: 5 });

    // The endpoint shows the node's version and height (a JSON-RPC 1.0 batch).
    await t.service.gateway.probe.probeAll();
    const shown = (await m.call('GET', `/v1/endpoints/${e.id}`)).body.endpoint;
    expect(shown).toMatchObject({ version: '/Satoshi:27.0.0/', block_height: node.height });
  });
});

async function waitFor(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

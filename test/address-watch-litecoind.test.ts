import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAccount, webhookSecretOf } from '../src/store/index.js';
import { signatureValid, startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

/**
 * A real UTXO node: Litecoin Core in regtest (Debian ships it; not bitcoind). It speaks
 * Bitcoin Core's JSON-RPC of its 0.21 base: `getblock` verbosity 3 is answered as 2 (no
 * `prevout`), so payouts are resolved through `getrawtransaction` (-txindex), and
 * `invalidateblock` makes a real reorg.
 */
const haveNode = await new Promise<boolean>((resolve) => {
  const p = spawn('litecoind', ['-version'], { stdio: 'ignore' });
  p.on('error', () => resolve(false));
  p.on('exit', (code) => resolve(code === 0));
});
if (!haveNode) console.warn('address-watch-litecoind: skipped: litecoind is not installed (apt-get install litecoind; .ci/run does)');

const json = (o: unknown) => JSON.stringify(o);
type Ev = Record<string, any>;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe.skipIf(!haveNode)('a real UTXO node (litecoind -regtest)', () => {
  let proc: ChildProcess;
  let dataDir: string;
  let rpcUrl: string;
  let t: TestService;
  let rx: Receiver;
  let m: Merchant;
  let secret: string;
  let id = 0;
  const auth = `Basic ${Buffer.from('rpcctl:regtest').toString('base64')}`;

  async function rpc<T = any>(method: string, params: unknown[] = [], wallet?: string): Promise<T> {
    const res = await request(`${rpcUrl}${wallet ? `wallet/${wallet}` : ''}`, {
      method: 'POST', headers: { authorization: auth, 'content-type': 'text/plain' },
      body: json({ jsonrpc: '1.0', id: ++id, method, params }),
    });
    const body = await res.body.json() as { result: T; error: { message: string } | null };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  }
  const mine = async (n: number, to: string): Promise<string[]> => rpc<string[]>('generatetoaddress', [n, to]);
  const feed = async (): Promise<Ev[]> => (await m.call('GET', '/v1/address-watch/events?limit=500')).body.events.filter((e: Ev) => e.type !== 'block');
  async function until(check: () => Promise<boolean>, ms = 30_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((r) => setTimeout(r, 150));
    }
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-ltc-'));
    const [rpcPort, p2pPort] = [await freePort(), await freePort()];
    proc = spawn('litecoind', [
      '-regtest', `-datadir=${dataDir}`, `-rpcport=${rpcPort}`, `-port=${p2pPort}`, '-rpcbind=127.0.0.1', '-rpcallowip=127.0.0.1',
      '-rpcuser=rpcctl', '-rpcpassword=regtest', '-txindex', '-fallbackfee=0.0001', '-listen=0', '-server', '-printtoconsole=0',
    ], { stdio: 'ignore' });
    rpcUrl = `http://127.0.0.1:${rpcPort}/`;
    await until(async () => rpc('getblockchaininfo').then(() => true, () => false), 60_000);
    await rpc('createwallet', ['w']);
    // The watched addresses live in a wallet of their own, so the payer's wallet never spends
    // their coins as its own (it would, and the scanner would rightly report payouts).
    await rpc('createwallet', ['shop']);
    rx = await startReceiver();
    t = await startTestService({
      networks: [{
        id: 20, slug: 'litecoin', name: 'Litecoin', family: 'utxo',
        environments: [{ id: 40, slug: 'regtest', upstreams: [`http://rpcctl:regtest@127.0.0.1:${rpcPort}/`], confirmations: 1, address_format: { bech32: 'rltc', pub_key_hash: 111, script_hash: 58 } }],
      }],
      webhooks: { allow_private_urls: true, timeout_ms: 2000 },
      gateway: { probe_interval_ms: 60_000 },
    }, { watch: { pollMs: 150 } });
    m = await t.merchant({ plan: 'pro' });
    secret = webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!);
    await m.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: true, events: { block: false } }));
  }, 90_000);

  afterAll(async () => {
    await t?.stop();
    await rx?.close();
    if (proc && proc.exitCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      await rpc('stop').catch(() => proc.kill('SIGTERM'));
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 40_000);

  it('payments to bech32, legacy and P2SH addresses, a payout with change, and a real reorg two blocks deep', async () => {
    const miner = await rpc<string>('getnewaddress', ['', 'bech32'], 'w');
    await mine(101, miner);
    const W = await rpc<string>('getnewaddress', ['', 'bech32'], 'shop');
    const L = await rpc<string>('getnewaddress', ['', 'legacy'], 'shop');
    const S = await rpc<string>('getnewaddress', ['', 'p2sh-segwit'], 'shop');
    const other = await rpc<string>('getnewaddress', ['', 'bech32'], 'w');
    for (const address of [W.toUpperCase(), L, S]) {
      const r = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'litecoin', address }));
      expect(r.body.created, json(r.body)).toBe(true);
    }

    const txW = await rpc<string>('sendtoaddress', [W, 1.5], 'w');
    const txL = await rpc<string>('sendtoaddress', [L, 0.25], 'w');
    const txS = await rpc<string>('sendtoaddress', [S, 0.1], 'w');
    const [h1] = await mine(1, miner);
    await until(async () => (await feed()).length >= 3);
    const row = (e: Ev) => [e.tx_hash, e.address, e.type, e.direction, e.amount, e.block_hash];
    expect((await feed()).map(row).sort()).toEqual([
      [txW, W, 'payment', 'in', '150000000', h1],
      [txL, L, 'payment', 'in', '25000000', h1],
      [txS, S, 'payment', 'in', '10000000', h1],
    ].sort());

    // Spend W's output: 1.0 to another address, 0.4999 back to W (change), 0.0001 fee: a payout of 1.0001 net.
    const [utxo] = await rpc<Array<{ txid: string; vout: number }>>('listunspent', [1, 9999999, [W]], 'shop');
    const raw = await rpc<string>('createrawtransaction', [[{ txid: utxo!.txid, vout: utxo!.vout }], [{ [other]: 1.0 }, { [W]: 0.4999 }]]);
    const signed = await rpc<{ hex: string }>('signrawtransactionwithwallet', [raw], 'shop');
    const spend = await rpc<string>('sendrawtransaction', [signed.hex]);
    const [h2] = await mine(1, miner);
    const txL2 = await rpc<string>('sendtoaddress', [L, 0.05], 'w');
    const [h3] = await mine(1, miner);
    await until(async () => (await feed()).some((e) => e.tx_hash === txL2));
    expect((await feed()).filter((e) => e.block_hash !== h1).map(row)).toEqual([
      [spend, W, 'payout', 'out', '100010000', h2],
      [spend, W, 'other', 'in', '0', h2],
      [txL2, L, 'payment', 'in', '5000000', h3],
    ]);
    expect((await feed()).find((e) => e.type === 'payout')).toMatchObject({ from: W, to: other, token: null });

    // A real reorg two blocks deep: h2 and h3 are invalidated, their transactions go back
    // to the mempool and are mined again on a longer chain.
    await rpc('invalidateblock', [h2]);
    // Another coinbase address: the same second, payee and transactions would rebuild the very block just invalidated.
    const fresh = await mine(3, await rpc<string>('getnewaddress', ['', 'legacy'], 'w'));
    // What the node re-mined is the truth: the spend goes back in; whether the wallet's own
    // transaction does depends on its coin choice (it may have spent an orphaned output).
    const reMined = new Set<string>();
    for (const h of fresh) for (const tx of (await rpc<{ tx: string[] }>('getblock', [h, 1])).tx) reMined.add(tx);
    expect(reMined.has(spend)).toBe(true);
    await until(async () => (await feed()).some((e) => e.tx_hash === spend && fresh.includes(e.block_hash)));
    await until(async () => !reMined.has(txL2) || (await feed()).some((e) => e.tx_hash === txL2 && fresh.includes(e.block_hash)));
    await new Promise((r) => setTimeout(r, 500)); // nothing more comes
    const now = await feed();
    expect(now.some((e) => e.block_hash === h2 || e.block_hash === h3)).toBe(false);
    expect(now.filter((e) => e.block_hash !== h1).map((e) => [e.tx_hash, e.type, e.amount, fresh.includes(e.block_hash)])).toEqual([
      [spend, 'payout', '100010000', true],
      [spend, 'other', '0', true],
      ...(reMined.has(txL2) ? [[txL2, 'payment', '5000000', true]] : []),
    ]);
    const newEvents = reMined.has(txL2) ? 3 : 2;
    await rx.waitFor(() => rx.received.filter((r) => fresh.includes(JSON.parse(r.body).block_hash)).length >= newEvents);
    for (const r of rx.received) expect(signatureValid(secret, r)).toBe(true);
  }, 120_000);
});

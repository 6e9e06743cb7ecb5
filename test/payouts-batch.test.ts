import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HDKey } from '@scure/bip32';
import { execa } from 'execa';
import { getAddress, keccak256, parseEther, toHex, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAccount, webhookSecretOf } from '../src/store/index.js';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { haveLitecoind, LITECOIND_MISSING, type Litecoind, walletMerchant, type WalletMerchant } from './helpers/litecoind.js';
import { signatureValid, startReceiver, type Receiver } from './helpers/receiver.js';
import { memberKey, startTestService, type Merchant, type TestService } from './helpers/service.js';
import { describeUnless } from './helpers/skips.js';
import { until } from './helpers/wait.js';

/**
 * A batch of 1,000 payout lines from a CSV, whole: a developer uploads it with the built
 * `rpcctl payouts create --file` (bin/rpcctl.js), an owner approves it with `rpcctl payouts
 * approve`, the merchant pays and every line reaches `completed`, each by its own transfer, with
 * a signed `payout.sent` and `payout.completed` webhook per line: on litecoind by one PSBT paying
 * all 1,000 lines that Litecoin Core signs; on anvil by 1,000 transfers viem sends from each
 * line's EIP-681 request, in nonce order. Each case stays well under a minute: the service's
 * work per block must not grow with the batch line by line.
 */
const LINES = 1000;
/** Addresses on two lines of the anvil batch. */
const SHARED = 10;
const json = (o: unknown) => JSON.stringify(o);
const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'rpcctl-batch-'));

interface Key { apiKey: string; secret: string }

/** The built CLI against `t` with `key`; fails the test on a non-zero exit. */
async function rpcctl(t: TestService, key: Key, args: string[]): Promise<string> {
  const r = await execa(process.execPath, [bin, ...args], {
    reject: false, input: '', extendEnv: false,
    env: { PATH: process.env.PATH, HOME: dir, RPCCTL_CONFIG_DIR: mkdtempSync(join(dir, 'cfg-')), NO_COLOR: '1', PUBLIC_API_BASE: t.baseUrl, PUBLIC_API_KEY: key.apiKey, PUBLIC_API_SECRET: key.secret },
  });
  expect(r.exitCode, `rpcctl ${args.join(' ')}\n${r.stderr}`).toBe(0);
  return r.stdout;
}

/** The merchant's webhook (payouts' webhooks go to the account's), its secret, and a developer member's key. */
async function setUp(t: TestService, m: Merchant, rx: Receiver): Promise<{ secret: string; developer: Key }> {
  expect((await m.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: true }))).status).toBeLessThan(300);
  const { apiKey, secret } = await memberKey(t, m, 'developer', 'dev@example.com');
  return { secret: webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!), developer: { apiKey, secret } };
}

/** The CSV uploaded by the developer through the CLI (a developer's payout waits for an owner), approved by the owner the same way. */
async function upload(t: TestService, m: Merchant, developer: Key, lines: Array<[network: string, address: string, amount: string, reference: string]>): Promise<string> {
  const file = join(dir, `${lines[0]![0]}.csv`);
  writeFileSync(file, ['network,asset,address,amount,reference', ...lines.map(([n, a, amount, r]) => `${n},,${a},${amount},${r}`)].join('\n') + '\n');
  const id = (await rpcctl(t, developer, ['payouts', 'create', '--file', file, '--yes'])).trim();
  expect(id).toMatch(/^po_/);
  expect((await m.call('GET', `/v1/payouts/${id}`)).body.payout).toMatchObject({ approval: 'awaiting', line_count: LINES });
  await rpcctl(t, m, ['payouts', 'approve', id, '--yes']);
  return id;
}

type Line = { line: number; status: string; reference: string; amount: string; address: string; tx_hash: string | null; payment_request: { uri: string } | null };

/** Every line `completed`, each by its own transfer, seen through the API and the signed webhooks. */
async function eachLineOnce(t: TestService, m: Merchant, rx: Receiver, secret: string, id: string, references: string[], ms: number): Promise<Line[]> {
  // The list shows each payout's status (its least advanced line) without the lines: cheap to poll.
  await until(async () => ((await m.call('GET', '/v1/payouts')).body.payouts.find((p: { payout_id: string }) => p.payout_id === id).status === 'completed' ? true : undefined), ms);
  const done = (await m.call('GET', `/v1/payouts/${id}`)).body.payout.lines as Line[];
  expect(done.filter((l) => l.status !== 'completed')).toEqual([]);
  expect(done.map((l) => l.reference).sort()).toEqual([...references].sort());
  const rows = await t.store.db.selectFrom('payout_lines').innerJoin('payouts', 'payouts.id', 'payout_lines.payout_pk')
    .select(['payout_lines.event_id']).where('payouts.payout_id', '=', id).execute();
  // No transfer counted for two lines.
  expect(new Set(rows.map((r) => r.event_id)).size).toBe(LINES);
  // Delivery is at least once: a receiver dedupes on X-Webhook-Id.
  const hooksOf = () => [...new Map(rx.received.map((r) => [r.headers['x-webhook-id'], { r, b: JSON.parse(r.body) }])).values()]
    .filter(({ b }) => b.payout_id === id && (b.event === 'payout.sent' || b.event === 'payout.completed'));
  // Webhooks go out at most 4 at a time per account (docs/address-watch.md): the 4,000 of a
  // batch (each line's first state, awaiting_payment, sent, completed) take a while on a
  // loaded machine, longer than the lines' moves themselves.
  await rx.waitFor(() => hooksOf().length >= 2 * LINES, 150_000);
  const perLine = new Map<number, string[]>();
  for (const { b } of hooksOf()) perLine.set(b.line, [...(perLine.get(b.line) ?? []), b.event]);
  expect(perLine.size).toBe(LINES);
  expect([...perLine.values()].filter((events) => json(events) !== json(['payout.sent', 'payout.completed']))).toEqual([]);
  expect(hooksOf().every(({ r }) => signatureValid(secret, r))).toBe(true);
  return done;
}

describeUnless(!haveLitecoind && LITECOIND_MISSING, 'a 1,000-line payout on litecoind: one PSBT, signed by Litecoin Core', () => {
  let node: Litecoind;
  let t: TestService;
  let m: Merchant;
  let developer: Key;
  let rx: Receiver;
  let secret: string;
  let miner: string;
  const rpc = <T = any>(method: string, params: unknown[] = [], wallet?: string) => node.rpc<T>(method, params, wallet);

  let merchant: WalletMerchant;
  beforeAll(async () => {
    merchant = await walletMerchant({ finalityDepth: 2 });
    ({ node, t, m, secret, rx, miner } = merchant);
    ({ developer } = await setUp(t, m, rx));
  }, 90_000);

  afterAll(async () => { await merchant?.stop(); }, 40_000);

  it('1,000 lines from CSV: one PSBT, signed by the wallet, broadcast, every line completed once', async () => {
    // The merchant's coins: a paid order of 20 LTC.
    const order = (await m.call('POST', '/v1/payments', json({ order_id: 'funds', network_slug: 'litecoin', amount: '20' }))).body.payment;
    await rpc('sendtoaddress', [order.address, 20], 'w');
    await rpc('generatetoaddress', [1, miner]);
    await until(async () => ((await m.call('GET', `/v1/payments/${order.payment_id}`)).body.payment.status === 'paid' ? true : undefined));

    // The payees: 1,000 addresses of another key, derived by the node.
    const payees = HDKey.fromMasterSeed(new Uint8Array(32).fill(7), { private: 0x04358394, public: 0x043587cf }).derive("m/84'/1'/0'/0").publicExtendedKey;
    const { descriptor } = await rpc<{ descriptor: string }>('getdescriptorinfo', [`wpkh(${payees}/*)`]);
    const addresses = await rpc<string[]>('deriveaddresses', [descriptor, [0, LINES - 1]]);
    const csv = addresses.map((a, i) => ['litecoin', a, `0.0${String(1000 + i).padStart(5, '0')}`, `ltc-${i}`] as [string, string, string, string]);
    const id = await upload(t, m, developer, csv);

    const psbt = await m.call('GET', `/v1/payouts/${id}/psbt`);
    expect(psbt.status, json(psbt.body).slice(0, 500)).toBe(200);
    const decoded = await rpc<{ tx: { vout: unknown[] } }>('decodepsbt', [psbt.body.psbt]);
    expect(decoded.tx.vout.length).toBe(LINES + 1);
    const processed = await rpc<{ psbt: string; complete: boolean }>('walletprocesspsbt', [psbt.body.psbt], 'merchant');
    expect(processed.complete).toBe(true);
    const { hex } = await rpc<{ hex: string }>('finalizepsbt', [processed.psbt]);
    const submitted = await m.call('POST', `/v1/payouts/${id}/transaction`, json({ signed_transaction: hex }));
    expect(submitted.status, json(submitted.body).slice(0, 500)).toBe(200);
    expect(await rpc<string[]>('getrawmempool')).toEqual([submitted.body.tx_hash]);
    await rpc('generatetoaddress', [2, miner]);
    const done = await eachLineOnce(t, m, rx, secret, id, csv.map((l) => l[3]), 30_000);
    expect(new Set(done.map((l) => l.tx_hash))).toEqual(new Set([submitted.body.tx_hash]));
    // Each payee address holds what its line said.
    const { unspents } = await rpc<{ unspents: Array<{ amount: number }> }>('scantxoutset', ['start', [{ desc: descriptor, range: [0, LINES - 1] }]]);
    expect(unspents.length).toBe(LINES);
    expect(unspents.reduce((s, u) => s + Math.round(u.amount * 1e8), 0)).toBe(csv.reduce((s, l) => s + Math.round(Number(l[2]) * 1e8), 0));
  }, 240_000);
});

describe('a 1,000-line payout on anvil: 1,000 transfers viem sends from the EIP-681 requests', () => {
  let anvil: Anvil;
  let t: TestService;
  let m: Merchant;
  let developer: Key;
  let rx: Receiver;
  let secret: string;

  beforeAll(async () => {
    [anvil, rx] = await Promise.all([startAnvil(), startReceiver()]);
    t = await startTestService({
      networks: [{ slug: 'anvil', name: 'Anvil', family: 'evm', environments: [{ slug: 'local', upstreams: [anvil.url], confirmations: 1 }] }],
      webhooks: { allow_private_urls: true, timeout_ms: 2000 },
      payments: { aml: { provider: 'none' }, tick_ms: 50 },
    }, { watch: { pollMs: 100, delivery: { pollMs: 50 } } });
    m = await t.merchant({ plan: 'pro' });
    ({ secret, developer } = await setUp(t, m, rx));
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
    await Promise.all([anvil?.stop(), rx?.close()]);
  });

  it('1,000 lines from CSV: each paid by its own transfer, every line completed once', async () => {
    const addressOf = (i: number): Address => getAddress(`0x${keccak256(toHex(`payee-${i}`)).slice(26)}`);
    // The last ten addresses take two lines each, of the same amount (an EVM line is a
    // transaction of its own): each of their two transfers completes one line, never both.
    const payee = (i: number) => (i < LINES - SHARED ? i : i - SHARED);
    const csv = [...Array(LINES).keys()].map((i) => ['anvil', addressOf(payee(i)), `0.${String(1000 + payee(i)).padStart(6, '0')}`, `eth-${i}`] as [string, string, string, string]);
    const id = await upload(t, m, developer, csv);
    const requests = (await m.call('GET', `/v1/payouts/${id}`)).body.payout.lines as Line[];
    // The merchant's wallet pays what each request says, in nonce order: a node keeps a
    // sender's transactions that arrive out of order only while the gap is filled, so
    // parallel sends lose some.
    const payer = anvil.accounts[0]!;
    const first = await anvil.public.getTransactionCount({ address: payer });
    await anvil.test.setAutomine(false);
    for (const [k, l] of requests.entries()) {
      const uri = /^ethereum:(0x[0-9a-fA-F]{40})@31337\?value=(\d+)$/.exec(l.payment_request!.uri)!;
      expect(uri, l.payment_request!.uri).not.toBeNull();
      await anvil.wallet.sendTransaction({ account: payer, to: uri[1] as Address, value: BigInt(uri[2]!), nonce: first + k, gas: 21_000n, chain: null });
    }
    await anvil.test.mine({ blocks: 1 });
    await anvil.test.setAutomine(true);
    expect(await anvil.public.getTransactionCount({ address: payer })).toBe(first + LINES);
    // anvil's finalized block is 64 under its head.
    await anvil.test.mine({ blocks: 65 });
    const done = await eachLineOnce(t, m, rx, secret, id, csv.map((l) => l[3]), 30_000);
    expect(new Set(done.map((l) => l.tx_hash)).size).toBe(LINES);
    expect(new Set(done.map((l) => l.address)).size).toBe(LINES - SHARED);
    for (const l of done.slice(0, 3)) expect(await anvil.public.getBalance({ address: l.address as Address })).toBe(parseEther(l.amount));
  }, 240_000);
});

import {
  type Instruction, type KeyPairSigner, type Rpc, type SolanaRpcApi,
  address, appendTransactionMessageInstructions, createSolanaRpc, createTransactionMessage, generateKeyPairSigner,
  getBase64EncodedWireTransaction, getSignatureFromTransaction, lamports, pipe, setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash, signTransactionMessageWithSigners,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstruction, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainOf, SKIPPED } from '../src/chains/index.js';
import { type FakeSolanaNode, USDC_MINT, USDT_MINT, startFakeSolana } from './helpers/fake-solana.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

/**
 * Address Watch on Solana over the litesvm node (test/helpers/fake-solana.ts): real signed SOL
 * and SPL transfers sent by @solana/kit, slots the test produces (some skipped), `confirmed` one
 * slot below the open bank, `finalized` 32 below, and a fork that drops confirmed slots.
 */

const json = (o: unknown) => JSON.stringify(o);
type Ev = Record<string, any>;
let node: FakeSolanaNode;
let rpc: Rpc<SolanaRpcApi>;
let t: TestService;
let m: Merchant;
let rx: Receiver;
let X: KeyPairSigner; // an unwatched counterparty
let A: KeyPairSigner; // watched: SOL in and out
let B: KeyPairSigner; // watched: USDC in (into its associated token account) and out

const feed = async (): Promise<Ev[]> => (await m.call('GET', '/v1/address-watch/events?limit=500')).body.events.filter((e: Ev) => e.type !== 'block');
const row = (e: Ev) => [e.tx_hash, e.address, e.type, e.direction, e.token, e.amount];

async function ata(owner: KeyPairSigner | string, mint = USDC_MINT): Promise<string> {
  const [pda] = await findAssociatedTokenPda({ owner: address(typeof owner === 'string' ? owner : owner.address), mint: address(mint), tokenProgram: TOKEN_PROGRAM_ADDRESS });
  return pda;
}

/** Signs with the payer and sends to the node; the transaction runs in the open slot. */
async function send(payer: KeyPairSigner, ixs: Instruction[]): Promise<string> {
  const { value: bh } = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const tx = await signTransactionMessageWithSigners(pipe(
    createTransactionMessage({ version: 0 }),
    (msg) => setTransactionMessageFeePayerSigner(payer, msg),
    (msg) => setTransactionMessageLifetimeUsingBlockhash(bh, msg),
    (msg) => appendTransactionMessageInstructions(ixs, msg),
  ));
  await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
  return getSignatureFromTransaction(tx);
}

const sol = (from: KeyPairSigner, to: string, amount: bigint) => send(from, [getTransferSolInstruction({ source: from, destination: address(to), amount: lamports(amount) })]);

async function usdc(from: KeyPairSigner, to: string, amount: bigint, mint = USDC_MINT): Promise<string> {
  const destination = await ata(to, mint);
  return send(from, [
    // The receiver's associated token account, created in the same transaction when it has none.
    getCreateAssociatedTokenIdempotentInstruction({ payer: from, owner: address(to), mint: address(mint), ata: address(destination), tokenProgram: TOKEN_PROGRAM_ADDRESS }),
    getTransferCheckedInstruction({ source: address(await ata(from, mint)), mint: address(mint), destination: address(destination), authority: from, amount, decimals: 6 }),
  ]);
}

/**
 * Freezes the open slot into a block and confirms it (one more block on top); `skip` slots
 * after it have no block, so the block on top names it as its parent across them.
 */
function land(opts: { skip?: number } = {}): number {
  const slot = node.chain.produceSlot(opts).slot;
  node.chain.produceSlot();
  return slot;
}

async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not in time`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  [node, rx] = await Promise.all([startFakeSolana(), startReceiver()]);
  rpc = createSolanaRpc(node.url);
  [X, A, B] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner(), generateKeyPairSigner()]);
  node.chain.createMint(USDC_MINT, { decimals: 6 });
  node.chain.createMint(USDT_MINT, { decimals: 6 });
  for (const s of [X, A, B]) node.chain.fundSol(s.address, 10_000_000_000n);
  await node.chain.mintTo(X.address, USDC_MINT, 1_000_000_000n);
  await node.chain.mintTo(X.address, USDT_MINT, 1_000_000_000n);
  node.chain.advance(5);
  t = await startTestService({
    networks: [{
      id: 10, slug: 'solana', name: 'Solana', family: 'solana',
      // USDT is listed on the network; the environment lists only USDC, in its place.
      tokens: [{ symbol: 'USDT', address: USDT_MINT, decimals: 6 }],
      environments: [{ id: 17, slug: 'mainnet', upstreams: [node.url], confirmations: 1, tokens: [{ symbol: 'USDC', address: USDC_MINT, decimals: 6 }] }],
    }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
    gateway: { probe_interval_ms: 60_000 },
  }, { watch: { pollMs: 50 } });
  m = await t.merchant({ plan: 'pro' });
  await m.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: true, events: { block_networks: ['solana'] } }));
  for (const s of [A, B]) {
    const r = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'solana', address: s.address }));
    expect(r.body.created, JSON.stringify(r.body)).toBe(true);
  }
}, 60_000);

afterAll(async () => {
  node?.chain.stopAuto();
  await t?.stop();
  await Promise.all([node?.stop(), rx?.close()]);
});

describe('Solana addresses', () => {
  it('base58 ed25519 keys; a token account or garbage is refused naming the field', async () => {
    const list = (await m.call('GET', '/v1/address-watch/addresses?network_slug=solana')).body.addresses.map((w: Ev) => w.address);
    expect(list.sort()).toEqual([A.address, B.address].sort());
    // Not `${A.address}x`: a 43-character key (about one in sixteen) with one more base58 digit is often still 32 bytes, a valid key.
    for (const bad of ['0x52908400098527886E0F7030069857D2E4169EE7', `${A.address.slice(0, -1)}0`, 'z'.repeat(44)]) {
      const r = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'solana', address: bad }));
      expect(r.status, bad).toBe(400);
      expect(r.body.error).toMatch(/^address: .*Solana address/);
    }
  });
});

describe('Solana scanning', () => {
  it('SOL in and out, USDC in (into a new associated token account) and out, over skipped slots; unlisted mints give nothing', async () => {
    const s1 = await sol(X, A.address, 1_500_000_000n);
    const s2 = await usdc(X, B.address, 25_000_000n);
    const s3 = await usdc(X, B.address, 1n, USDT_MINT); // USDT: listed on the network, not on this environment
    const slot1 = land({ skip: 3 });
    const s4 = await sol(A, X.address, 400_000_000n);
    const s5 = await usdc(B, X.address, 5_000_000n);
    const slot2 = land({ skip: 2 });
    const expected = [
      [s1, A.address, 'payment', 'in', null, '1500000000'],
      [s2, B.address, 'payment', 'in', USDC_MINT, '25000000'],
      [s4, A.address, 'payout', 'out', null, '400000000'],
      [s5, B.address, 'payout', 'out', USDC_MINT, '5000000'],
    ];
    await until('the four transfers in the feed', async () => (await feed()).length >= 4);
    const events = await feed();
    expect(events.map(row)).toEqual(expected);
    expect(events.map((e) => e.block_height)).toEqual([slot1, slot1, slot2, slot2]);
    expect(events.find((e) => e.tx_hash === s2)).toMatchObject({ network: 'solana', from: X.address, to: B.address, log_index: null, block_hash: node.chain.block(slot1)!.blockhash });
    expect(events.find((e) => e.tx_hash === s1)).toMatchObject({ from: X.address, to: A.address });
    expect(events.some((e) => e.tx_hash === s3)).toBe(false);
    // One block event per produced slot, none for a skipped one.
    const blocks = () => rx.received.map((r) => JSON.parse(r.body) as Ev).filter((b) => b.type === 'block');
    await rx.waitFor(() => blocks().some((b) => b.block_height === slot2));
    const heights = blocks().map((b) => b.block_height as number);
    expect(heights).toContain(slot1);
    for (const skipped of [slot1 + 1, slot1 + 2, slot1 + 3, slot2 + 1, slot2 + 2]) expect(heights).not.toContain(skipped);
    expect(heights).toContain(slot1 + 4);
    expect(node.chain.block(slot1 + 4)!.parentSlot).toBe(slot1);
    expect(blocks().find((b) => b.block_height === slot1)).toMatchObject({ network: 'solana', tx_count: 3, transactions: expect.arrayContaining([s1, s2, s3]) });
  });

  it('a confirmed slot the cluster drops takes its event off; the transfer sent again lands in a later slot', async () => {
    const dropped = await sol(X, A.address, 7_000n);
    const slot = land();
    await until('the transfer seen at confirmed', async () => (await feed()).some((e) => e.tx_hash === dropped));
    node.chain.dropSlots(slot);
    const again = await sol(X, A.address, 8_000n);
    const later = land();
    expect(later).toBeGreaterThan(slot);
    await until('the new slot recorded', async () => (await feed()).some((e) => e.tx_hash === again));
    const events = await feed();
    expect(events.some((e) => e.tx_hash === dropped)).toBe(false);
    expect(events.find((e) => e.tx_hash === again)).toMatchObject({ block_height: later, amount: '8000', direction: 'in' });
    const rows = await t.store.db.selectFrom('watch_events').select(['block_height', 'removed']).where('type', '!=', 'block').where('body', 'like', `%${dropped}%`).execute();
    expect(rows.map((r) => [Number(r.block_height), r.removed])).toEqual([[slot, 1]]);
  });

  it('finality at finalized: the adapter reports the node\'s finalized slot, 32 below the open slot; the scanner follows confirmed', async () => {
    node.chain.advance(40);
    const chain = chainOf('solana').scanner([node.url], 5000);
    try {
      expect(await chain.finalized!()).toBe(node.chain.finalizedSlot);
      expect(await chain.head()).toBe(node.chain.confirmedSlot);
      expect(node.chain.confirmedSlot - node.chain.finalizedSlot).toBeGreaterThanOrEqual(30);
      // A skipped slot is told apart from one not there yet: -32004 until finalized, then -32007.
      const skipped = [...Array(node.chain.finalizedSlot).keys()].find((n) => n > 0 && !node.chain.block(n))!;
      expect(skipped).toBeDefined();
      const none = { lookup: () => undefined, size: () => 0 };
      expect(await chain.block(skipped, none, 17)).toBe(SKIPPED);
      expect(await chain.blockHash(skipped)).toBe(SKIPPED);
      expect(await chain.block(node.chain.processedSlot + 5, none, 17)).toBeUndefined();
      expect(await chain.produced!(skipped - 1, skipped + 1)).not.toContain(skipped);
      // A finalized slot can no longer be dropped: its events stay.
      expect(() => node.chain.dropSlots(node.chain.finalizedSlot)).toThrow(/finalized/);
    } finally {
      await chain.close();
    }
    const sent = await sol(X, A.address, 9_000n);
    const slot = land();
    await until('seen at confirmed, long before finalized', async () => (await feed()).some((e) => e.tx_hash === sent));
    expect(node.chain.finalizedSlot).toBeLessThan(slot);
  });
});

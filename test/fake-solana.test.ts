import {
  type Address, type Instruction, type Signature, type KeyPairSigner, type Rpc, type RpcSubscriptions, type SolanaRpcApi, type SolanaRpcSubscriptionsApi,
  appendTransactionMessageInstructions, createSolanaRpc, createSolanaRpcSubscriptions, createTransactionMessage,
  generateKeyPairSigner, getBase64EncodedWireTransaction, getSignatureFromTransaction, isSolanaError, lamports, pipe,
  sendAndConfirmTransactionFactory, setTransactionMessageFeePayerSigner, setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstruction, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { type TransferRequestURL, createTransfer, encodeURL, findReference, FindReferenceError, parseURL, validateTransfer } from '@solana/pay';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeSolanaNode, USDC_MINT, startFakeSolana, startFakeSolanaNode } from './helpers/fake-solana.js';

let node: FakeSolanaNode;
let rpc: Rpc<SolanaRpcApi>;
let subs: RpcSubscriptions<SolanaRpcSubscriptionsApi>;
const others: FakeSolanaNode[] = [];

beforeEach(async () => {
  node = await startFakeSolana();
  rpc = createSolanaRpc(node.url);
  subs = createSolanaRpcSubscriptions(node.wsUrl);
});

afterEach(async () => {
  node.chain.stopAuto();
  await node.stop();
  for (const o of others.splice(0)) await o.stop();
});

async function funded(sol = 10n): Promise<KeyPairSigner> {
  const s = await generateKeyPairSigner();
  node.chain.fundSol(s.address, sol * 1_000_000_000n);
  return s;
}

async function signed(payer: KeyPairSigner, ixs: Instruction[], commitment: 'processed' | 'confirmed' | 'finalized' = 'confirmed') {
  const { value: bh } = await rpc.getLatestBlockhash({ commitment }).send();
  const msg = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(bh, m),
    (m) => appendTransactionMessageInstructions(ixs, m),
  );
  return signTransactionMessageWithSigners(msg);
}

async function send(payer: KeyPairSigner, ixs: Instruction[], opts: { skipPreflight?: boolean } = {}): Promise<Signature> {
  const tx = await signed(payer, ixs);
  return rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64', skipPreflight: opts.skipPreflight ?? false }).send();
}

describe('fake Solana node: JSON-RPC through @solana/kit', () => {
  it('answers the node methods with real shapes', async () => {
    expect(await rpc.getHealth().send()).toBe('ok');
    expect(await rpc.getVersion().send()).toMatchObject({ 'solana-core': expect.any(String), 'feature-set': expect.any(Number) });
    expect(await rpc.getGenesisHash().send()).toBe('5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d');
    node.chain.advance(40);
    const [p, c, f] = await Promise.all((['processed', 'confirmed', 'finalized'] as const).map((commitment) => rpc.getSlot({ commitment }).send()));
    expect([p, c, f]).toEqual([41n, 40n, 9n]);
    const bh = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
    expect(bh.context.slot).toBe(40n);
    expect(bh.value.lastValidBlockHeight).toBe(40n + 150n);
    expect((await rpc.isBlockhashValid(bh.value.blockhash, { commitment: 'processed' }).send()).value).toBe(true);
    const epoch = await rpc.getEpochInfo().send();
    expect(epoch).toMatchObject({ absoluteSlot: 40n, epoch: 0n, slotsInEpoch: 432000n });
    expect(await rpc.getBlockHeight({ commitment: 'confirmed' }).send()).toBe(40n);
    expect(await rpc.getMinimumBalanceForRentExemption(165n).send()).toBe(2039280n);
    const carol = await generateKeyPairSigner();
    const drop = await rpc.requestAirdrop(carol.address, lamports(2_000_000_000n)).send();
    node.chain.advance(1);
    expect((await rpc.getBalance(carol.address, { commitment: 'confirmed' }).send()).value).toBe(2_000_000_000n);
    expect((await rpc.getSignaturesForAddress(carol.address, { commitment: 'confirmed' }).send())[0]?.signature).toBe(drop);
    const raw = await fetch(node.url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_blockNumber', params: [] }) });
    expect(await raw.json()).toEqual({ jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 7 });
  });

  it('moves SOL by a signed transfer, confirmed by kit over HTTP and WebSocket', async () => {
    const alice = await funded();
    const bob = await generateKeyPairSigner();
    node.chain.startAuto(20);
    const sendAndConfirm = sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions: subs } as never);
    const tx = await signed(alice, [getTransferSolInstruction({ source: alice, destination: bob.address, amount: lamports(1_500_000_000n) })]);
    await sendAndConfirm(tx as never, { commitment: 'confirmed' });
    const sig = getSignatureFromTransaction(tx);
    expect((await rpc.getBalance(bob.address, { commitment: 'confirmed' }).send()).value).toBe(1_500_000_000n);
    expect((await rpc.getBalance(alice.address, { commitment: 'confirmed' }).send()).value).toBe(10_000_000_000n - 1_500_000_000n - 5000n);
    const got = await rpc.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
    expect(got?.meta?.fee).toBe(5000n);
    expect(got?.meta?.err).toBeNull();
    expect(got?.version).toBe(0n);
    const parsed = await rpc.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'jsonParsed' }).send();
    expect(parsed?.transaction.message.instructions[0]).toMatchObject({
      program: 'system', parsed: { type: 'transfer', info: { source: alice.address, destination: bob.address, lamports: 1_500_000_000n } },
    });
    const sigs = await rpc.getSignaturesForAddress(bob.address, { commitment: 'confirmed' }).send();
    expect(sigs.map((s) => s.signature)).toEqual([sig]);
    const statuses = await rpc.getSignatureStatuses([sig]).send();
    expect(statuses.value[0]?.confirmationStatus).toMatch(/confirmed|finalized/);
  });
});

async function usdcSetup() {
  node.chain.createMint(USDC_MINT, { decimals: 6 });
  const alice = await funded();
  await node.chain.mintTo(alice.address, USDC_MINT, 100_000_000n);
  const [aliceAta] = await findAssociatedTokenPda({ owner: alice.address, mint: USDC_MINT as Address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  return { alice, aliceAta };
}

function rpcError(e: unknown): { code: number; message: string } {
  if (!isSolanaError(e)) throw e;
  const ctx = e.context as { __code?: number; __serverMessage?: string; code?: number };
  return { code: Number(ctx.__code ?? ctx.code), message: String(ctx.__serverMessage ?? e.message) };
}

async function raw(method: string, params: unknown[] = [], url = node.url): Promise<{ result?: unknown; error?: { code: number; message: string; data?: unknown } }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return await res.json() as { result?: unknown; error?: { code: number; message: string } };
}

describe('fake Solana node: SPL tokens through the real Token program', () => {
  it('creates an associated token account and moves USDC with transferChecked', async () => {
    const { alice, aliceAta } = await usdcSetup();
    const bob = await generateKeyPairSigner();
    const [bobAta] = await findAssociatedTokenPda({ owner: bob.address, mint: USDC_MINT as Address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const sig = await send(alice, [
      getCreateAssociatedTokenIdempotentInstruction({ payer: alice, owner: bob.address, mint: USDC_MINT as Address, ata: bobAta }),
      getTransferCheckedInstruction({ source: aliceAta, mint: USDC_MINT as Address, destination: bobAta, authority: alice, amount: 25_000_000n, decimals: 6 }),
    ]);
    node.chain.advance(1);
    expect((await rpc.getTokenAccountBalance(bobAta, { commitment: 'confirmed' }).send()).value).toEqual({ amount: '25000000', decimals: 6, uiAmount: 25, uiAmountString: '25' });
    expect((await rpc.getTokenAccountBalance(aliceAta, { commitment: 'confirmed' }).send()).value.uiAmountString).toBe('75');
    const owned = await rpc.getTokenAccountsByOwner(bob.address, { mint: USDC_MINT as Address }, { encoding: 'jsonParsed', commitment: 'confirmed' }).send();
    expect(owned.value).toHaveLength(1);
    expect(owned.value[0]!.pubkey).toBe(bobAta);
    expect(owned.value[0]!.account.data).toMatchObject({ program: 'spl-token', parsed: { type: 'account', info: { mint: USDC_MINT, owner: bob.address, state: 'initialized', tokenAmount: { amount: '25000000' } } } });
    const tx = await rpc.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'jsonParsed' }).send();
    expect(tx?.meta?.err).toBeNull();
    expect(tx?.transaction.message.instructions[1]).toMatchObject({
      program: 'spl-token', parsed: { type: 'transferChecked', info: { source: aliceAta, destination: bobAta, mint: USDC_MINT, authority: alice.address, tokenAmount: { amount: '25000000', decimals: 6n } } },
    });
    // The ATA program's inner calls (createAccount, initializeAccount3) come from the runtime's own trace.
    expect(tx?.meta?.innerInstructions?.[0]?.instructions.map((i) => ('parsed' in i ? (i.parsed as { type: string }).type : null))).toContain('initializeAccount3');
    const post = tx?.meta?.postTokenBalances?.find((b) => b.owner === bob.address);
    expect(post?.uiTokenAmount.amount).toBe('25000000');
    expect(tx?.meta?.preTokenBalances?.find((b) => b.owner === bob.address)).toBeUndefined();
    const mint = await rpc.getAccountInfo(USDC_MINT as Address, { encoding: 'jsonParsed' }).send();
    expect(mint.value?.data).toMatchObject({ parsed: { type: 'mint', info: { decimals: 6, supply: '100000000', isInitialized: true } } });
    expect((await rpc.getSignaturesForAddress(bobAta, { commitment: 'confirmed' }).send()).map((s) => s.signature)).toEqual([sig]);
  });

  it('keeps a failing transaction in its block with meta.err and the fee taken; preflight refuses it', async () => {
    const alice = await funded(1n);
    const bob = await generateKeyPairSigner();
    const tooMuch = [getTransferSolInstruction({ source: alice, destination: bob.address, amount: lamports(5_000_000_000n) })];
    const refused = await send(alice, tooMuch).catch((e: unknown) => e);
    expect(rpcError(refused).code).toBe(-32002);
    const sig = await send(alice, tooMuch, { skipPreflight: true });
    node.chain.advance(1);
    const tx = await rpc.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
    expect(tx?.meta?.err).toEqual({ InstructionError: [0n, { Custom: 1n }] });
    expect(tx?.meta?.status).toEqual({ Err: { InstructionError: [0n, { Custom: 1n }] } });
    expect((await rpc.getBalance(alice.address, { commitment: 'confirmed' }).send()).value).toBe(1_000_000_000n - 5000n);
    const [info] = await rpc.getSignaturesForAddress(alice.address, { commitment: 'confirmed' }).send();
    expect(info?.err).toEqual({ InstructionError: [0n, { Custom: 1n }] });
    // A blockhash no block made, and a forged signature, never land.
    const ix = [getTransferSolInstruction({ source: alice, destination: bob.address, amount: lamports(1n) })];
    const unknownHash = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(alice, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: bob.address as never, lastValidBlockHeight: 999n }, m),
      (m) => appendTransactionMessageInstructions(ix, m),
    );
    const stale = await raw('sendTransaction', [getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(unknownHash)), { encoding: 'base64' }]);
    expect(stale.error).toMatchObject({ code: -32002, message: 'Transaction simulation failed: Blockhash not found', data: { err: 'BlockhashNotFound' } });
    const forged = await signed(alice, ix);
    const sigBytes = Object.values(forged.signatures)[0] as Uint8Array;
    sigBytes[3] = sigBytes[3]! ^ 1;
    const bad = await raw('sendTransaction', [getBase64EncodedWireTransaction(forged), { encoding: 'base64' }]);
    expect(bad.error).toEqual({ code: -32003, message: 'Transaction signature verification failure' });
    expect((await raw('sendTransaction', [getBase64EncodedWireTransaction(forged), { encoding: 'base64', skipPreflight: true }])).result).toBe(getSignatureFromTransaction(forged));
    node.chain.advance(1);
    expect(await rpc.getTransaction(getSignatureFromTransaction(forged), { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send()).toBeNull();
  });
});

describe('fake Solana node: a Solana Pay checkout seen by @solana/pay', () => {
  it('finds the transfer by its reference and validates recipient, mint and amount', async () => {
    const { alice } = await usdcSetup();
    const merchant = await generateKeyPairSigner();
    await node.chain.createAssociatedTokenAccount(merchant.address, USDC_MINT);
    const reference = (await generateKeyPairSigner()).address;
    await expect(findReference(rpc, reference, { commitment: 'confirmed' })).rejects.toBeInstanceOf(FindReferenceError);
    const url = encodeURL({ recipient: merchant.address, amount: 12.5, splToken: USDC_MINT as Address, reference, label: 'Shop', message: 'Order 42' });
    const fields = parseURL(url) as TransferRequestURL;
    expect(fields).toMatchObject({ recipient: merchant.address, amount: 12.5, splToken: USDC_MINT, reference: [reference] });
    const ixs = await createTransfer(rpc, alice, { recipient: fields.recipient, amount: fields.amount!, splToken: fields.splToken!, reference: fields.reference! });
    const sig = await send(alice, ixs);
    // processed only: not yet visible to a confirmed search
    await expect(findReference(rpc, reference, { commitment: 'confirmed' })).rejects.toBeInstanceOf(FindReferenceError);
    node.chain.advance(1);
    const found = await findReference(rpc, reference, { commitment: 'confirmed' });
    expect(found.signature).toBe(sig);
    expect(found.confirmationStatus).toBe('confirmed');
    await validateTransfer(rpc, sig, { recipient: merchant.address, amount: 12.5, splToken: USDC_MINT as Address, reference });
    await expect(validateTransfer(rpc, sig, { recipient: merchant.address, amount: 12.6, splToken: USDC_MINT as Address, reference })).rejects.toThrow('amount not transferred');
    await expect(validateTransfer(rpc, sig, { recipient: alice.address, amount: 12.5, splToken: USDC_MINT as Address, reference })).rejects.toThrow('invalid transfer');
    // finalized only once 32 slots deeper
    await expect(findReference(rpc, reference, { commitment: 'finalized' })).rejects.toBeInstanceOf(FindReferenceError);
    node.chain.advance(32);
    expect((await findReference(rpc, reference, { commitment: 'finalized' })).confirmationStatus).toBe('finalized');
    await validateTransfer(rpc, sig, { recipient: merchant.address, amount: 12.5, splToken: USDC_MINT as Address, reference }, { commitment: 'finalized' });
  });

  it('validates a SOL transfer with a memo', async () => {
    const alice = await funded();
    const merchant = await generateKeyPairSigner();
    const reference = (await generateKeyPairSigner()).address;
    const fields = parseURL(encodeURL({ recipient: merchant.address, amount: 0.25, reference, memo: 'order-7' })) as TransferRequestURL;
    const sig = await send(alice, await createTransfer(rpc, alice, { recipient: fields.recipient, amount: fields.amount!, reference: fields.reference!, memo: fields.memo! }));
    node.chain.advance(1);
    expect((await findReference(rpc, reference, { commitment: 'confirmed' })).memo).toBe('[7] order-7');
    await validateTransfer(rpc, sig, { recipient: merchant.address, amount: 0.25, reference, memo: 'order-7' });
    await expect(validateTransfer(rpc, sig, { recipient: merchant.address, amount: 0.25, reference, memo: 'order-8' })).rejects.toThrow('invalid memo');
  });
});

describe('fake Solana node: slots, skipped slots, commitment and forks', () => {
  it('runs its own clock, skipping a slot now and then', async () => {
    node.chain.startAuto(5, { skipEvery: 3 });
    await expect.poll(() => node.chain.processedSlot, { timeout: 5000 }).toBeGreaterThan(12);
    node.chain.stopAuto();
    const slots = node.chain.blocks.map((b) => b.slot);
    expect(slots.slice(0, 8)).toEqual([0, 1, 2, 3, 5, 6, 7, 9]);
    const blocks = await rpc.getBlocks(0n, 12n, { commitment: 'confirmed' }).send();
    expect(blocks.slice(0, 6)).toEqual([0n, 1n, 2n, 3n, 5n, 6n]);
  });

  it('leaves skipped slots without a block, as agave answers for them', async () => {
    node.chain.setCommitmentDepths({ finalized: 4 });
    node.chain.advance(3); // blocks 1..3, open slot 4
    const b4 = node.chain.produceSlot({ skip: 2 }); // block 4; slots 5, 6 skipped; open 7
    node.chain.produceSlot(); // block 7, open 8
    const b7 = await rpc.getBlock(7n, { commitment: 'confirmed', transactionDetails: 'full', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
    expect(b7).toMatchObject({ parentSlot: 4n, previousBlockhash: b4.blockhash, blockHeight: 5n });
    const notYet = await raw('getBlock', [5, { commitment: 'confirmed' }]);
    expect(notYet.error).toEqual({ code: -32004, message: 'Block not available for slot 5' });
    expect((await raw('getBlock', [8, { commitment: 'confirmed' }])).error?.code).toBe(-32004); // the open bank
    expect((await raw('getBlock', [7, { commitment: 'processed' }])).error).toEqual({ code: -32602, message: 'Method does not support commitment below `confirmed`' });
    node.chain.advance(6);
    expect(await rpc.getSlot({ commitment: 'finalized' }).send()).toBeGreaterThanOrEqual(7n);
    expect((await raw('getBlock', [5])).error).toEqual({ code: -32007, message: 'Slot 5 was skipped, or missing due to ledger jump to recent snapshot' });
    expect((await raw('getBlockTime', [6])).error?.code).toBe(-32007);
    expect(await rpc.getBlocks(2n, 8n).send()).toEqual([2n, 3n, 4n, 7n, 8n]);
    expect(await rpc.getBlocksWithLimit(3n, 3).send()).toEqual([3n, 4n, 7n]);
    expect(await rpc.getBlockTime(4n).send()).toBe(BigInt(node.chain.genesisUnixTime + Math.floor(4 / 2.5)));
    const sigsOnly = await rpc.getBlock(7n, { transactionDetails: 'signatures', rewards: false }).send();
    expect(sigsOnly).toEqual({ blockHeight: 5n, blockTime: expect.any(BigInt), blockhash: expect.any(String), parentSlot: 4n, previousBlockhash: b4.blockhash, signatures: [] });
    expect(Object.keys((await rpc.getBlock(7n, { transactionDetails: 'none' }).send())!).sort()).toEqual(['blockHeight', 'blockTime', 'blockhash', 'parentSlot', 'previousBlockhash', 'rewards']);
    // A node whose ledger starts at slot 6: older blocks are cleaned up, or in long-term storage.
    const pruned = await startFakeSolanaNode(node.chain, { firstAvailableSlot: 6 });
    const archive = await startFakeSolanaNode(node.chain, { firstAvailableSlot: 6, longTermStorage: true });
    others.push(pruned, archive);
    expect((await raw('getBlock', [4], pruned.url)).error).toEqual({ code: -32001, message: 'Block 4 cleaned up, does not exist on node. First available block: 6' });
    expect((await raw('getBlock', [5], archive.url)).error).toEqual({ code: -32009, message: 'Slot 5 was skipped, or missing in long-term storage' });
    expect((await raw('getBlock', [4], archive.url)).result).toMatchObject({ parentSlot: 3 });
  });

  it('answers each commitment from its own slot', async () => {
    node.chain.setCommitmentDepths({ confirmed: 2, finalized: 5 });
    const alice = await funded();
    const bob = await generateKeyPairSigner();
    const sig = await send(alice, [getTransferSolInstruction({ source: alice, destination: bob.address, amount: lamports(1_000_000n) })]);
    const balances = async () => Promise.all((['processed', 'confirmed', 'finalized'] as const).map(async (commitment) => (await rpc.getBalance(bob.address, { commitment }).send()).value));
    const status = async () => (await rpc.getSignatureStatuses([sig]).send()).value[0];
    expect(await balances()).toEqual([1_000_000n, 0n, 0n]);
    expect(await status()).toMatchObject({ confirmationStatus: 'processed', confirmations: 0n, err: null });
    expect(await rpc.getTransaction(sig, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send()).toBeNull();
    node.chain.advance(2);
    expect(await balances()).toEqual([1_000_000n, 1_000_000n, 0n]);
    expect(await status()).toMatchObject({ confirmationStatus: 'confirmed', confirmations: 1n });
    expect(await rpc.getSignaturesForAddress(bob.address, { commitment: 'finalized' }).send()).toEqual([]);
    expect((await rpc.getSignaturesForAddress(bob.address, { commitment: 'confirmed' }).send())[0]).toMatchObject({ signature: sig, confirmationStatus: 'confirmed' });
    node.chain.advance(3);
    expect(await balances()).toEqual([1_000_000n, 1_000_000n, 1_000_000n]);
    expect(await status()).toMatchObject({ confirmationStatus: 'finalized', confirmations: null });
    expect((await rpc.getTransaction(sig, { commitment: 'finalized', encoding: 'json', maxSupportedTransactionVersion: 0 }).send())?.slot).toBe(1n);
    // getTransaction of a v0 transaction without maxSupportedTransactionVersion: -32015, as agave.
    expect((await raw('getTransaction', [sig, { commitment: 'confirmed' }])).error?.code).toBe(-32015);
  });

  it('pages getSignaturesForAddress newest first with before, until and limit', async () => {
    const alice = await funded();
    const bob = await generateKeyPairSigner();
    const sigs: string[] = [];
    for (let i = 0; i < 5; i++) {
      sigs.push(await send(alice, [getTransferSolInstruction({ source: alice, destination: bob.address, amount: lamports(1_000_000n + BigInt(i)) })]));
      if (i % 2 === 1) node.chain.produceSlot();
    }
    node.chain.advance(1);
    const all = (await rpc.getSignaturesForAddress(bob.address, { commitment: 'confirmed' }).send()).map((s) => s.signature);
    expect(all).toEqual([...sigs].reverse());
    const page = await rpc.getSignaturesForAddress(bob.address, { commitment: 'confirmed', limit: 2, before: sigs[3] as Signature }).send();
    expect(page.map((s) => s.signature)).toEqual([sigs[2], sigs[1]]);
    const until = await rpc.getSignaturesForAddress(bob.address, { commitment: 'confirmed', until: sigs[1] as Signature }).send();
    expect(until.map((s) => s.signature)).toEqual([sigs[4], sigs[3], sigs[2]]);
    expect((await raw('getSignaturesForAddress', [bob.address, { limit: 1001 }])).error).toEqual({ code: -32602, message: 'Invalid limit; max 1000' });
  });

  it('drops a confirmed slot before it finalizes: its transaction leaves the ledger and balances go back', async () => {
    node.chain.setCommitmentDepths({ confirmed: 1, finalized: 10 });
    const alice = await funded();
    const bob = await generateKeyPairSigner();
    node.chain.advance(2);
    const tx = await signed(alice, [getTransferSolInstruction({ source: alice, destination: bob.address, amount: lamports(2_000_000n) })]);
    const sig = await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
    const landed = node.chain.produceSlot();
    node.chain.advance(1);
    expect((await rpc.getSignaturesForAddress(bob.address, { commitment: 'confirmed' }).send()).map((s) => s.signature)).toEqual([sig]);
    expect((await rpc.getBalance(bob.address, { commitment: 'confirmed' }).send()).value).toBe(2_000_000n);
    expect(await rpc.getBlock(BigInt(landed.slot), { commitment: 'confirmed', transactionDetails: 'signatures' }).send()).toMatchObject({ signatures: [sig] });

    expect(node.chain.dropSlots(landed.slot)).toEqual([sig]);
    node.chain.advance(1);
    expect(await rpc.getSignaturesForAddress(bob.address, { commitment: 'confirmed' }).send()).toEqual([]);
    expect(await rpc.getTransaction(sig, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send()).toBeNull();
    expect((await rpc.getSignatureStatuses([sig]).send()).value).toEqual([null]);
    expect((await rpc.getBalance(bob.address, { commitment: 'processed' }).send()).value).toBe(0n);
    expect((await rpc.getBalance(alice.address, { commitment: 'processed' }).send()).value).toBe(10_000_000_000n);
    expect((await raw('getBlock', [landed.slot, { commitment: 'confirmed' }])).error?.code).toBe(-32004);
    const next = await rpc.getBlock(await rpc.getSlot({ commitment: 'confirmed' }).send(), { commitment: 'confirmed', transactionDetails: 'none' }).send();
    expect(next?.parentSlot).toBe(BigInt(landed.parentSlot));
    // The same signed transaction can land again on the new fork (its blockhash is still recent).
    expect(await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send()).toBe(sig);
    node.chain.advance(12);
    expect((await rpc.getBlock(BigInt(landed.slot)).send().catch((e: unknown) => rpcError(e)))).toMatchObject({ code: -32007 });
    expect((await rpc.getSignaturesForAddress(bob.address).send())[0]).toMatchObject({ signature: sig, confirmationStatus: 'finalized' });
    expect(() => node.chain.dropSlots(landed.slot)).toThrow(/finalized/);
  });
});

async function first<T>(it: AsyncIterable<T>, want: (x: T) => boolean = () => true): Promise<T> {
  for await (const x of it) if (want(x)) return x;
  throw new Error('subscription ended');
}

describe('fake Solana node: PubSub through kit subscriptions', () => {
  it('notifies accounts, signatures, logs, programs and slots at the requested commitment', async () => {
    node.chain.setCommitmentDepths({ confirmed: 1, finalized: 3 });
    const { alice, aliceAta } = await usdcSetup();
    const bob = await generateKeyPairSigner();
    const [bobAta] = await findAssociatedTokenPda({ owner: bob.address, mint: USDC_MINT as Address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const abort = new AbortController();
    const signal = abort.signal;
    const slots = await subs.slotNotifications().subscribe({ abortSignal: signal });
    const processedAlice = await subs.accountNotifications(alice.address, { commitment: 'processed', encoding: 'base64' }).subscribe({ abortSignal: signal });
    const confirmedBobAta = await subs.accountNotifications(bobAta, { commitment: 'confirmed', encoding: 'jsonParsed' }).subscribe({ abortSignal: signal });
    const finalizedLogs = await subs.logsNotifications({ mentions: [bob.address] }, { commitment: 'finalized' }).subscribe({ abortSignal: signal });
    const tokenAccounts = await subs.programNotifications(TOKEN_PROGRAM_ADDRESS, {
      commitment: 'confirmed', encoding: 'base64', filters: [{ dataSize: 165n }, { memcmp: { offset: 32n, bytes: bob.address as never, encoding: 'base58' } }],
    }).subscribe({ abortSignal: signal });
    expect(node.pubsub.subscriptionCount).toBe(5);
    // kit's iterators see only what arrives after iteration starts: start them before the chain moves.
    const nextSlot = first(slots);
    const aliceChange = first(processedAlice);
    const bobAtaChange = first(confirmedBobAta);
    const bobLogs = first(finalizedLogs);
    const bobTokenAccount = first(tokenAccounts);

    const tx = await signed(alice, [
      getCreateAssociatedTokenIdempotentInstruction({ payer: alice, owner: bob.address, mint: USDC_MINT as Address, ata: bobAta }),
      getTransferCheckedInstruction({ source: aliceAta, mint: USDC_MINT as Address, destination: bobAta, authority: alice, amount: 3_000_000n, decimals: 6 }),
    ]);
    const sig = getSignatureFromTransaction(tx);
    const confirmedSig = first(await subs.signatureNotifications(sig, { commitment: 'confirmed' }).subscribe({ abortSignal: signal }));
    await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
    const a = await aliceChange;
    expect(a.context.slot).toBe(1n);
    expect(a.value.lamports).toBeLessThan(10_000_000_000n);

    node.chain.produceSlot();
    expect(await nextSlot).toEqual({ parent: 1n, root: 0n, slot: 2n });
    expect((await confirmedSig).value).toEqual({ err: null });
    const b = await bobAtaChange;
    expect(b.value.data).toMatchObject({ parsed: { type: 'account', info: { owner: bob.address, tokenAmount: { amount: '3000000' } } } });
    expect((await bobTokenAccount).value.pubkey).toBe(bobAta);

    node.chain.advance(3);
    const logs = await bobLogs;
    expect(logs.value).toMatchObject({ signature: sig, err: null });
    expect(logs.value.logs.some((l) => l.includes('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA invoke'))).toBe(true);
    expect(logs.context.slot).toBe(1n);

    abort.abort();
    await expect.poll(() => node.pubsub.subscriptionCount).toBe(0);
    expect(node.seen.filter((c) => c.transport === 'ws').map((c) => c.method)).toEqual(expect.arrayContaining([
      'slotSubscribe', 'accountSubscribe', 'logsSubscribe', 'programSubscribe', 'signatureSubscribe', 'slotUnsubscribe', 'accountUnsubscribe', 'logsUnsubscribe', 'programUnsubscribe',
    ]));
  });

  it('answers subscribe and unsubscribe with the real frames', async () => {
    const { WebSocket } = await import('ws');
    const ws = new WebSocket(node.wsUrl);
    await new Promise((r) => ws.once('open', r));
    const frames: unknown[] = [];
    ws.on('message', (m) => frames.push(JSON.parse(String(m))));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' }));
    await expect.poll(() => frames.length).toBe(1);
    const id = (frames[0] as { result: number }).result;
    expect(frames[0]).toEqual({ jsonrpc: '2.0', result: id, id: 1 });
    node.chain.produceSlot();
    await expect.poll(() => frames.length).toBe(2);
    expect(frames[1]).toEqual({ jsonrpc: '2.0', method: 'slotNotification', params: { result: { parent: 1, root: 0, slot: 2 }, subscription: id } });
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'slotUnsubscribe', params: [id] }));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'slotUnsubscribe', params: [id] }));
    await expect.poll(() => frames.length).toBe(4);
    expect(frames.slice(2)).toEqual([
      { jsonrpc: '2.0', result: true, id: 2 },
      { jsonrpc: '2.0', error: { code: -32602, message: 'Invalid subscription id.' }, id: 3 },
    ]);
    ws.close();
  });
});

describe('fake Solana node: faults for failover', () => {
  it('lags, turns unhealthy, goes down and comes back on the same port', async () => {
    node.chain.advance(300);
    const lagging = await startFakeSolanaNode(node.chain, { lagSlots: 200 });
    others.push(lagging);
    const slow = createSolanaRpc(lagging.url);
    expect(await slow.getSlot({ commitment: 'processed' }).send()).toBe(301n - 200n);
    expect((await raw('getHealth', [], lagging.url)).error).toEqual({ code: -32005, message: 'Node is behind by 200 slots', data: { numSlotsBehind: 200 } });
    expect(await (await fetch(`${lagging.url}/health`)).text()).toBe('behind');
    lagging.lagSlots = 5;
    expect(await slow.getHealth().send()).toBe('ok');

    node.unhealthy = true;
    expect((await raw('getHealth')).error).toEqual({ code: -32005, message: 'Node is unhealthy', data: { numSlotsBehind: null } });
    expect((await raw('getSlot', [{ commitment: 'processed' }])).result).toBe(301);
    node.unhealthy = 'all';
    expect((await raw('getSlot')).error?.code).toBe(-32005);
    node.unhealthy = false;

    node.behaviour = 'fail503';
    expect((await fetch(node.url, { method: 'POST', body: '{}' })).status).toBe(503);
    node.behaviour = 'reset';
    await expect(fetch(node.url, { method: 'POST', body: '{}' })).rejects.toThrow();
    node.behaviour = 'ok';

    const url = node.url;
    await node.down();
    await expect(fetch(url, { method: 'POST', body: '{}' })).rejects.toThrow();
    await node.up();
    expect(node.url).toBe(url);
    expect(await rpc.getHealth().send()).toBe('ok');
    expect(node.seen.filter((c) => c.method === 'getHealth')).toHaveLength(2);
  });

  it('serves batches and refuses malformed requests as a JSON-RPC 2.0 server', async () => {
    const res = await fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'getSlot' }, { jsonrpc: '2.0', id: 2, method: 'nope' }, { id: 3 },
    ]) });
    expect(await res.json()).toEqual([
      { jsonrpc: '2.0', result: 0, id: 1 },
      { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 2 },
      { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: 3 },
    ]);
    const bad = await fetch(node.url, { method: 'POST', body: '{' });
    expect(await bad.json()).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
    // u64::MAX rentEpoch stays exact on the wire.
    const alice = await funded();
    const text = await (await fetch(node.url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getAccountInfo', params: [alice.address, { encoding: 'base64' }] }) })).text();
    expect(text).toContain('"rentEpoch":18446744073709551615');
    expect(JSON.parse(text).result.context).toEqual({ apiVersion: expect.any(String), slot: 0 });
  });
});

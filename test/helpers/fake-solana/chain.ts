import { createHash } from 'node:crypto';
import type { Address, EncodedAccount, KeyPairSigner } from '@solana/kit';
import { LiteSVM } from 'litesvm';
import { isIncluded, txErrorDisplay, txErrorJson, type TxErrorJson } from './errors.js';
import { readMint, readTokenAccount } from './parse.js';
import * as setup from './setup.js';
import {
  type AccountKey, type CompiledIx, type DecodedTx, ADDRESS_LOOKUP_TABLE_PROGRAM, BLOCKHASH_VALID_BLOCKS, RpcError,
  accountKeys, decodeTransaction, lookupTableAddresses, toBase58, transactionFee, uiTokenAmount,
} from './wire.js';

export type Commitment = 'processed' | 'confirmed' | 'finalized';

export interface TokenBalance {
  accountIndex: number; mint: string; owner: string; programId: string;
  uiTokenAmount: ReturnType<typeof uiTokenAmount>;
}

export interface TxMeta {
  err: TxErrorJson | null;
  fee: bigint;
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
  logMessages: string[];
  innerInstructions: Array<{ index: number; instructions: Array<CompiledIx & { stackHeight: number }> }>;
  computeUnitsConsumed: bigint;
  returnData: { programId: string; data: Uint8Array } | null;
}

/** A transaction the VM executed, in the block of `slot` at position `index`. */
export interface ExecutedTx {
  decoded: DecodedTx;
  keys: AccountKey[];
  meta: TxMeta;
  slot: number;
  index: number;
  /** Each account's state just before this transaction ran (null: it did not exist). */
  pre: Map<string, EncodedAccount | null>;
}

export interface FakeBlock {
  slot: number;
  parentSlot: number;
  blockhash: string;
  previousBlockhash: string;
  blockHeight: number;
  blockTime: number;
  txs: ExecutedTx[];
  /** False while it is the open (processed) bank; true once frozen with its blockhash. */
  frozen: boolean;
}

/** What happened to the ledger, for PubSub. */
export interface ChainListener {
  executed?(tx: ExecutedTx): void;
  slotOpened?(slot: number, parent: number, root: number): void;
  /** `blocks` newly reached `commitment` (oldest first). */
  reached?(commitment: 'confirmed' | 'finalized', blocks: FakeBlock[]): void;
  /** A fork was abandoned: its blocks left the ledger and `touched` accounts went back. */
  dropped?(blocks: FakeBlock[], touched: string[]): void;
}

export interface FakeSolanaChainOptions {
  /** `confirmed` is the newest frozen block at least this many slots below the open slot (default 1). */
  confirmedDepth?: number;
  /** `finalized` likewise, this many slots (default 32); it never moves back. */
  finalizedDepth?: number;
  /** Unix seconds of slot 0 (default: now); slot n's blockTime is this plus 0.4 s a slot. */
  genesisUnixTime?: number;
  /** Slots a block's `blockTime` advances by a second (default 2.5, as mainnet's 400 ms slots). */
  slotsPerSecond?: number;
}

type Entry =
  | { kind: 'inject'; touched: string[]; apply: (vm: LiteSVM) => void }
  | { kind: 'tx'; tx: ExecutedTx };

const SLOTS_PER_EPOCH = 432_000;

export interface SubmitOptions { skipPreflight?: boolean; sigVerify?: boolean }

/**
 * The ledger: a LiteSVM that really runs every transaction, and the synthesised slots around
 * it (see ../fake-solana.ts). Serve it with `startNode()`; several nodes can serve one chain.
 */
export class FakeSolanaChain {
  confirmedDepth: number;
  finalizedDepth: number;
  readonly genesisUnixTime: number;
  readonly slotsPerSecond: number;
  /** Frozen blocks of the current fork, oldest first (slot 0 is genesis). */
  readonly blocks: FakeBlock[] = [];
  #open!: FakeBlock;
  #vm: LiteSVM;
  #journal: Entry[] = [];
  #touches = new Map<string, Entry[]>();
  #sigs = new Map<string, ExecutedTx>();
  #byAddress = new Map<string, ExecutedTx[]>();
  #bySlot = new Map<number, FakeBlock>();
  #finalizedFloor = 0;
  #fork = 0;
  #listeners = new Set<ChainListener>();
  #timer: NodeJS.Timeout | undefined;
  #faucet: KeyPairSigner | undefined;

  constructor(opts: FakeSolanaChainOptions = {}) {
    this.confirmedDepth = opts.confirmedDepth ?? 1;
    this.finalizedDepth = opts.finalizedDepth ?? 32;
    this.genesisUnixTime = opts.genesisUnixTime ?? Math.floor(Date.now() / 1000);
    this.slotsPerSecond = opts.slotsPerSecond ?? 2.5;
    this.#vm = FakeSolanaChain.#newVm();
    const genesis = this.#newBlock(0, 0, this.#hash(-1), -1);
    genesis.frozen = true;
    genesis.blockhash = this.#hash(0);
    this.blocks.push(genesis);
    this.#bySlot.set(0, genesis);
    this.#open = this.#newBlock(1, 0, genesis.blockhash, 1);
  }

  static #newVm(): LiteSVM {
    return new LiteSVM().withBlockhashCheck(false).withTransactionHistory(0n);
  }

  listen(l: ChainListener): () => void {
    this.#listeners.add(l);
    return () => this.#listeners.delete(l);
  }

  // ---- slots and commitment ----

  /** The open bank's slot: what `processed` answers. */
  get processedSlot(): number { return this.#open.slot; }
  get confirmedSlot(): number { return Math.max(this.#newestFrozenAtOrBelow(this.#open.slot - this.confirmedDepth), this.finalizedSlot); }
  get finalizedSlot(): number { return Math.max(this.#finalizedFloor, this.#newestFrozenAtOrBelow(this.#open.slot - this.finalizedDepth)); }

  slotFor(commitment: Commitment | undefined): number {
    if (commitment === 'processed') return this.processedSlot;
    if (commitment === 'confirmed') return this.confirmedSlot;
    return this.finalizedSlot;
  }

  /** The block of this slot on the current fork (the open bank included), if it has one. */
  block(slot: number): FakeBlock | undefined {
    return slot === this.#open.slot ? this.#open : this.#bySlot.get(slot);
  }

  /** The newest frozen block at or below `slot`. */
  frozenAtOrBelow(slot: number): FakeBlock {
    for (let i = this.blocks.length - 1; i >= 0; i--) if (this.blocks[i]!.slot <= slot) return this.blocks[i]!;
    return this.blocks[0]!;
  }

  #newestFrozenAtOrBelow(slot: number): number { return this.frozenAtOrBelow(slot).slot; }

  get openBlock(): FakeBlock { return this.#open; }

  /**
   * Freezes the open bank into a block and opens the next slot; `skip` slots are left without a
   * block in between (their leaders produced nothing). Returns the frozen block.
   */
  produceSlot(opts: { skip?: number } = {}): FakeBlock {
    const before = { confirmed: this.confirmedSlot, finalized: this.finalizedSlot };
    const b = this.#open;
    b.frozen = true;
    b.blockhash = this.#hash(b.slot);
    this.blocks.push(b);
    this.#bySlot.set(b.slot, b);
    const next = b.slot + 1 + Math.max(0, opts.skip ?? 0);
    this.#open = this.#newBlock(next, b.slot, b.blockhash, b.blockHeight + 1);
    this.#vm.warpToSlot(BigInt(next));
    this.#finalizedFloor = this.finalizedSlot;
    for (const l of this.#listeners) l.slotOpened?.(next, b.slot, this.finalizedSlot);
    this.#announce('confirmed', before.confirmed);
    this.#announce('finalized', before.finalized);
    return b;
  }

  /** Produces `n` blocks (each `skip` slots after the previous). */
  advance(n = 1, opts: { skip?: number } = {}): void {
    for (let i = 0; i < n; i++) this.produceSlot(opts);
  }

  /**
   * Produces a block every `ms` until `stopAuto()` (as a validator's clock would); with
   * `skipEvery: n` every n-th block comes after one skipped slot.
   */
  startAuto(ms = 400, opts: { skipEvery?: number } = {}): void {
    this.stopAuto();
    let produced = 0;
    this.#timer = setInterval(() => {
      produced++;
      this.produceSlot({ skip: opts.skipEvery && produced % opts.skipEvery === 0 ? 1 : 0 });
    }, ms);
    this.#timer.unref();
  }

  stopAuto(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Changes how far below the open slot `confirmed` and `finalized` sit (finalized never moves back). */
  setCommitmentDepths(d: { confirmed?: number; finalized?: number }): void {
    const before = { confirmed: this.confirmedSlot, finalized: this.finalizedSlot };
    if (d.confirmed !== undefined) this.confirmedDepth = d.confirmed;
    if (d.finalized !== undefined) this.finalizedDepth = d.finalized;
    this.#finalizedFloor = this.finalizedSlot;
    this.#announce('confirmed', before.confirmed);
    this.#announce('finalized', before.finalized);
  }

  #announce(commitment: 'confirmed' | 'finalized', from: number): void {
    const to = this.slotFor(commitment);
    if (to <= from) return;
    const blocks = this.blocks.filter((b) => b.slot > from && b.slot <= to);
    if (blocks.length) for (const l of this.#listeners) l.reached?.(commitment, blocks);
  }

  /**
   * A fork switch: every block from `fromSlot` up (the open bank too) leaves the ledger, as when
   * the cluster builds on another fork. Their transactions leave every index and the VM is rebuilt
   * by replaying what survives on a fresh LiteSVM (it has no rollback). `fromSlot` must be above
   * `finalized`. The next block goes to a fresh slot after the dropped ones. Returns the dropped
   * transactions' signatures.
   */
  dropSlots(fromSlot: number): string[] {
    if (fromSlot <= this.finalizedSlot) throw new Error(`slot ${fromSlot} is finalized (finalized: ${this.finalizedSlot})`);
    const gone = [...this.blocks.filter((b) => b.slot >= fromSlot), ...(this.#open.slot >= fromSlot ? [this.#open] : [])];
    const goneTxs = new Set(gone.flatMap((b) => b.txs));
    const touched = new Set<string>();
    for (const t of goneTxs) for (const k of t.keys) touched.add(k.pubkey);
    this.blocks.splice(this.blocks.findIndex((b) => b.slot >= fromSlot) >>> 0);
    for (const b of gone) this.#bySlot.delete(b.slot);
    this.#journal = this.#journal.filter((e) => e.kind !== 'tx' || !goneTxs.has(e.tx));
    for (const t of goneTxs) this.#sigs.delete(t.decoded.signature);
    for (const [addr, list] of this.#byAddress) this.#byAddress.set(addr, list.filter((t) => !goneTxs.has(t)));
    this.#fork++;
    const parent = this.blocks.at(-1)!;
    const lastSlot = Math.max(this.#open.slot, ...gone.map((b) => b.slot));
    this.#open = this.#newBlock(lastSlot + 1, parent.slot, parent.blockhash, parent.blockHeight + 1);
    this.#replay();
    for (const l of this.#listeners) l.dropped?.(gone, [...touched]);
    for (const l of this.#listeners) l.slotOpened?.(this.#open.slot, parent.slot, this.finalizedSlot);
    return gone.flatMap((b) => b.txs.map((t) => t.decoded.signature));
  }

  #replay(): void {
    this.#vm = FakeSolanaChain.#newVm();
    this.#touches.clear();
    let slot = -1;
    for (const e of this.#journal) {
      if (e.kind === 'inject') { e.apply(this.#vm); this.#touch(e); continue; }
      if (e.tx.slot !== slot) { slot = e.tx.slot; this.#vm.warpToSlot(BigInt(slot)); }
      this.#vm.sendTransaction(e.tx.decoded.tx);
      this.#touch(e);
    }
    this.#vm.warpToSlot(BigInt(this.#open.slot));
  }

  #touch(e: Entry): void {
    const addrs = e.kind === 'inject' ? e.touched : e.tx.keys.map((k) => k.pubkey);
    for (const a of addrs) {
      let list = this.#touches.get(a);
      if (!list) this.#touches.set(a, (list = []));
      list.push(e);
    }
  }

  #newBlock(slot: number, parentSlot: number, previousBlockhash: string, blockHeight: number): FakeBlock {
    return {
      slot, parentSlot, previousBlockhash, blockHeight, blockhash: '', txs: [], frozen: false,
      blockTime: this.genesisUnixTime + Math.floor(slot / this.slotsPerSecond),
    };
  }

  #hash(slot: number): string {
    return toBase58(createHash('sha256').update(`fake-solana:${this.#fork}:${slot}`).digest());
  }

  // ---- state ----

  /** An account as of `slot` (a commitment's slot): the VM's state with newer transactions undone. */
  account(address: string, slot = this.processedSlot): EncodedAccount | null {
    const list = this.#touches.get(address);
    let value: EncodedAccount | null | undefined;
    if (list) {
      for (let i = list.length - 1; i >= 0; i--) {
        const e = list[i]!;
        if (e.kind === 'inject' || e.tx.slot <= slot) break;
        value = e.tx.pre.get(address) ?? null;
      }
    }
    if (value !== undefined) return value;
    const acc = this.#vm.getAccount(address as Address);
    return acc.exists ? acc : null;
  }

  /** Every address a transaction or a setup step has touched (the fake's account index). */
  knownAddresses(): string[] { return [...this.#touches.keys()]; }

  minimumBalanceForRentExemption(len: number): bigint { return this.#vm.minimumBalanceForRentExemption(BigInt(len)); }

  decimalsOf(mint: string, slot?: number): number | null { return readMint(this.account(mint, slot))?.decimals ?? null; }

  // ---- transactions ----

  transaction(signature: string): ExecutedTx | undefined { return this.#sigs.get(signature); }

  /** Transactions naming `address`, oldest first, on the current fork (the open bank included). */
  transactionsFor(address: string): readonly ExecutedTx[] { return this.#byAddress.get(address) ?? []; }

  /** A blockhash some transaction may still use: made by a block on this fork in the last 150. */
  isBlockhashValid(hash: string, atSlot = this.processedSlot): boolean {
    const tip = this.frozenAtOrBelow(atSlot);
    for (let i = this.blocks.length - 1; i >= 0; i--) {
      const b = this.blocks[i]!;
      if (b.slot > tip.slot) continue;
      if (tip.blockHeight - b.blockHeight > BLOCKHASH_VALID_BLOCKS) return false;
      if (b.blockhash === hash) return true;
    }
    return false;
  }

  readLookupTable = (table: string): string[] => {
    const acc = this.account(table);
    if (!acc || acc.programAddress !== ADDRESS_LOOKUP_TABLE_PROGRAM) throw new RpcError(-32002, 'Transaction simulation failed: Transaction loads an address table account that doesn\'t exist', { err: 'AddressLookupTableNotFound' });
    return lookupTableAddresses(Uint8Array.from(acc.data));
  };

  /**
   * Runs a transaction the way a leader does, or refuses it as preflight would (RpcError):
   * dropped (bad signature, unknown blockhash, fee unpaid, already processed) unless it could
   * land; landed failures stay in the block with `meta.err` and their fee taken.
   */
  submit(wire: Uint8Array, opts: SubmitOptions = {}): string {
    let decoded: DecodedTx;
    try { decoded = decodeTransaction(wire); } catch (e) {
      if (e instanceof RpcError) throw e;
      throw new RpcError(-32602, `invalid transaction: ${(e as Error).message}`);
    }
    const preflight = !opts.skipPreflight;
    const refuse = (err: TxErrorJson, logs: string[] = [], units = 0n): never => {
      if (err === 'SignatureFailure') throw new RpcError(-32003, 'Transaction signature verification failure');
      throw new RpcError(-32002, `Transaction simulation failed: ${txErrorDisplay(err)}`, {
        accounts: null, err, innerInstructions: null, loadedAccountsDataSize: 0, logs, replacementBlockhash: null, returnData: null, unitsConsumed: units,
      });
    };
    const dropped = (err: TxErrorJson): string => (preflight ? refuse(err) : decoded.signature);
    if (this.#sigs.has(decoded.signature)) return dropped('AlreadyProcessed');
    if (!this.isBlockhashValid(decoded.recentBlockhash)) return dropped('BlockhashNotFound');
    const keys = accountKeys(decoded, this.readLookupTable);
    const sim = this.#vm.simulateTransaction(decoded.tx);
    if ('err' in sim) {
      const err = txErrorJson(sim.err());
      if (!isIncluded(err)) return dropped(err);
      if (preflight) refuse(err, sim.meta().logs(), sim.meta().computeUnitsConsumed());
    }
    this.#execute(decoded, keys);
    return decoded.signature;
  }

  /** What simulateTransaction answers: the VM's verdict without a trace in the ledger. */
  simulate(wire: Uint8Array, opts: { sigVerify?: boolean; replaceRecentBlockhash?: boolean; accounts?: string[] }): Record<string, unknown> {
    const decoded = decodeTransaction(wire);
    const vm = this.#vm;
    if (opts.sigVerify === false) vm.withSigverify(false);
    try {
      if (!opts.replaceRecentBlockhash && !this.isBlockhashValid(decoded.recentBlockhash)) {
        return { err: 'BlockhashNotFound', accounts: null, innerInstructions: null, loadedAccountsDataSize: 0, logs: [], replacementBlockhash: null, returnData: null, unitsConsumed: 0 };
      }
      const sim = vm.simulateTransaction(decoded.tx);
      const failed = 'err' in sim;
      const meta = sim.meta();
      const post = failed ? [] : sim.postAccounts();
      const rd = meta.returnData();
      return {
        err: failed ? txErrorJson(sim.err()) : null,
        accounts: opts.accounts ? opts.accounts.map((a) => post.find((p) => p.address === a) ?? null) : null,
        innerInstructions: null,
        loadedAccountsDataSize: 0,
        logs: meta.logs(),
        replacementBlockhash: opts.replaceRecentBlockhash ? { blockhash: this.frozenAtOrBelow(this.processedSlot).blockhash, lastValidBlockHeight: this.frozenAtOrBelow(this.processedSlot).blockHeight + BLOCKHASH_VALID_BLOCKS } : null,
        returnData: rd.data().length ? { programId: toBase58(rd.programId()), data: [Buffer.from(rd.data()).toString('base64'), 'base64'] } : null,
        unitsConsumed: meta.computeUnitsConsumed(),
      };
    } finally {
      if (opts.sigVerify === false) vm.withSigverify(true);
    }
  }

  #execute(decoded: DecodedTx, keys: AccountKey[]): ExecutedTx {
    const block = this.#open;
    const pre = new Map<string, EncodedAccount | null>();
    for (const k of keys) pre.set(k.pubkey, this.account(k.pubkey));
    const result = this.#vm.sendTransaction(decoded.tx);
    const failed = 'err' in result;
    const meta = failed ? result.meta() : result;
    const post = keys.map((k) => this.account(k.pubkey));
    const rd = meta.returnData();
    const tx: ExecutedTx = {
      decoded, keys, slot: block.slot, index: block.txs.length, pre,
      meta: {
        err: failed ? txErrorJson(result.err()) : null,
        fee: transactionFee(decoded),
        preBalances: keys.map((k) => pre.get(k.pubkey)?.lamports ?? 0n),
        postBalances: post.map((a) => a?.lamports ?? 0n),
        preTokenBalances: this.#tokenBalances(keys.map((k) => pre.get(k.pubkey) ?? null)),
        postTokenBalances: this.#tokenBalances(post),
        logMessages: meta.logs(),
        innerInstructions: meta.innerInstructions().map((list, index) => ({
          index,
          instructions: list.map((ii) => {
            const c = ii.instruction();
            return { programIdIndex: c.programIdIndex(), accounts: [...c.accounts()], data: Uint8Array.from(c.data()), stackHeight: ii.stackHeight() };
          }),
        })).filter((x) => x.instructions.length > 0),
        computeUnitsConsumed: meta.computeUnitsConsumed(),
        returnData: rd.data().length ? { programId: toBase58(rd.programId()), data: Uint8Array.from(rd.data()) } : null,
      },
    };
    block.txs.push(tx);
    this.#sigs.set(decoded.signature, tx);
    for (const k of new Set(keys.map((x) => x.pubkey))) {
      let list = this.#byAddress.get(k);
      if (!list) this.#byAddress.set(k, (list = []));
      list.push(tx);
    }
    const entry: Entry = { kind: 'tx', tx };
    this.#journal.push(entry);
    this.#touch(entry);
    for (const l of this.#listeners) l.executed?.(tx);
    return tx;
  }

  #tokenBalances(accounts: Array<EncodedAccount | null>): TokenBalance[] {
    const out: TokenBalance[] = [];
    accounts.forEach((acc, accountIndex) => {
      const t = readTokenAccount(acc);
      if (!t || !acc) return;
      const decimals = this.decimalsOf(t.mint) ?? 0;
      out.push({ accountIndex, mint: t.mint, owner: t.owner, programId: acc.programAddress, uiTokenAmount: uiTokenAmount(t.amount, decimals) });
    });
    return out;
  }

  // ---- setup (out of band: visible at every commitment at once, like genesis accounts; see setup.ts) ----

  /** Writes accounts directly (replayed in order after a fork switch); `touched` are the addresses `apply` writes. */
  inject(touched: string[], apply: (vm: LiteSVM) => void): void {
    apply(this.#vm);
    const entry: Entry = { kind: 'inject', touched, apply };
    this.#journal.push(entry);
    this.#touch(entry);
  }

  fundSol(address: string, lamports: bigint): void { setup.fundSol(this, address, lamports); }
  createMint(address: string, opts: setup.MintOptions = {}): string { return setup.createMint(this, address, opts); }
  createAssociatedTokenAccount(owner: string, mint: string): Promise<string> { return setup.createAssociatedTokenAccount(this, owner, mint); }
  mintTo(owner: string, mint: string, amount: bigint): Promise<string> { return setup.mintTo(this, owner, mint, amount); }

  /** Sends `lamports` from the faucet in a real signed transfer (what requestAirdrop does); returns its signature. */
  async airdrop(to: string, lamports: bigint): Promise<string> {
    this.#faucet ??= await setup.faucet(this);
    return this.submit(await setup.transferWire(this.#faucet, to, lamports, this.frozenAtOrBelow(this.processedSlot)));
  }

  // ---- epoch ----

  epochInfo(slot: number): Record<string, number> {
    const b = this.block(slot) ?? this.frozenAtOrBelow(slot);
    let count = 0;
    for (const x of this.blocks) if (x.slot <= slot) count += x.txs.length;
    if (slot >= this.#open.slot) count += this.#open.txs.length;
    return {
      absoluteSlot: slot, blockHeight: b.blockHeight, epoch: Math.floor(slot / SLOTS_PER_EPOCH),
      slotIndex: slot % SLOTS_PER_EPOCH, slotsInEpoch: SLOTS_PER_EPOCH, transactionCount: count,
    };
  }
}


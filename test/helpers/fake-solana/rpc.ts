import { getCompiledTransactionMessageDecoder } from '@solana/kit';
import type { Commitment, ExecutedTx, FakeSolanaChain } from './chain.js';
import { type TransactionDetails, encodeBlock, encodeGetTransaction, txEncoding } from './encode.js';
import { parsedAccountData, readTokenAccount } from './parse.js';
import {
  BLOCKHASH_VALID_BLOCKS, FEATURE_SET, MEMO_PROGRAM, MEMO_V1_PROGRAM, RpcError, SOLANA_CORE_VERSION, TOKEN_2022_PROGRAM, TOKEN_PROGRAM,
  blockCleanedUp, blockNotAvailable, fromBase58, fromBase64, invalidParams, longTermSlotSkipped, minContextSlotNotReached,
  nodeUnhealthy, slotSkipped, transactionFee, uiAccount, uiTokenAmount, wireFrom, type DecodedTx,
} from './wire.js';

/** What one node makes of the chain: how far behind it is, how much ledger it keeps, its health. */
export interface NodeView {
  chain: FakeSolanaChain;
  /** Slots this node is behind the cluster: every commitment answers this much lower. */
  lagSlots: number;
  /** Blocks below this slot are gone from the node's ledger (-32001, or long-term storage). */
  firstAvailableSlot: number;
  /** Blocks below `firstAvailableSlot` come from long-term storage (BigTable); a skipped one is -32009. */
  longTermStorage: boolean;
  /**
   * Blocks the node lost (a gap in long-term storage): getBlock answers -32009 for these slots at
   * any commitment, while getSignaturesForAddress and getTransaction still know their transactions.
   */
  missingBlocks: Set<number>;
  /** getHealth (and preflight) answer -32005 "Node is unhealthy". */
  unhealthy: boolean;
  /** getHealth answers "behind" past this many slots of lag (agave's health-check-slot-distance). */
  healthCheckSlotDistance: number;
  genesisHash: string;
  identity: string;
}

type Params = unknown[];
type Cfg = Record<string, unknown>;

const cfgOf = (p: unknown): Cfg => (p && typeof p === 'object' && !Array.isArray(p) ? (p as Cfg) : {});

export function commitmentOf(cfg: Cfg): Commitment {
  const c = cfg.commitment;
  switch (c) {
    case undefined: case null: case 'finalized': case 'max': case 'root': return 'finalized';
    case 'confirmed': case 'single': case 'singleGossip': return 'confirmed';
    case 'processed': case 'recent': return 'processed';
    default: throw invalidParams(`Invalid params: unknown variant \`${String(c)}\`, expected one of \`processed\`, \`confirmed\`, \`finalized\`.`);
  }
}

function atLeastConfirmed(c: Commitment): void {
  if (c === 'processed') throw invalidParams('Method does not support commitment below `confirmed`');
}

function addressParam(v: unknown): string {
  if (typeof v === 'string') {
    try { if (fromBase58(v).length === 32) return v; } catch { /* below */ }
  }
  throw invalidParams('Invalid param: Invalid');
}

function signatureParam(v: unknown): string {
  if (typeof v === 'string') {
    try { if (fromBase58(v).length === 64) return v; } catch { /* below */ }
  }
  throw invalidParams('Invalid param: Invalid');
}

function slotParam(v: unknown): number {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return v;
  throw invalidParams('Invalid params: invalid type: expected u64.');
}

export class SolanaRpc {
  readonly v: NodeView;
  constructor(view: NodeView) { this.v = view; }

  get chain(): FakeSolanaChain { return this.v.chain; }

  slot(c: Commitment): number {
    const s = this.chain.slotFor(c);
    if (this.v.lagSlots <= 0) return s;
    return this.chain.frozenAtOrBelow(s - this.v.lagSlots).slot;
  }

  #ctxSlot(cfg: Cfg, c = commitmentOf(cfg)): number {
    const s = this.slot(c);
    if (typeof cfg.minContextSlot === 'number' && s < cfg.minContextSlot) throw minContextSlotNotReached(s);
    return s;
  }

  #ctx(slot: number, value: unknown) { return { context: { apiVersion: SOLANA_CORE_VERSION, slot }, value }; }

  #account(addr: string, slot: number, encoding: unknown) {
    return uiAccount(this.chain.account(addr, slot), encoding as string | undefined, (a) => parsedAccountData(a, (m) => this.chain.decimalsOf(m, slot)));
  }

  async call(method: string, params: Params): Promise<unknown> {
    const h = this.#methods[method];
    if (!h) throw new RpcError(-32601, 'Method not found');
    return h(params, cfgOf(params.at(-1)));
  }

  health(): string {
    if (this.v.unhealthy) throw nodeUnhealthy(null);
    if (this.v.lagSlots > this.v.healthCheckSlotDistance) throw nodeUnhealthy(this.v.lagSlots);
    return 'ok';
  }

  #methods: Record<string, (p: Params, cfg: Cfg) => unknown> = {
    getHealth: () => this.health(),
    getVersion: () => ({ 'feature-set': FEATURE_SET, 'solana-core': SOLANA_CORE_VERSION }),
    getGenesisHash: () => this.v.genesisHash,
    getIdentity: () => ({ identity: this.v.identity }),
    getFirstAvailableBlock: () => this.v.firstAvailableSlot,
    minimumLedgerSlot: () => this.v.firstAvailableSlot,
    getSlot: (_p, cfg) => this.#ctxSlot(cfg),
    getBlockHeight: (_p, cfg) => {
      const slot = this.#ctxSlot(cfg);
      return (this.chain.block(slot) ?? this.chain.frozenAtOrBelow(slot)).blockHeight;
    },
    getRecentPrioritizationFees: () => this.chain.blocks.slice(-150).map((b) => ({ prioritizationFee: 0, slot: b.slot })),
    getEpochInfo: (_p, cfg) => this.chain.epochInfo(this.#ctxSlot(cfg)),
    getLatestBlockhash: (_p, cfg) => {
      const slot = this.#ctxSlot(cfg);
      const b = this.chain.frozenAtOrBelow(slot);
      return this.#ctx(slot, { blockhash: b.blockhash, lastValidBlockHeight: b.blockHeight + BLOCKHASH_VALID_BLOCKS });
    },
    isBlockhashValid: (p, cfg) => {
      const slot = this.#ctxSlot(cfg);
      return this.#ctx(slot, typeof p[0] === 'string' && this.chain.isBlockhashValid(p[0], slot));
    },
    getBalance: (p, cfg) => {
      const addr = addressParam(p[0]);
      const slot = this.#ctxSlot(cfg);
      return this.#ctx(slot, this.chain.account(addr, slot)?.lamports ?? 0n);
    },
    getAccountInfo: (p, cfg) => {
      const addr = addressParam(p[0]);
      const slot = this.#ctxSlot(cfg);
      return this.#ctx(slot, this.#account(addr, slot, cfg.encoding));
    },
    getMultipleAccounts: (p, cfg) => {
      if (!Array.isArray(p[0])) throw invalidParams('Invalid params: invalid type: expected a sequence.');
      if (p[0].length > 100) throw invalidParams('Too many inputs provided; max 100');
      const addrs = p[0].map(addressParam);
      const slot = this.#ctxSlot(cfg);
      return this.#ctx(slot, addrs.map((a) => this.#account(a, slot, cfg.encoding ?? 'base64')));
    },
    getProgramAccounts: (p, cfg) => {
      const program = addressParam(p[0]);
      const slot = this.#ctxSlot(cfg);
      const filters = Array.isArray(cfg.filters) ? (cfg.filters as Cfg[]) : [];
      const value = this.#programAccounts(program, slot, filters).map((addr) => ({ account: this.#account(addr, slot, cfg.encoding), pubkey: addr }));
      return cfg.withContext ? this.#ctx(slot, value) : value;
    },
    getTokenAccountsByOwner: (p, cfg) => {
      const owner = addressParam(p[0]);
      const filter = cfgOf(p[1]);
      const mint = filter.mint === undefined ? undefined : addressParam(filter.mint);
      const programId = filter.programId === undefined ? undefined : addressParam(filter.programId);
      if (mint === undefined && programId === undefined) throw invalidParams('Invalid params: missing field `mint` or `programId`.');
      if (programId !== undefined && programId !== TOKEN_PROGRAM && programId !== TOKEN_2022_PROGRAM) throw invalidParams('Invalid param: unrecognized Token program id');
      const slot = this.#ctxSlot(cfgOf(p[2]));
      const enc = cfgOf(p[2]).encoding;
      const value = this.chain.knownAddresses().filter((addr) => {
        const acc = this.chain.account(addr, slot);
        const t = readTokenAccount(acc);
        return t && t.owner === owner && (mint === undefined || t.mint === mint) && (programId === undefined || acc!.programAddress === programId);
      }).map((addr) => ({ account: this.#account(addr, slot, enc), pubkey: addr }));
      return this.#ctx(slot, value);
    },
    getTokenAccountBalance: (p, cfg) => {
      const addr = addressParam(p[0]);
      const slot = this.#ctxSlot(cfg);
      const acc = this.chain.account(addr, slot);
      if (!acc) throw invalidParams('Invalid param: could not find account');
      const t = readTokenAccount(acc);
      if (!t) throw invalidParams('Invalid param: not a Token account');
      return this.#ctx(slot, uiTokenAmount(t.amount, this.chain.decimalsOf(t.mint, slot) ?? 0));
    },
    getMinimumBalanceForRentExemption: (p) => this.chain.minimumBalanceForRentExemption(typeof p[0] === 'number' ? p[0] : 0),
    getFeeForMessage: (p, cfg) => {
      const slot = this.#ctxSlot(cfg);
      if (typeof p[0] !== 'string') throw invalidParams('Invalid params: invalid type: expected a string.');
      let msg;
      try { msg = getCompiledTransactionMessageDecoder().decode(fromBase64(p[0])); } catch { throw invalidParams('invalid message'); }
      if (msg.version !== 'legacy' && msg.version !== 0) throw invalidParams('invalid message');
      const decoded = {
        header: { numRequiredSignatures: msg.header.numSignerAccounts }, staticKeys: msg.staticAccounts,
        instructions: msg.instructions.map((ix) => ({ programIdIndex: ix.programAddressIndex, accounts: [], data: Uint8Array.from(ix.data ?? []) })),
      } as unknown as DecodedTx;
      return this.#ctx(slot, this.chain.isBlockhashValid(String(msg.lifetimeToken), slot) ? transactionFee(decoded) : null);
    },
    getSignaturesForAddress: (p, cfg) => this.#signaturesForAddress(p, cfg),
    getSignatureStatuses: (p, cfg) => this.#signatureStatuses(p, cfg),
    getTransaction: (p, cfg) => {
      const sig = signatureParam(p[0]);
      const c = commitmentOf(cfg);
      atLeastConfirmed(c);
      const encoding = txEncoding(cfg.encoding);
      const tx = this.chain.transaction(sig);
      const block = tx && this.chain.block(tx.slot);
      if (!tx || !block?.frozen || tx.slot > this.slot(c)) return null;
      return encodeGetTransaction(this.chain, tx, block, encoding, cfg.maxSupportedTransactionVersion as number | undefined);
    },
    getBlock: (p, cfg) => {
      const slot = slotParam(p[0]);
      const c = commitmentOf(cfg);
      atLeastConfirmed(c);
      const encoding = txEncoding(cfg.encoding);
      const details = (cfg.transactionDetails ?? 'full') as TransactionDetails;
      if (!['full', 'signatures', 'none', 'accounts'].includes(details)) throw invalidParams(`Invalid params: unknown variant \`${String(details)}\`, expected one of \`full\`, \`signatures\`, \`none\`, \`accounts\`.`);
      const b = this.#blockAt(slot, c);
      return encodeBlock(this.chain, b, { encoding, details, rewards: cfg.rewards !== false, max: cfg.maxSupportedTransactionVersion as number | undefined });
    },
    getBlockTime: (p) => {
      const slot = slotParam(p[0]);
      if (slot <= this.slot('finalized')) return this.#blockAt(slot, 'finalized').blockTime;
      const b = this.chain.block(slot);
      if (!b || slot > this.slot('processed')) throw blockNotAvailable(slot);
      return b.blockTime;
    },
    getBlocks: (p, cfg) => {
      const start = slotParam(p[0]);
      const conf = typeof p[1] === 'number' ? cfgOf(p[2]) : cfg;
      const c = commitmentOf(conf);
      atLeastConfirmed(c);
      const end = Math.min(typeof p[1] === 'number' ? p[1] : start + 500_000, this.#ctxSlot(conf, c));
      if (end < start) return [];
      if (end - start > 500_000) throw invalidParams('Slot range too large; max 500000');
      return this.#frozenSlots(start, end);
    },
    getBlocksWithLimit: (p) => {
      const start = slotParam(p[0]);
      const limit = slotParam(p[1]);
      if (limit > 500_000) throw invalidParams('Limit too large; max 500000');
      const conf = cfgOf(p[2]);
      const c = commitmentOf(conf);
      atLeastConfirmed(c);
      return this.#frozenSlots(start, this.#ctxSlot(conf, c)).slice(0, limit);
    },
    sendTransaction: (p, cfg) => {
      const wire = wireFrom(p[0], cfg.encoding);
      if (!cfg.skipPreflight && this.v.unhealthy) throw nodeUnhealthy(null);
      return this.chain.submit(wire, { skipPreflight: cfg.skipPreflight === true });
    },
    simulateTransaction: (p, cfg) => {
      const wire = wireFrom(p[0], cfg.encoding);
      if (cfg.sigVerify && cfg.replaceRecentBlockhash) throw invalidParams('sigVerify may not be used with replaceRecentBlockhash');
      const slot = this.#ctxSlot(cfg);
      const accounts = cfgOf(cfg.accounts);
      const addrs = Array.isArray(accounts.addresses) ? accounts.addresses.map(addressParam) : undefined;
      const value = this.chain.simulate(wire, { sigVerify: cfg.sigVerify === true, replaceRecentBlockhash: cfg.replaceRecentBlockhash === true, accounts: addrs });
      if (addrs && Array.isArray(value.accounts)) {
        value.accounts = (value.accounts as Array<{ address: string } | null>).map((a, i) => (a ? this.#account(addrs[i]!, slot, accounts.encoding ?? 'base64') : null));
      }
      return this.#ctx(slot, value);
    },
    requestAirdrop: async (p) => {
      const addr = addressParam(p[0]);
      if (typeof p[1] !== 'number' && typeof p[1] !== 'bigint') throw invalidParams('Invalid params: invalid type: expected u64.');
      return this.chain.airdrop(addr, BigInt(p[1]));
    },
  };

  #frozenSlots(start: number, end: number): number[] {
    const from = Math.max(start, this.v.longTermStorage ? 0 : this.v.firstAvailableSlot);
    return this.chain.blocks.filter((b) => b.slot >= from && b.slot <= end).map((b) => b.slot);
  }

  /** agave's get_block: finalized from the ledger (skipped, cleaned up, long-term storage), confirmed from the confirmed bank's ancestors. */
  #blockAt(slot: number, c: Commitment) {
    if (this.v.missingBlocks.has(slot)) throw longTermSlotSkipped(slot);
    const fin = this.slot('finalized');
    if (slot <= fin) {
      const b = this.chain.block(slot);
      if (slot < this.v.firstAvailableSlot) {
        if (!this.v.longTermStorage) throw blockCleanedUp(slot, this.v.firstAvailableSlot);
        if (!b) throw longTermSlotSkipped(slot);
        return b;
      }
      if (b?.frozen) return b;
      if (slot >= fin) throw blockNotAvailable(slot);
      throw slotSkipped(slot);
    }
    if (c === 'confirmed') {
      const b = this.chain.block(slot);
      if (b?.frozen && slot <= this.slot('confirmed')) return b;
    }
    throw blockNotAvailable(slot);
  }

  #programAccounts(program: string, slot: number, filters: Cfg[]): string[] {
    return this.chain.knownAddresses().filter((addr) => {
      const acc = this.chain.account(addr, slot);
      if (!acc || acc.programAddress !== program) return false;
      const data = Uint8Array.from(acc.data);
      return filters.every((f) => {
        if (typeof f.dataSize === 'number') return data.length === f.dataSize;
        const m = cfgOf(f.memcmp);
        if (typeof m.offset !== 'number' || typeof m.bytes !== 'string') return true;
        const want = m.encoding === 'base64' ? fromBase64(m.bytes) : fromBase58(m.bytes);
        return want.every((byte, i) => data[m.offset as number + i] === byte);
      });
    });
  }

  #signaturesForAddress(p: Params, cfg: Cfg): unknown {
    const addr = addressParam(p[0]);
    const c = commitmentOf(cfg);
    atLeastConfirmed(c);
    const limit = cfg.limit ?? 1000;
    if (typeof limit !== 'number' || limit < 1 || limit > 1000) throw invalidParams('Invalid limit; max 1000');
    const highest = this.#ctxSlot(cfg, c);
    const fin = this.slot('finalized');
    const list = this.chain.transactionsFor(addr).filter((t) => t.slot <= highest && this.chain.block(t.slot)?.frozen).reverse();
    let start = 0;
    if (typeof cfg.before === 'string') {
      start = list.findIndex((t) => t.decoded.signature === cfg.before) + 1;
      if (start === 0) return [];
    }
    let end = list.length;
    if (typeof cfg.until === 'string') {
      const u = list.findIndex((t) => t.decoded.signature === cfg.until);
      if (u >= 0) end = u;
    }
    return list.slice(start, Math.max(start, end)).slice(0, limit).map((t) => ({
      blockTime: this.chain.block(t.slot)?.blockTime ?? null,
      confirmationStatus: t.slot <= fin ? 'finalized' : 'confirmed',
      err: t.meta.err,
      memo: memoOf(t),
      signature: t.decoded.signature,
      slot: t.slot,
    }));
  }

  #signatureStatuses(p: Params, _cfg: Cfg): unknown {
    if (!Array.isArray(p[0])) throw invalidParams('Invalid params: invalid type: expected a sequence.');
    if (p[0].length > 256) throw invalidParams('Too many inputs provided; max 256');
    const sigs = p[0].map(signatureParam);
    const processed = this.slot('processed');
    const confirmed = this.slot('confirmed');
    const fin = this.slot('finalized');
    return this.#ctx(processed, sigs.map((s) => {
      const t = this.chain.transaction(s);
      if (!t || t.slot > processed) return null;
      const finalized = t.slot <= fin;
      return {
        confirmationStatus: finalized ? 'finalized' : t.slot <= confirmed ? 'confirmed' : 'processed',
        confirmations: finalized ? null : this.chain.blocks.filter((b) => b.slot > t.slot && b.slot <= processed).length,
        err: t.meta.err,
        slot: t.slot,
        status: t.meta.err === null ? { Ok: null } : { Err: t.meta.err },
      };
    }));
  }
}

/** agave's memo column: each memo instruction's text as `[len] text`, joined by "; ". */
export function memoOf(t: ExecutedTx): string | null {
  const memos = t.decoded.instructions
    .filter((ix) => [MEMO_PROGRAM, MEMO_V1_PROGRAM].includes(t.keys[ix.programIdIndex]?.pubkey ?? ''))
    .map((ix) => new TextDecoder().decode(ix.data));
  return memos.length ? memos.map((m) => `[${m.length}] ${m}`).join('; ') : null;
}


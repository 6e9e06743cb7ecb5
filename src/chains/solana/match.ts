import type { Hit, WatchLookup, WatchRef } from '../family.js';
import { solanaReference } from './reference.js';

/** A token account's balance in a transaction's meta (`preTokenBalances`, `postTokenBalances`). */
export interface SolanaTokenBalance {
  accountIndex: number;
  mint: string;
  /** The wallet that owns the token account; absent in blocks older than the field. */
  owner?: string;
  uiTokenAmount: { amount: string; decimals: number };
}

/** One transaction of `getBlock` with `encoding: 'json'`, `transactionDetails: 'full'`. */
export interface SolanaBlockTx {
  transaction: { signatures: string[]; message: { accountKeys: string[] } };
  meta: {
    err: unknown;
    fee: number | string;
    /** Lamports per account key; decimal strings when read by `parseSolanaJson` (they pass 2^53). */
    preBalances: Array<number | string>;
    postBalances: Array<number | string>;
    preTokenBalances?: SolanaTokenBalance[];
    postTokenBalances?: SolanaTokenBalance[];
    /** v0 transactions: accounts loaded from lookup tables, after the message's own keys. */
    loadedAddresses?: { writable: string[]; readonly: string[] };
  } | null;
}

/**
 * The watched wallets' SOL and SPL moves in a slot's transactions, read from the balances the
 * node reports before and after each one (whatever program moved them: a transfer, a swap, a
 * closed account). SOL: an account key's change, the fee taken out of the fee payer's (a
 * wallet that only paid a fee moved nothing). SPL: the change of a token account whose `owner`
 * is the watched wallet, for the listed mints: a transfer into the wallet's associated token
 * account (created in the same transaction or before) is the wallet's, netted per wallet and
 * mint. Failed transactions moved nothing but their fee: no hits.
 *
 * A transaction that names a watched Solana Pay reference among its account keys is also the
 * reference's: a hit of its watch for each account it paid (SOL by account, SPL by the token
 * account's owner and mint), `to` that account, so payments check recipient, mint and amount
 * as `validateTransfer` does (the recipient's balance change, or its token account's).
 */
export function matchSolanaBlock(registry: WatchLookup, envId: number, txs: readonly SolanaBlockTx[], mints: ReadonlySet<string>): Hit[] {
  const hits: Hit[] = [];
  for (const tx of txs) {
    const meta = tx.meta;
    if (!meta || meta.err !== null && meta.err !== undefined) continue;
    const txHash = tx.transaction.signatures[0]!;
    const keys = [...tx.transaction.message.accountKeys, ...meta.loadedAddresses?.writable ?? [], ...meta.loadedAddresses?.readonly ?? []];
    const lamports = keys.map((_, i) => BigInt(meta.postBalances[i] ?? 0) - BigInt(meta.preBalances[i] ?? 0) + (i === 0 ? BigInt(meta.fee) : 0n));
    const references = keys.flatMap((key) => registry.lookup(envId, solanaReference.watchKey(key)) ?? []);
    const sol = keys.map((key, i) => ({ owner: key, delta: lamports[i]! }));
    moves(sol, null, txHash, registry, envId, hits);
    paid(sol, null, txHash, references, hits);
    if (mints.size === 0) continue;
    for (const [mint, byOwner] of tokenDeltas(meta.preTokenBalances ?? [], meta.postTokenBalances ?? [], mints)) {
      const tokens = [...byOwner].map(([owner, delta]) => ({ owner, delta }));
      moves(tokens, mint, txHash, registry, envId, hits);
      paid(tokens, mint, txHash, references, hits);
    }
  }
  return hits;
}

/** Net change per mint and owner, for the listed mints. */
function tokenDeltas(pre: readonly SolanaTokenBalance[], post: readonly SolanaTokenBalance[], mints: ReadonlySet<string>): Map<string, Map<string, bigint>> {
  const out = new Map<string, Map<string, bigint>>();
  const add = (b: SolanaTokenBalance, sign: bigint) => {
    if (!b.owner || !mints.has(b.mint)) return;
    let byOwner = out.get(b.mint);
    if (!byOwner) out.set(b.mint, (byOwner = new Map()));
    byOwner.set(b.owner, (byOwner.get(b.owner) ?? 0n) + sign * BigInt(b.uiTokenAmount.amount));
  };
  for (const b of pre) add(b, -1n);
  for (const b of post) add(b, 1n);
  return out;
}

/**
 * Hits of the watched among `changes` (one asset of one transaction). The other side is the
 * account that moved the most the other way: the sender of what a wallet received, the
 * receiver of what it sent (a plain transfer has one of each).
 */
function moves(changes: ReadonlyArray<{ owner: string; delta: bigint }>, token: string | null, txHash: string, registry: WatchLookup, envId: number, hits: Hit[]): void {
  for (const { owner, delta } of changes) {
    if (delta === 0n) continue;
    const watches = registry.lookup(envId, owner);
    if (!watches) continue;
    const incoming = delta > 0n;
    const other = counterpart(changes, incoming);
    for (const watch of watches) hits.push(hit(watch, incoming, txHash, incoming ? other : owner, incoming ? owner : other, token, incoming ? delta : -delta));
  }
}

/** The referenced orders' hits: what each account received in the transaction (one asset). */
function paid(changes: ReadonlyArray<{ owner: string; delta: bigint }>, token: string | null, txHash: string, references: readonly WatchRef[], hits: Hit[]): void {
  if (references.length === 0) return;
  for (const { owner, delta } of changes) {
    if (delta <= 0n) continue;
    const from = counterpart(changes, true);
    for (const watch of references) hits.push(hit(watch, true, txHash, from, owner, token, delta));
  }
}

function counterpart(changes: ReadonlyArray<{ owner: string; delta: bigint }>, incoming: boolean): string | null {
  let best: { owner: string; delta: bigint } | undefined;
  for (const c of changes) {
    const moved = incoming ? -c.delta : c.delta;
    if (moved > 0n && (!best || moved > (incoming ? -best.delta : best.delta))) best = c;
  }
  return best?.owner ?? null;
}

function hit(watch: WatchRef, incoming: boolean, txHash: string, from: string | null, to: string | null, token: string | null, amount: bigint): Hit {
  return { watch, type: incoming ? 'payment' : 'payout', direction: incoming ? 'in' : 'out', txHash, from, to, token, amount: amount.toString(), logIndex: null };
}

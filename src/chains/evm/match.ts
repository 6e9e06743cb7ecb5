import { toChecksumAddress } from './address.js';
import type { Hit, WatchLookup, WatchRef } from '../family.js';

/** keccak256("Transfer(address,address,uint256)") */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

export interface EvmTx {
  hash: string;
  from: string;
  to: string | null;
  value: string;
}

export interface EvmLog {
  address: string;
  topics: string[];
  data: string;
  transactionHash: string;
  logIndex: string;
}

/**
 * The hits of one block: native transfers of its transactions and ERC-20 Transfer logs.
 * Every address is one Map lookup, so the cost follows the block, not the watch list. A
 * transaction that touches a watched address without moving value to or from it gives one
 * `other` hit per side.
 */
export function matchEvmBlock(registry: WatchLookup, envId: number, txs: readonly EvmTx[], logs: readonly EvmLog[]): Hit[] {
  const logsByTx = new Map<string, EvmLog[]>();
  for (const log of logs) {
    if (log.topics.length !== 3 || log.topics[0] !== TRANSFER_TOPIC) continue; // 4 topics: ERC-721
    const from = topicAddress(log.topics[1]!);
    const to = topicAddress(log.topics[2]!);
    if (!registry.lookup(envId, from) && !registry.lookup(envId, to)) continue;
    const list = logsByTx.get(log.transactionHash);
    if (list) list.push(log);
    else logsByTx.set(log.transactionHash, [log]);
  }

  const hits: Hit[] = [];
  for (const tx of txs) {
    const fromKey = tx.from.toLowerCase();
    const toKey = tx.to?.toLowerCase() ?? null;
    const fromWatches = registry.lookup(envId, fromKey);
    const toWatches = toKey === null ? undefined : registry.lookup(envId, toKey);
    const txLogs = logsByTx.get(tx.hash);
    if (!fromWatches && !toWatches && !txLogs) continue;

    const moved = new Set<string>();
    const value = BigInt(tx.value);
    if (value > 0n) {
      const amount = value.toString();
      for (const w of fromWatches ?? []) {
        hits.push(hit(w, 'payout', 'out', tx.hash, tx.from, tx.to, null, amount, null));
        moved.add(w.watchId);
      }
      for (const w of toWatches ?? []) {
        hits.push(hit(w, 'payment', 'in', tx.hash, tx.from, tx.to, null, amount, null));
        moved.add(w.watchId);
      }
    }
    for (const log of txLogs ?? []) {
      const from = topicAddress(log.topics[1]!);
      const to = topicAddress(log.topics[2]!);
      const amount = BigInt(log.data === '0x' ? 0 : log.data).toString();
      const token = toChecksumAddress(log.address);
      for (const w of registry.lookup(envId, from) ?? []) {
        hits.push(hit(w, 'payout', 'out', tx.hash, from, to, token, amount, Number(log.logIndex)));
        moved.add(w.watchId);
      }
      for (const w of registry.lookup(envId, to) ?? []) {
        hits.push(hit(w, 'payment', 'in', tx.hash, from, to, token, amount, Number(log.logIndex)));
        moved.add(w.watchId);
      }
    }
    for (const w of fromWatches ?? []) if (!moved.has(w.watchId)) hits.push(hit(w, 'other', 'out', tx.hash, tx.from, tx.to, null, '0', null));
    for (const w of toWatches ?? []) if (!moved.has(w.watchId)) hits.push(hit(w, 'other', 'in', tx.hash, tx.from, tx.to, null, '0', null));
  }
  return hits;
}

/**
 * The transactions whose receipt decides their hits: those with a native value hit. A
 * reverted transaction moved no value, but `eth_getBlockByNumber` shows its value all the
 * same. (A reverted transaction has no logs, so token hits need no receipt.) Only matched
 * transactions are asked about, so the cost follows the hits, not the watch list.
 */
export function valueHitTxs(hits: readonly Hit[]): string[] {
  return [...new Set(hits.filter(isNativeValueHit).map((h) => h.txHash))];
}

/** The hits, those of reverted transactions (lower-case hashes) as `other`: same side, amount 0. */
export function withReverted(hits: readonly Hit[], reverted: ReadonlySet<string>): Hit[] {
  if (reverted.size === 0) return [...hits];
  return hits.map((h) => (isNativeValueHit(h) && reverted.has(h.txHash.toLowerCase()) ? { ...h, type: 'other', amount: '0' } : h));
}

function isNativeValueHit(h: Hit): boolean {
  return h.token === null && h.type !== 'other';
}

function topicAddress(topic: string): string {
  return `0x${topic.slice(-40)}`.toLowerCase();
}

function hit(
  watch: WatchRef, type: Hit['type'], direction: Hit['direction'], txHash: string, from: string | null, to: string | null,
  token: string | null, amount: string, logIndex: number | null,
): Hit {
  return {
    watch, type, direction, txHash,
    from: from && toChecksumAddress(from), to: to && toChecksumAddress(to), token, amount, logIndex,
  };
}

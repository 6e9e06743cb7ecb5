// The merchant's spendable coins on a UTXO network, from what the payments side knows: the paid
// orders' derived addresses, their child indexes and the transactions that funded them.
//
//   findCoins(node: UtxoNode, format: UtxoAddressFormat, sources: readonly CoinSource[]): Promise<UtxoCoin[]>
//
// For each funding transaction, `getrawtransaction <txid> true` (the node needs `-txindex`, as the
// scanners' prevout lookups do, or a wallet that has it) gives its outputs; those paying an order's
// address are the coins. `gettxout <txid> <n> true` then drops the spent ones (the mempool counts:
// an output a pending transaction spends is no coin). Answers come in batches of 50 calls.

import type { CoinSource } from '../family.js';
import { parseUtxoAddress, type UtxoAddressFormat } from './address.js';
import type { UtxoCoin } from './psbt.js';

/** What coin finding needs of a node: `UtxoChain` (the scanner's adapter) has both. */
export interface UtxoNode {
  batch<T>(calls: Array<[method: string, params: unknown[]]>): Promise<T[]>;
}

interface VerboseTx {
  txid: string;
  hex: string;
  /** `value` is in satoshis as a decimal string: the adapter's parser reads amounts exactly. */
  vout: Array<{ n: number; value: string | number; scriptPubKey: { hex: string } }>;
}

const BATCH = 50;

export async function findCoins(node: UtxoNode, format: UtxoAddressFormat, sources: readonly CoinSource[]): Promise<UtxoCoin[]> {
  // A transaction may pay several orders, and an order may be paid by several transactions.
  const indexByScript = new Map(sources.map((s) => [parseUtxoAddress(format, s.address).key, s.index]));
  const txids = [...new Set(sources.flatMap((s) => s.txHashes.map((h) => h.toLowerCase())))];
  const candidates: UtxoCoin[] = [];
  for (const chunk of chunks(txids)) {
    const txs = await node.batch<VerboseTx>(chunk.map((txid) => ['getrawtransaction', [txid, true]]));
    for (const tx of txs) {
      for (const out of tx.vout) {
        const index = indexByScript.get(out.scriptPubKey.hex.toLowerCase());
        if (index === undefined) continue;
        candidates.push({ txid: tx.txid, vout: out.n, amountSats: BigInt(out.value), script: out.scriptPubKey.hex, index, rawTx: tx.hex });
      }
    }
  }
  const coins: UtxoCoin[] = [];
  for (const chunk of chunks(candidates)) {
    const unspent = await node.batch<object | null>(chunk.map((c) => ['gettxout', [c.txid, c.vout, true]]));
    chunk.forEach((c, i) => {
      if (unspent[i] !== null) coins.push(c);
    });
  }
  return coins;
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += BATCH) out.push(items.slice(i, i + BATCH));
  return out;
}

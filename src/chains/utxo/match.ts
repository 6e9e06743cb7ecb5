import type { Hit, WatchLookup, WatchRef } from '../family.js';
import { scriptKey } from './address.js';

export interface UtxoScript {
  hex: string;
  /** Bitcoin Core >= 22. */
  address?: string;
  /** Older nodes (and Litecoin/Dogecoin forks of them). */
  addresses?: string[];
}

export interface UtxoOutput {
  /** Satoshis as a decimal string (the node's 8-decimal coin amount, converted exactly). */
  value: string;
  n: number;
  scriptPubKey: UtxoScript;
}

export interface UtxoInput {
  txid?: string;
  vout?: number;
  coinbase?: string;
  /** The output this input spends: verbosity 3, or resolved by the chain adapter. */
  prevout?: { value: string; scriptPubKey: UtxoScript };
}

export interface UtxoTx {
  txid: string;
  vin: UtxoInput[];
  vout: UtxoOutput[];
}

interface Touch {
  watch: WatchRef;
  received: bigint;
  spent: bigint;
}

/**
 * The hits of one block's transactions. Per watch and transaction there is at most one event
 * per direction, with net amounts: what the address received (outputs to it) and what it
 * spent (inputs from it) are set against each other, so change sent back to the address is
 * not a payment. A transaction that spends from and pays to the watch gives a `payout` of
 * `spent - received` and an `other` hit `in` (amount 0) for the change; one that pays it more
 * than it spent (a payjoin, a consolidation with outside inputs) gives a `payment` of
 * `received - spent` and an `other` hit `out`. Each address is one Map lookup (by output
 * script), so the cost follows the block, not the watch list.
 */
export function matchUtxoBlock(registry: WatchLookup, envId: number, txs: readonly UtxoTx[]): Hit[] {
  const hits: Hit[] = [];
  for (const tx of txs) {
    let touched: Map<string, Touch> | undefined;
    const touch = (watches: WatchRef[], field: 'received' | 'spent', value: string) => {
      touched ??= new Map();
      for (const w of watches) {
        let t = touched.get(w.watchId);
        if (!t) touched.set(w.watchId, (t = { watch: w, received: 0n, spent: 0n }));
        t[field] += BigInt(value);
      }
    };
    for (const vin of tx.vin) {
      if (!vin.prevout) continue;
      const watches = registry.lookup(envId, scriptKey(vin.prevout.scriptPubKey.hex));
      if (watches) touch(watches, 'spent', vin.prevout.value);
    }
    for (const out of tx.vout) {
      const watches = registry.lookup(envId, scriptKey(out.scriptPubKey.hex));
      if (watches) touch(watches, 'received', out.value);
    }
    if (!touched) continue;
    for (const t of touched.values()) {
      const { watch, received, spent } = t;
      // The counterparty shown: the first input (payment) or output (payout) not the watch's own.
      const payer = spent > 0n ? watch.address : firstAddress(tx.vin.map((v) => v.prevout?.scriptPubKey), watch);
      const payee = firstAddress(tx.vout.map((v) => v.scriptPubKey), watch);
      const base = { watch, txHash: tx.txid, token: null, logIndex: null };
      if (received > spent) {
        hits.push({ ...base, type: 'payment', direction: 'in', from: spent > 0n ? watch.address : payer, to: watch.address, amount: (received - spent).toString() });
        if (spent > 0n) hits.push({ ...base, type: 'other', direction: 'out', from: watch.address, to: watch.address, amount: '0' });
      } else if (spent > received) {
        hits.push({ ...base, type: 'payout', direction: 'out', from: watch.address, to: payee, amount: (spent - received).toString() });
        if (received > 0n) hits.push({ ...base, type: 'other', direction: 'in', from: watch.address, to: watch.address, amount: '0' });
      } else {
        // Zero-value output to the address, or as much back as it spent (outside inputs paid the fee).
        if (spent > 0n) hits.push({ ...base, type: 'other', direction: 'out', from: watch.address, to: payee, amount: '0' });
        hits.push({ ...base, type: 'other', direction: 'in', from: payer, to: watch.address, amount: '0' });
      }
    }
  }
  return hits;
}

function firstAddress(scripts: ReadonlyArray<UtxoScript | undefined>, self: WatchRef): string | null {
  for (const s of scripts) {
    const a = s?.address ?? s?.addresses?.[0];
    if (a !== undefined && a !== self.address) return a;
  }
  return null;
}

/**
 * A node's coin amount (`0.00100000`, 8 decimals) as an integer string of satoshis, from the
 * number's source text: a double cannot hold every amount of a chain with Dogecoin's supply.
 */
export function satoshis(source: string): string {
  if (/e/i.test(source)) return BigInt(Math.round(Number(source) * 1e8)).toString();
  const negative = source.startsWith('-');
  const [whole = '0', frac = ''] = (negative ? source.slice(1) : source).split('.');
  if (frac.length > 8 && /[1-9]/.test(frac.slice(8))) throw new RangeError(`amount ${source} has more than 8 decimals`);
  const sats = BigInt(whole || '0') * 100_000_000n + BigInt(frac.padEnd(8, '0').slice(0, 8));
  return (negative ? -sats : sats).toString();
}

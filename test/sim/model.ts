import type { SimChain, SimTx } from './chain.js';

export type Status = 'pending' | 'seen' | 'underpaid' | 'aml_check' | 'paid' | 'failed' | 'expired';

/**
 * The reference model: what an order's status may be, as a function of the canonical chain
 * and the clock (docs/payments.md's table and decisions.md "Payment orders", issue 23's reorg
 * and finality rules). Written from the contract, not from the engine: it knows nothing of
 * funding rows, sightings or outboxes. The few facts of history the contract makes matter
 * (when the amount was first covered, which transfers the order has known) are kept here.
 */
export class OrderModel {
  /** When each funding transaction first sat in a canonical block (sim ms). */
  readonly firstSeen = new Map<string, number>();
  /** Funding the order has known (confirmed, or sighted in an unconfirmed block). */
  readonly known = new Set<string>();
  /** Known transactions that left the chain at least once. */
  readonly leftOnce = new Set<string>();
  /** How many times each transaction left the chain: each return is a new sighting, with a `seen` of its own. */
  readonly departures = new Map<string, number>();
  coverSince: number | undefined;
  /** A fork took away funding the order may already have let go of (final), or the address may be released: status unknowable. */
  relaxed = false;
  #maybeReleased = false;

  readonly address: string;
  readonly amount: bigint;
  readonly startHeight: number;
  readonly expiresMs: number;
  readonly confirmations: number;
  readonly finality: number;

  constructor(o: { address: string; amount: bigint; startHeight: number; expiresMs: number; confirmations: number; finality: number }) {
    this.address = o.address;
    this.amount = o.amount;
    this.startHeight = o.startHeight;
    this.expiresMs = o.expiresMs;
    this.confirmations = o.confirmations;
    this.finality = o.finality;
  }

  funding(chain: SimChain): Array<{ tx: SimTx; height: number }> {
    const out: Array<{ tx: SimTx; height: number }> = [];
    for (let h = this.startHeight; h <= chain.head; h++) for (const tx of chain.at(h)!.txs) if (tx.to === this.address) out.push({ tx, height: h });
    return out;
  }

  confirmedLine(chain: SimChain): number {
    return chain.head - Math.max(1, this.confirmations) + 1;
  }

  /** The chain as it is now (after a mine or a fork) at sim time `t`. */
  observe(chain: SimChain, t: number): void {
    const line = this.confirmedLine(chain);
    const f = this.funding(chain);
    const here = new Set(f.map((x) => x.tx.hash));
    for (const k of this.known) if (!here.has(k)) this.leftOnce.add(k);
    for (const { tx, height } of f) {
      if (!this.firstSeen.has(tx.hash)) {
        this.firstSeen.set(tx.hash, t);
        if (this.#maybeReleased) this.relaxed = true;
      }
      if (height <= line || this.confirmations > 1) this.known.add(tx.hash);
    }
    const total = this.total(chain);
    if (total >= this.amount) this.coverSince ??= t;
    else this.coverSince = undefined;
  }

  /** Before a fork of `depth` blocks: does it take away funding the order may have let go of as final? */
  beforeFork(chain: SimChain, depth: number): void {
    for (const { tx, height } of this.funding(chain)) {
      if (height > chain.head - depth && (chain.head - height + 1 >= this.finality || this.#maybeReleased)) this.relaxed = true;
      void tx;
    }
  }

  /** A fork took these transactions out of their blocks (a node may mine them again at once). */
  departed(hashes: readonly string[]): void {
    for (const h of hashes) this.departures.set(h, (this.departures.get(h) ?? 0) + 1);
  }

  total(chain: SimChain): bigint {
    const line = this.confirmedLine(chain);
    return this.funding(chain).filter((x) => x.height <= line).reduce((s, x) => s + x.tx.amount, 0n);
  }

  /** After the order settled at `t`: the statuses the contract allows. */
  allowed(chain: SimChain, t: number): Set<Status> {
    const line = this.confirmedLine(chain);
    const f = this.funding(chain);
    const total = this.total(chain);
    const tip = f.filter((x) => x.height > line);
    const inTime = t < this.expiresMs;
    const out = new Set<Status>();
    if (total >= this.amount) {
      const covering = f.filter((x) => x.height <= line);
      if (this.coverSince !== undefined && this.coverSince < this.expiresMs) out.add('paid');
      // Transfers in blocks before expiry cover it on their own (confirmed later, or more came after).
      else if (covering.filter((x) => (this.firstSeen.get(x.tx.hash) ?? Infinity) < this.expiresMs).reduce((s, x) => s + x.tx.amount, 0n) >= this.amount) out.add('paid').add('expired');
      else out.add('expired');
      // A transfer in a block not yet confirmed, to an order already expired: `seen`, late (the late window).
      if (!out.has('paid') || out.has('expired')) if (tip.length) out.add('seen');
    } else if (total > 0n) {
      out.add(inTime ? 'underpaid' : 'expired');
      if (tip.length) out.add('seen');
    } else if (tip.length) {
      out.add('seen');
      if (!inTime) out.add('expired');
      if (tip.some((x) => this.leftOnce.has(x.tx.hash))) out.add(inTime ? 'underpaid' : 'expired');
    } else if (this.known.size > 0) {
      out.add(inTime ? 'underpaid' : 'expired');
    } else {
      out.add(inTime ? 'pending' : 'expired');
    }
    return out;
  }

  /** After checking: a paid order whose funding is all final may let its address go. */
  settled(chain: SimChain, status: string): void {
    if (status !== 'paid') return;
    if (this.#maybeReleased) return;
    const line = this.confirmedLine(chain);
    const f = this.funding(chain);
    const final = f.filter((x) => x.height <= line);
    if (final.every((x) => chain.head - x.height + 1 >= this.finality)) {
      this.#maybeReleased = true;
      // A transfer still short of its confirmations when the watch went: the order never had it.
      if (f.some((x) => x.height > line)) this.relaxed = true;
    }
  }
}

/** docs/payments.md's state machine: may an order go `from` → `to` (with this webhook's reason and tx)? */
export function legal(from: Status, to: Status, reason: string | null): boolean {
  // Issue 23: a funding transaction that leaves the chain takes any order that had funds back.
  if (reason === 'reorg') return from !== 'pending' && (to === 'underpaid' || to === 'expired');
  switch (from) {
    case 'pending': return to === 'seen' || to === 'expired' || to === 'failed';
    case 'underpaid': return to === 'seen' || to === 'expired';
    case 'seen': return to === 'seen' || to === 'underpaid' || to === 'aml_check' || to === 'expired';
    case 'aml_check': return to === 'paid' || to === 'failed';
    case 'expired': return to === 'seen';
    case 'paid': case 'failed': return false;
  }
}

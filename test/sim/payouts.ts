import fc from 'fast-check';
import type { Config } from '../../src/config/index.js';
import { Finality } from '../../src/payments/holds.js';
import { createPayout } from '../../src/payouts/create.js';
import type { PayoutDeps } from '../../src/payouts/context.js';
import { complete, matchTransfers, releaseHeld, takeBack } from '../../src/payouts/tracking.js';
import { PAYOUT_TRANSITIONS } from '../../src/payouts/transition.js';
import { StaticRates } from '../../src/payments/rates.js';
import { createAccount, type CatalogPlan, type Environment, type Store } from '../../src/store/index.js';
import { EnvironmentChains } from '../../src/watch/chains.js';
import type { WatchRegistry } from '../../src/watch/registry.js';
import type { Scanner } from '../../src/watch/scanner.js';
import { getCursor } from '../../src/watch/record.js';
import type { PayoutStatus } from '../../src/wire/payouts.js';
import type { SimTx } from './chain.js';
import type { SimNode } from './nodes.js';

/** One step of a payout scenario: a transfer to a line (short, exact, over), blocks, a fork. */
export type PayoutOp =
  | { k: 'pay'; line: number; part: 'short' | 'exact' | 'over' }
  | { k: 'mine'; n: number }
  | { k: 'fork'; depth: number; fate: 'remine' | 'drop' | 'double' };

export interface PayoutScenario { lines: number; ops: PayoutOp[] }

const AMOUNT = 1_000_000n;

export function payoutScenarioArb(finality: number): fc.Arbitrary<PayoutScenario> {
  return fc.record({ lines: fc.integer({ min: 1, max: 3 }) }).chain(({ lines }) => fc.record({
    lines: fc.constant(lines),
    ops: fc.array(fc.oneof(
      { weight: 3, arbitrary: fc.record({ k: fc.constant('pay' as const), line: fc.integer({ min: 0, max: lines - 1 }), part: fc.constantFrom('short' as const, 'exact' as const, 'over' as const) }) },
      { weight: 4, arbitrary: fc.record({ k: fc.constant('mine' as const), n: fc.integer({ min: 1, max: 3 }) }) },
      { weight: 2, arbitrary: fc.record({ k: fc.constant('fork' as const), depth: fc.integer({ min: 1, max: finality }), fate: fc.constantFrom('remine' as const, 'drop' as const, 'double' as const) }) },
    ), { minLength: 1, maxLength: 10 }),
  }));
}

export class PayoutSimFailure extends Error {}

interface Hook { event: string; status: PayoutStatus; sequence: number; lifecycle: string; tx_hash: string | null; line: number }

/**
 * Payout lines tracked by the real payouts code (tracking.ts) over a simulated chain the
 * payments simulator's scanner records: after every step each line's webhooks follow the table
 * in order, a `sent`/`completed` line names a canonical transfer to its address of at least its
 * amount, no transfer pays two lines, `completed` only at a final height; at the end, with the
 * chain final, every line with a canonical matching transfer is completed exactly once more than
 * it was taken back from completed, and the others await payment.
 */
export class PayoutSim {
  readonly #deps: PayoutDeps;
  readonly #finality: Finality;
  #clock = Date.now();
  #n = 0;
  readonly o: { store: Store; config: Config; env: Environment; plan: CatalogPlan; node: SimNode; registry: () => WatchRegistry; scanner: () => Scanner };

  constructor(o: PayoutSim['o']) {
    this.o = o;
    this.#deps = {
      store: o.store, config: o.config, onDeliveries() {},
      watches: { added: async (r) => { o.registry().add(r); }, removed: (r) => o.registry().remove(r) },
    };
    this.#finality = new Finality(new EnvironmentChains(), () => {});
  }

  /**
   * Tracker and scanner passes until nothing moves. The tracker goes first: after a fork the
   * node is on the new chain before the scanner has rewound (as in a running service, where
   * either may tick first), and no line may complete then on a block the chain no longer has.
   */
  async #settle(payoutPk: number): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const before = await getCursor(this.o.store, this.o.env.id);
      // Past Finality's one-second cache: each pass asks the node's head anew.
      this.#clock += 2000;
      const completed = await this.#completed(payoutPk);
      let moved = await takeBack(this.#deps) + await matchTransfers(this.#deps) + await complete(this.#deps, this.#finality, this.#clock)
        + await releaseHeld(this.#deps, this.#finality, this.#clock);
      await this.#completedOnChain(payoutPk, completed);
      await this.o.scanner().step();
      moved += (await getCursor(this.o.store, this.o.env.id)) === before ? 0 : 1;
      if (moved === 0) return;
    }
    throw new PayoutSimFailure('the payouts never came to rest');
  }

  async #completed(payoutPk: number) {
    return this.o.store.db.selectFrom('payout_lines').select(['line_no', 'tx_hash', 'seq']).where('payout_pk', '=', payoutPk).where('status', '=', 'completed').execute();
  }

  /**
   * Every line the tracker just completed names a transfer in a block of the node's chain, at a
   * final height. (One completed before may be off it now, a fork as deep as the finality rule,
   * until the scanner rewinds.)
   */
  async #completedOnChain(payoutPk: number, before: Array<{ line_no: number; seq: number }>): Promise<void> {
    const chain = this.o.node.chain;
    const norm = (h: string) => h.toLowerCase().replace(/^0x/, '');
    const was = new Set(before.map((l) => `${l.line_no}:${l.seq}`));
    for (const l of (await this.#completed(payoutPk)).filter((c) => !was.has(`${c.line_no}:${c.seq}`))) {
      const at = chain.blocks.find((b) => b.txs.some((tx) => norm(tx.hash) === norm(l.tx_hash!)));
      if (!at) throw new PayoutSimFailure(`line ${l.line_no} completed by ${l.tx_hash}, which is in no block of the chain`);
      if (at.height > chain.head - this.o.node.finality + 1) throw new PayoutSimFailure(`line ${l.line_no} completed at ${at.height}, final is ${chain.head - this.o.node.finality + 1}`);
    }
  }

  async run(s: PayoutScenario): Promise<void> {
    const { node, store, env } = this.o;
    const chain = node.chain;
    const accountId = (await createAccount(store, { planId: this.o.plan.id })).id;
    const addresses = Array.from({ length: s.lines }, () => node.address());
    const payer = node.address();
    const decimals = ({ evm: 18, utxo: 8, tron: 6, stellar: 7 } as Record<string, number>)[node.family] ?? 9;
    const created = await createPayout({
      store, config: this.o.config, rates: new StaticRates(store.db, this.o.config.payments.rates), accountId, caller: { id: `key:sim${++this.#n}`, label: 'sim', role: 'owner' },
    }, { lines: addresses.map((a, i) => ({ network: env.network.slug, address: a.given, amount: (Number(AMOUNT) / 10 ** decimals).toFixed(decimals), reference: `line-${i}` })) });
    for (const w of created.watches) this.o.registry().add(w);
    const mempool: SimTx[] = [];
    // Forks reach only this scenario's blocks, and its addresses are new: its transfers are all above.
    const from = chain.head + 1;
    let mined = 0;
    const done: string[] = [];
    try {
      await this.#settle(created.payout.id);
      for (const op of s.ops) {
        done.push(JSON.stringify(op));
        if (op.k === 'pay') {
          const amount = op.part === 'short' ? AMOUNT - 1n : op.part === 'exact' ? AMOUNT : AMOUNT * 2n;
          mempool.push({ hash: chain.id('tx'), from: payer.wire, to: addresses[op.line]!.wire, amount });
        } else if (op.k === 'mine') {
          for (let i = 0; i < op.n; i++, mined++) chain.mine(i === 0 ? mempool.splice(0) : []);
        } else {
          const depth = Math.min(op.depth, mined);
          if (depth > 0) {
            const gone = chain.orphan(depth);
            mined -= depth;
            const first = op.fate === 'remine' ? gone : op.fate === 'double' ? gone.map((tx) => ({ ...tx, hash: chain.id('tx'), to: payer.wire })) : [];
            for (let i = 0; i <= depth; i++, mined++) chain.mine(i === 0 ? first : []);
          }
        }
        node.sync();
        await this.#settle(created.payout.id);
        await this.#check(created.payout.id, addresses.map((a) => a.wire), from, false);
      }
      // The chain goes final: nothing may stay sent.
      for (let i = 0; i < node.finality + node.confirmations + 1; i++) chain.mine(i === 0 ? mempool.splice(0) : []);
      node.sync();
      await this.#settle(created.payout.id);
      await this.#check(created.payout.id, addresses.map((a) => a.wire), from, true);
    } catch (err) {
      if (err instanceof PayoutSimFailure) err.message += `\n  scenario: ${JSON.stringify(s)}\n  after: ${done.join(' → ') || '(creation)'}`;
      throw err;
    }
  }

  async #check(payoutPk: number, wires: string[], from: number, final: boolean): Promise<void> {
    const { store, node } = this.o;
    const chain = node.chain;
    const norm = (h: string) => h.toLowerCase().replace(/^0x/, '');
    const lines = await store.db.selectFrom('payout_lines').selectAll().where('payout_pk', '=', payoutPk).orderBy('line_no').execute();
    const payout = await store.db.selectFrom('payouts').select('payout_id').where('id', '=', payoutPk).executeTakeFirstOrThrow();
    const used = new Set<string>();
    const finalHeight = chain.head - node.finality + 1;
    for (const [i, l] of lines.entries()) {
      const hooks = (await store.db.selectFrom('webhook_deliveries').select('body').where('sequence_key', '=', `${payout.payout_id}_${l.line_no}`).orderBy('id').execute())
        .map((r) => JSON.parse(r.body) as Hook);
      let at = 'awaiting_payment' as PayoutStatus;
      let path = 'awaiting_payment';
      // The first announces the state the line was created in (sequence 0), then one per move.
      if (hooks[0]?.status !== 'awaiting_payment' || hooks[0].sequence !== 0) throw new PayoutSimFailure(`line ${i + 1}: its first webhook is ${hooks[0]?.event} #${hooks[0]?.sequence}`);
      hooks.forEach((h, n) => {
        if (h.sequence !== n || h.status !== h.event.split('.')[1]) throw new PayoutSimFailure(`line ${i + 1}: webhook ${n + 1} is ${h.event} #${h.sequence}`);
        if (n === 0) return;
        if (!PAYOUT_TRANSITIONS[at].includes(h.status)) throw new PayoutSimFailure(`line ${i + 1}: illegal ${at} → ${h.status} (${path})`);
        at = h.status;
        path += `>${at}`;
        if (h.lifecycle !== path) throw new PayoutSimFailure(`line ${i + 1}: lifecycle ${h.lifecycle}, webhooks say ${path}`);
      });
      if (l.status !== at || l.seq !== hooks.length - 1) throw new PayoutSimFailure(`line ${i + 1} is ${l.status} #${l.seq}, its webhooks say ${at} #${hooks.length - 1}`);
      // The canonical transfers that would pay it.
      const paying = chain.blocks.slice(from - chain.first).flatMap((b) => b.txs.filter((tx) => tx.to === wires[i] && tx.amount >= AMOUNT).map((tx) => ({ tx, height: b.height })));
      const confirmedPaying = paying.filter((p) => p.height <= chain.head - node.confirmations + 1);
      if (l.status === 'sent' || l.status === 'completed') {
        const m = paying.find((p) => norm(p.tx.hash) === norm(l.tx_hash!));
        if (!m) throw new PayoutSimFailure(`line ${i + 1} is ${l.status} by ${l.tx_hash}, which is no canonical transfer of at least its amount to it`);
        if (used.has(m.tx.hash)) throw new PayoutSimFailure(`transfer ${m.tx.hash} pays two lines`);
        used.add(m.tx.hash);
        if (l.status === 'completed' && m.height > finalHeight) throw new PayoutSimFailure(`line ${i + 1} completed at ${m.height}, final is ${finalHeight}`);
      } else if (l.status === 'awaiting_payment' && final && confirmedPaying.length > 0) {
        throw new PayoutSimFailure(`line ${i + 1} awaits payment though ${confirmedPaying[0]!.tx.hash} paid it`);
      }
      if (final) {
        if (confirmedPaying.length > 0 && l.status !== 'completed') throw new PayoutSimFailure(`line ${i + 1} is ${l.status} on a final chain that paid it`);
        const completions = hooks.filter((h) => h.status === 'completed').length;
        const backs = hooks.filter((h, n) => h.status === 'awaiting_payment' && hooks[n - 1]?.status === 'completed').length;
        if (l.status === 'completed' && completions !== backs + 1) throw new PayoutSimFailure(`line ${i + 1} completed ${completions} times, taken back from completed ${backs}`);
      }
    }
  }
}

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { I23_PROPERTIES, scenarioArb, Sim, SimFailure, type Scenario } from './runner.js';
import { payoutScenarioArb } from './payouts.js';
import type { SimFamily } from './nodes.js';
import { testDatabaseUrl } from '../helpers/shared-stores.js';

/**
 * Payment orders proven on simulated chains (issue 23): per family, seeded scenarios of
 * payments, blocks, forks (to past the finality depth), re-mined, dropped and double-spent
 * transfers, expiry and restarts run through the real scanner, look-ahead and engine on a
 * real store (PostgreSQL when RPCCTL_TEST_DATABASE_URL is set), against the reference model
 * in test/sim/model.ts after every step. A failure prints its seed, fast-check's shrunk path
 * and the steps that lead to it. One test file a family (test/payments-sim-<family>.test.ts,
 * test/payouts-sim-<family>.test.ts), so vitest runs the families on different workers.
 *
 * Properties (SimFailure.property), checked after every step once the instance is at rest:
 * - sequence: webhooks numbered 1, 2, …; status = event; lifecycle = the joined statuses, and the
 *   order's own status/lifecycle/seq agree with its last webhook.
 * - legal: each webhook is an edge of docs/payments.md's table (a reorg edge only with reason
 *   "reorg"); a decision whose transaction's `seen` already went (look-ahead) counts as from `seen`.
 * - one-per-transition: no status twice in a row without a reorg (bar `seen` of another tx).
 * - one-seen: a transaction's second `seen` only after a reorg webhook.
 * - feed: no live event of a block off the canonical chain, no transaction twice.
 * - feed-complete: every canonical confirmed transfer to the address is a live event.
 * - received: amount_received_raw = the canonical confirmed funding.
 * - status: the order's status is one the model (test/sim/model.ts) allows.
 * The last three are waived once a fork went past the finality depth or the address of a paid
 * order with final funding may have been released (the model's `relaxed`).
 *
 * SIM_RUNS: scenarios per family (default 1000 on SQLite, 120 on PostgreSQL). SIM_SEED (and SIM_PATH): replay a
 * failure as printed (`{ seed, path }`); SIM_SEED=random: scenarios never run before (the default seed is fixed); SIM_SHRINK=off stops at the first failure unshrunk.
 *
 * SIM_REORG_RULES=off checks only what held before orders followed reorgs (the properties in
 * I23_PROPERTIES are then reported, not failed): to see what the simulator finds in older code.
 */
// PostgreSQL is about four times slower per scenario here: its CI pass (the same suites again)
// runs fewer (120 a family), the SQLite pass the full thousand.
const RUNS = Number(process.env.SIM_RUNS ?? (testDatabaseUrl ? 120 : 1000));
// The same scenarios on every run, so CI passes or fails on the code, not on luck; SIM_SEED=random
// explores new ones (a failure prints its seed to replay).
const SEED = process.env.SIM_SEED === 'random' ? undefined : Number(process.env.SIM_SEED ?? 20261126);
const PATH = process.env.SIM_PATH;
const REORG_RULES = process.env.SIM_REORG_RULES !== 'off';
/** SIM_ONLY=status,received: enforce only these properties (to find each one's own shortest failure). */
const ONLY = process.env.SIM_ONLY ? new Set(process.env.SIM_ONLY.split(',')) : undefined;

/**
 * Scenarios random seeds found failing, replayed on every run (the fixed seed does not reach them):
 * each failed on the code before its fix.
 */
const REGRESSIONS: Array<{ family: SimFamily; why: string; scenario: Scenario }> = [
  {
    family: 'utxo',
    why: 'a paid order taken back by a reorg after expires_at is an expired order: it keeps its address for the late window (seed 1563386015)',
    scenario: { ops: [{ k: 'pay', part: 'full' }, { k: 'mine', n: 3 }, { k: 'clock', to: 'expiry' }, { k: 'fork', depth: 3, fate: 'double', len: 0 }, { k: 'pay', part: 'partial' }, { k: 'restart' }, { k: 'mine', n: 2 }], order: 0 },
  },
  ...(['evm', 'utxo', 'tron'] as const).map((family) => ({
    family,
    why: 'a transfer seen in a block before expires_at, taken off unconfirmed by a reorg and mined again after it, is still in time (the brief\'s example)',
    scenario: { ops: [{ k: 'pay', part: 'over' }, { k: 'mine', n: 1 }, { k: 'pay', part: 'partial' }, { k: 'mine', n: 1 }, { k: 'clock', to: 'expiry' }, { k: 'fork', depth: 2, fate: 'remine', len: 0 }, { k: 'pay', part: 'partial' }], order: 0 } satisfies Scenario,
  })),
];

/** Wall and CPU seconds since `from` (this worker's CPU: the store, the engine and the fake node all run in it). */
function took(from: { ms: number; cpu: NodeJS.CpuUsage }): string {
  const cpu = process.cpuUsage(from.cpu);
  return `${((Date.now() - from.ms) / 1000).toFixed(1)} s (${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU)`;
}
const clock = () => ({ ms: Date.now(), cpu: process.cpuUsage() });

/** The payment orders simulation of one family, with its regression cases. */
export function paymentsSim(family: SimFamily): void {
  describe(`payment orders on a simulated ${family} chain`, () => {
    let sim: Sim;
    beforeAll(async () => { sim = await Sim.open(family); }, 60_000);
    afterAll(async () => { await sim?.close(); });

    for (const r of REGRESSIONS.filter((x) => x.family === family)) {
      it(`regression: ${r.why}`, async () => { await sim.run(r.scenario); }, 60_000);
    }

    it(`match the reference model after every step (${RUNS} scenarios)`, async () => {
      const started = clock();
      const tolerated = new Map<string, { count: number; example: string }>();
      const check = async (s: Scenario) => {
        try {
          await sim.run(s);
        } catch (err) {
          if (ONLY && err instanceof SimFailure && !ONLY.has(err.property)) return;
          if (!REORG_RULES && err instanceof SimFailure && (I23_PROPERTIES.has(err.property) || s.ops.some((o) => o.k === 'fork'))) {
            const key = s.ops.some((o) => o.k === 'fork') ? `${err.property} (with a fork)` : err.property;
            const seen = tolerated.get(key);
            tolerated.set(key, { count: (seen?.count ?? 0) + 1, example: seen?.example ?? `${err.message}\n  scenario: ${JSON.stringify(s)}` });
            return;
          }
          throw err;
        }
      };
      await fc.assert(fc.asyncProperty(scenarioArb(sim.node.finality), check), { numRuns: RUNS, seed: SEED, path: PATH, endOnFailure: process.env.SIM_SHRINK === 'off' });
      console.log(`payments-sim ${family}: ${RUNS} scenarios in ${took(started)}; ${[...sim.coverage].sort().map(([k, n]) => `${k}: ${n}`).join(', ')}`);
      for (const [p, v] of tolerated) console.log(`payments-sim ${family}: property ${p} fails in ${v.count} scenarios (SIM_REORG_RULES=off), e.g.\n${v.example}`);
      expect(sim.coverage.size).toBeGreaterThan(0);
    }, 900_000);
  });
}

/**
 * Payout lines (issue 34) on the same simulated chains: transfers short, exact and over the
 * line's amount, blocks and forks (re-mined, dropped, double-spent), tracked by the real
 * payouts code; the properties are in test/sim/payouts.ts (the table's moves in order, a sent
 * or completed line names a canonical transfer of at least its amount, no transfer pays two
 * lines, completed only when final, and once the chain is final every paid line completed once
 * more than it was taken back). PAYOUT_SIM_RUNS: scenarios per family (default 500 on SQLite,
 * 60 on PostgreSQL).
 */
const PAYOUT_RUNS = Number(process.env.PAYOUT_SIM_RUNS ?? (testDatabaseUrl ? 60 : 500));

export function payoutsSim(family: SimFamily): void {
  describe(`payouts on a simulated ${family} chain`, () => {
    let sim: Sim;
    beforeAll(async () => { sim = await Sim.open(family); }, 60_000);
    afterAll(async () => { await sim?.close(); });

    it(`lines tracked through reorgs hold their properties after every step (${PAYOUT_RUNS} scenarios)`, async () => {
      const payouts = sim.payouts();
      const started = clock();
      await fc.assert(fc.asyncProperty(payoutScenarioArb(sim.node.finality), (s) => payouts.run(s)), { numRuns: PAYOUT_RUNS, seed: SEED, path: PATH, endOnFailure: process.env.SIM_SHRINK === 'off' });
      console.log(`payouts-sim ${family}: ${PAYOUT_RUNS} scenarios in ${took(started)}`);
    }, 900_000);
  });
}

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { I23_PROPERTIES, scenarioArb, Sim, SimFailure, type Scenario } from './sim/runner.js';
import type { SimFamily } from './sim/nodes.js';
import { testDatabaseUrl } from './helpers/shared-stores.js';

/**
 * Payment orders proven on simulated chains (issue 23): per family, seeded scenarios of
 * payments, blocks, forks (to past the finality depth), re-mined, dropped and double-spent
 * transfers, expiry and restarts run through the real scanner, look-ahead and engine on a
 * real store (PostgreSQL when RPCCTL_TEST_DATABASE_URL is set), against the reference model
 * in test/sim/model.ts after every step. A failure prints its seed, fast-check's shrunk path
 * and the steps that lead to it.
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
 * SIM_RUNS: scenarios per family (default 1000 on SQLite, 250 on PostgreSQL). SIM_SEED (and SIM_PATH): replay a
 * failure as printed (`{ seed, path }`); SIM_SEED=random: scenarios never run before (the default seed is fixed); SIM_SHRINK=off stops at the first failure unshrunk.
 * SIM_FAMILIES: a comma list to run some families only.
 *
 * SIM_REORG_RULES=off checks only what held before orders followed reorgs (the properties in
 * I23_PROPERTIES are then reported, not failed): to see what the simulator finds in older code.
 */
// PostgreSQL is about four times slower per scenario here: its CI pass (the same suites again)
// runs fewer, the SQLite pass the full thousand.
const RUNS = Number(process.env.SIM_RUNS ?? (testDatabaseUrl ? 250 : 1000));
// The same scenarios on every run, so CI passes or fails on the code, not on luck; SIM_SEED=random
// explores new ones (a failure prints its seed to replay).
const SEED = process.env.SIM_SEED === 'random' ? undefined : Number(process.env.SIM_SEED ?? 20261126);
const PATH = process.env.SIM_PATH;
const FAMILIES = (process.env.SIM_FAMILIES ?? 'evm,utxo,tron,stellar').split(',') as SimFamily[];
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

const describe_ = (f: SimFamily) => (FAMILIES.includes(f) ? describe : describe.skip);

for (const family of ['evm', 'utxo', 'tron', 'stellar'] as const) {
  describe_(family)(`payment orders on a simulated ${family} chain`, () => {
    let sim: Sim;
    beforeAll(async () => { sim = await Sim.open(family); }, 60_000);
    afterAll(async () => { await sim?.close(); });

    for (const r of REGRESSIONS.filter((x) => x.family === family)) {
      it(`regression: ${r.why}`, async () => { await sim.run(r.scenario); }, 60_000);
    }

    it(`match the reference model after every step (${RUNS} scenarios)`, async () => {
      const started = Date.now();
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
      const ms = Date.now() - started;
      console.log(`payments-sim ${family}: ${RUNS} scenarios in ${(ms / 1000).toFixed(1)} s; ${[...sim.coverage].sort().map(([k, n]) => `${k}: ${n}`).join(', ')}`);
      for (const [p, v] of tolerated) console.log(`payments-sim ${family}: property ${p} fails in ${v.count} scenarios (SIM_REORG_RULES=off), e.g.\n${v.example}`);
      expect(ms).toBeGreaterThan(0);
    }, 900_000);
  });
}

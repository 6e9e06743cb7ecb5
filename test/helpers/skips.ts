import { appendFileSync } from 'node:fs';
import { basename } from 'node:path';
import { describe, it, type TestFunction } from 'vitest';

/**
 * The one way a test skips a part of itself: when what it needs is missing (PostgreSQL, Redis,
 * a toolchain, a kernel feature). Every skip is recorded with its reason, and `npm test` ends
 * with a line counting them by reason (skips-reporter.ts), so a laptop without PostgreSQL says
 * which parts it did not run instead of passing quietly. `test/skips.test.ts` fails on a bare
 * `.skip`/`.skipIf`/`.runIf` anywhere else.
 *
 * `why`: what is missing, as a reader should see it (`set RPCCTL_TEST_DATABASE_URL`,
 * `litecoind is not installed`); empty or undefined: nothing is missing, the part runs.
 */
export type Why = string | undefined | null | false;

/** Where this run's skips are written (set by the reporter before any test process starts). */
export const SKIP_LOG_ENV = 'RPCCTL_TEST_SKIP_LOG';

/** Records a skipped part (unless nothing is missing) and says whether it is skipped. */
export function skipping(why: Why, part: string): boolean {
  if (!why) return false;
  const log = process.env[SKIP_LOG_ENV];
  const file = basename(new Error().stack?.split('\n').find((l) => /\.test\.ts/.test(l))?.match(/([^/\s(]+\.test\.ts)/)?.[1] ?? 'unknown');
  if (log) appendFileSync(log, `${JSON.stringify({ file, part, why })}\n`);
  return true;
}

type SuiteFn = () => void;
type TestFn = TestFunction;

/** `describe(title, fn)`, skipped (and recorded) when `why` names something missing. */
export function describeUnless(why: Why, title: string, fn: SuiteFn): void {
  describe.skipIf(skipping(why, title))(title, fn);
}

/** `it(title, fn)`, skipped (and recorded) when `why` names something missing. */
export function itUnless(why: Why, title: string, fn: TestFn, timeout?: number): void {
  it.skipIf(skipping(why, title))(title, fn, timeout);
}

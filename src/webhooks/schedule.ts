/** Waits after failed attempts 1..8 (decisions.md); a ninth failure gives up. */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  10_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000,
];

/**
 * The wait after failed attempt `attempt` (1-based) with ±20 % jitter, so receivers that
 * come back are not hit by every queued delivery in the same second; undefined = give up.
 */
export function retryDelayMs(attempt: number, schedule: readonly number[] = RETRY_SCHEDULE_MS, random: () => number = Math.random): number | undefined {
  const base = schedule[attempt - 1];
  if (base === undefined) return undefined;
  return Math.round(base * (0.8 + random() * 0.4));
}

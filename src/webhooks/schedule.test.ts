import { describe, expect, it } from 'vitest';
import { RETRY_SCHEDULE_MS, retryDelayMs } from './schedule.js';

describe('retry schedule', () => {
  it('10 s, 1 m, 5 m, 30 m, 2 h, 6 h, 12 h, 24 h with ±20 % jitter, then give up', () => {
    expect(RETRY_SCHEDULE_MS.map((ms) => ms / 1000)).toEqual([10, 60, 300, 1800, 7200, 21600, 43200, 86400]);
    for (let a = 1; a <= 8; a++) {
      expect(retryDelayMs(a, RETRY_SCHEDULE_MS, () => 0)).toBe(Math.round(RETRY_SCHEDULE_MS[a - 1]! * 0.8));
      expect(retryDelayMs(a, RETRY_SCHEDULE_MS, () => 0.999999)).toBeLessThanOrEqual(RETRY_SCHEDULE_MS[a - 1]! * 1.2);
    }
    expect(retryDelayMs(9)).toBeUndefined();
  });

});

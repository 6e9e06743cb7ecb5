import { describe, expect, it } from 'vitest';
import { MemoryReplayCache } from './replay.js';

describe('replay cache', () => {
  it('takes a signature once until it expires, and forgets expired ones as it goes', () => {
    const c = new MemoryReplayCache();
    expect(c.claim('a', 1000, 0)).toBe(true);
    expect(c.claim('a', 1500, 500)).toBe(false);
    expect(c.claim('b', 1600, 600)).toBe(true);
    // Past a's expiry: a is swept, and may be used again.
    expect(c.claim('a', 2100, 1100)).toBe(true);
    expect(c.size).toBe(2);
    expect(c.claim('c', 5000, 4000)).toBe(true);
    expect(c.size).toBe(1);
  });
});

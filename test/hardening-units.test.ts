import { describe, expect, it } from 'vitest';
import { MemoryReplayCache } from '../src/limits/replay.js';
import { InvalidPathError, normaliseRestPath } from '../src/gateway/rest-path.js';
import { blockedReason } from '../src/webhooks/ssrf.js';

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

describe('REST path normalisation', () => {
  it('collapses empty segments, keeps a trailing slash and the query as sent', () => {
    expect(normaliseRestPath('')).toEqual({ path: '/', query: '' });
    expect(normaliseRestPath('?a=1')).toEqual({ path: '/', query: '?a=1' });
    expect(normaliseRestPath('//transactions')).toEqual({ path: '/transactions', query: '' });
    expect(normaliseRestPath('/ledgers//1/payments/?limit=2&x=..')).toEqual({ path: '/ledgers/1/payments/', query: '?limit=2&x=..' });
    expect(normaliseRestPath('/accounts/G%41BC')).toEqual({ path: '/accounts/G%41BC', query: '' });
  });
  it.each(['/..', '/a/../b', '/%2e', '/%2E%2e', '/%252e%252e', '/a%2fb', '/a%5Cb', '/a\\b', '/..;', '/a;b', '/%zz', '/%00', '/%EF%BC%8E%EF%BC%8E'])('%s is refused', (p) => {
    expect(() => normaliseRestPath(p)).toThrow(InvalidPathError);
  });
});

describe('SSRF special-purpose ranges (IANA registries via ipaddr.js)', () => {
  it.each([
    ['2001::1', 'teredo'], ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'], ['100::1', 'discard'], ['2001:2::1', 'benchmarking'],
    ['3fff::1', 'reserved'], ['2001:db8::1', 'reserved'], ['192.88.99.1', 'reserved'], ['192.0.2.1', 'reserved'], ['198.18.0.1', 'reserved'],
    ['192.31.196.1', 'as112'], ['2001:20::1', 'orchid2'], ['64:ff9b:1::1', 'rfc6052'], ['4000::1', 'reserved'], ['5f00::1', 'segmentRouting'],
  ])('%s is refused, allowed private or not (%s)', (ip, range) => {
    expect(blockedReason(ip, false)).toContain(range);
    expect(blockedReason(ip, true)).toContain(range);
  });
  it('site-local fec0::/10 is internal: refused unless private URLs are allowed', () => {
    expect(blockedReason('fec0::1', false)).toContain('private');
    expect(blockedReason('fec0::1', true)).toBeUndefined();
  });
});

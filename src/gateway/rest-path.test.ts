import { describe, expect, it } from 'vitest';
import { InvalidPathError, normaliseRestPath } from './rest-path.js';

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

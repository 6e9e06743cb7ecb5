import { describe, expect, it } from 'vitest';
import { HttpError } from '../../api/http.js';
import { validate } from '../../api/invoke.js';
import { allowedIpsBody } from '../../api/schemas.js';
import { allowlistMessage, readAllowlist } from './allowlist.js';

/** The API's own message for what was typed, as the cabinet shows it. */
function shown(text: string): string {
  const typed = readAllowlist(text);
  try {
    validate(allowedIpsBody, { allowed_ips: typed.entries });
  } catch (err) {
    if (err instanceof HttpError) return allowlistMessage(err.message, typed);
    throw err;
  }
  return 'ok';
}

describe('allowlist box', () => {
  it('reads one per line, and commas or spaces within a line, keeping each entry\'s line', () => {
    const typed = readAllowlist('203.0.113.7\r\n\n198.51.100.1, 2001:db8::1  10.0.0.1\n');
    expect(typed.entries).toEqual(['203.0.113.7', '198.51.100.1', '2001:db8::1', '10.0.0.1']);
    expect(typed.lines).toEqual([1, 3, 3, 3]);
    expect(readAllowlist(null).entries).toEqual([]);
  });

  it('names the API\'s 0-based entries by the line they were typed on, in words', () => {
    expect(shown('203.0.113.7\n10.0.0.0/8')).toBe('Line 2: 10.0.0.0/8 is not an IPv4 or IPv6 address (ranges are not supported)');
    expect(shown('\n\n203.0.113.7, nope')).toBe('Line 3: nope is not an IPv4 or IPv6 address');
    expect(shown('bad\n203.0.113.7\nworse')).toBe('Line 1: bad is not an IPv4 or IPv6 address. Line 3: worse is not an IPv4 or IPv6 address');
    expect(shown(`${'1'.repeat(46)}`)).toMatch(/^Line 1: 1{46} must be at most 45 characters/);
    expect(shown(Array.from({ length: 51 }, (_, i) => `10.0.0.${i}`).join('\n'))).toBe('At most 50 addresses (51 given)');
    expect(shown('203.0.113.7\n::1')).toBe('ok');
  });
});

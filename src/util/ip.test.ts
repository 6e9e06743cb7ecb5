import { describe, expect, it } from 'vitest';
import { IpAllowlist, isValidIp, normalizeIp, rateLimitKey } from './ip.js';

describe('ip helpers', () => {
  it('IPv6 clients are rate-limited by their /64, IPv4 by the address', () => {
    expect(rateLimitKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(rateLimitKey('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(rateLimitKey('2001:0db8:0001:0002::9')).toBe('2001:db8:1:2::/64');
    expect(rateLimitKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(rateLimitKey('::1')).toBe('0:0:0:0::/64');
    expect(rateLimitKey('2001:db8:1:3::1')).not.toBe(rateLimitKey('2001:db8:1:2::1'));
    expect(rateLimitKey('203.0.113.7')).toBe('203.0.113.7');
  });

  it('addresses only: no ranges, no zone ids', () => {
    expect(isValidIp('203.0.113.7')).toBe(true);
    expect(isValidIp('2001:db8::1')).toBe(true);
    expect(isValidIp('10.0.0.0/8')).toBe(false);
    expect(isValidIp('fe80::1%eth0')).toBe(false);
    expect(isValidIp('1.2.3.256')).toBe(false);
  });

  it('an allowlist matches however an address is written, and mapped IPv4 as IPv4', () => {
    const list = new IpAllowlist(['2001:DB8:0:0:0:0:0:1', '::ffff:192.0.2.5']);
    expect(list.allows('2001:db8::1')).toBe(true);
    expect(list.allows('192.0.2.5')).toBe(true);
    expect(list.allows('::ffff:192.0.2.5')).toBe(true);
    expect(list.allows('192.0.2.6')).toBe(false);
    expect(new IpAllowlist([]).allows('anything')).toBe(true);
    expect(normalizeIp('::ffff:10.0.0.1')).toBe('10.0.0.1');
  });
});

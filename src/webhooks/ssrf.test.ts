import { describe, expect, it } from 'vitest';
import { blockedReason } from './ssrf.js';

describe('SSRF rules', () => {
  it.each([
    ['127.0.0.1', false, 'loopback'], ['10.0.0.5', false, 'loopback'], ['172.20.1.1', false, 'private'], ['192.168.0.1', false, 'private'],
    ['169.254.10.10', false, 'link-local'], ['::1', false, 'loopback'], ['fe80::1', false, 'link-local'], ['fd12::1', false, 'private'],
    ['::ffff:127.0.0.1', false, 'loopback'], ['::ffff:7f00:1', false, 'loopback'], ['100.64.0.1', false, 'private'],
    ['169.254.169.254', true, 'metadata'], ['fd00:ec2::254', true, 'metadata'], ['0.0.0.0', true, 'routable'], ['224.0.0.1', true, 'routable'],
  ])('%s is refused (allow_private=%s)', (ip, allowPrivate, word) => {
    expect(blockedReason(ip, allowPrivate)).toContain(word);
  });
  // IPv6 forms that carry an IPv4 address the packet ends up at: judged as that address.
  it.each([
    ['::7f00:1', 'loopback', 'IPv4-compatible'], ['::127.0.0.1', 'loopback', 'IPv4-compatible'],
    ['::a00:5', 'private', 'IPv4-compatible'], ['::ffff:0:7f00:1', 'loopback', 'SIIT'], ['::ffff:0:10.0.0.5', 'private', 'SIIT'],
    ['64:ff9b::7f00:1', 'loopback', 'NAT64'], ['64:ff9b::10.1.2.3', 'private', 'NAT64'],
    ['2002:7f00:1::', 'loopback', '6to4'], ['2002:c0a8:101::1', 'private', '6to4'],
  ])('%s is refused unless private URLs are allowed (%s, %s)', (ip, word) => {
    expect(blockedReason(ip, false)).toContain(word);
    expect(blockedReason(ip, true)).toBeUndefined();
  });
  it.each([
    ['::a9fe:a9fe', 'metadata'], ['::169.254.169.254', 'metadata'], ['::ffff:0:a9fe:a9fe', 'metadata'], ['::ffff:a9fe:a9fe', 'metadata'],
    ['64:ff9b::a9fe:a9fe', 'metadata'], ['64:ff9b::100.100.100.200', 'metadata'], ['2002:a9fe:a9fe::1', 'metadata'],
    ['::e000:1', 'routable'], ['64:ff9b::', 'routable'], ['2002:e000:1::', 'routable'], ['2002::', 'routable'],
  ])('%s is always refused (%s)', (ip, word) => {
    expect(blockedReason(ip, false)).toContain(word);
    expect(blockedReason(ip, true)).toContain(word);
  });
  it('6to4 of a public IPv4 passes; NAT64 stays internal; :: and ::1 keep their IPv6 meaning', () => {
    expect(blockedReason('2002:5db8:d822::1', false)).toBeUndefined();
    expect(blockedReason('64:ff9b::5db8:d822', false)).toContain('private');
    expect(blockedReason('64:ff9b::5db8:d822', true)).toBeUndefined();
    expect(blockedReason('::1', true)).toBeUndefined();
    expect(blockedReason('::', true)).toContain('routable');
  });
  it('public addresses pass; private ones pass when allowed', () => {
    expect(blockedReason('93.184.216.34', false)).toBeUndefined();
    expect(blockedReason('2606:2800:220:1::1', false)).toBeUndefined();
    expect(blockedReason('127.0.0.1', true)).toBeUndefined();
    expect(blockedReason('10.1.1.1', true)).toBeUndefined();
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

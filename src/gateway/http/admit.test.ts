import { describe, expect, it } from 'vitest';
import { stepEndpoint } from '../../../test/helpers/gateway-steps.js';
import { closedTo } from './admit.js';

describe('closedTo: whether an endpoint takes calls from an address', () => {
  it('an open endpoint without an allowlist takes every address', () => {
    expect(closedTo(stepEndpoint(), '203.0.113.9')).toBeUndefined();
    expect(closedTo(stepEndpoint(), '::1')).toBeUndefined();
  });

  it('a paused endpoint takes nobody, allowed or not', () => {
    expect(closedTo(stepEndpoint({ paused: true }), '203.0.113.9')).toBe('paused');
    expect(closedTo(stepEndpoint({ paused: true, allowedIps: ['203.0.113.9'] }), '203.0.113.9')).toBe('paused');
  });

  it('an allowlist admits its addresses (IPv4-mapped IPv6 as the IPv4) and refuses the rest', () => {
    const ep = stepEndpoint({ allowedIps: ['203.0.113.9', '2001:db8::1'] });
    expect(closedTo(ep, '203.0.113.9')).toBeUndefined();
    expect(closedTo(ep, '::ffff:203.0.113.9')).toBeUndefined();
    expect(closedTo(ep, '2001:db8::1')).toBeUndefined();
    expect(closedTo(ep, '203.0.113.10')).toBe('ipNotAllowed');
    expect(closedTo(ep, '2001:db8::2')).toBe('ipNotAllowed');
  });
});

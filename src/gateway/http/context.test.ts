import { describe, expect, it } from 'vitest';
import { stepEndpoint, stepWorld } from '../../../test/helpers/gateway-steps.js';
import type { WindowLimiter } from '../../limits/index.js';
import { rpsWindow } from './context.js';

describe('the gateway context', () => {
  it('is built from config: the Host prefix checked, the trusted proxies, the body caps', () => {
    const { cx } = stepWorld({ gateway: { host_prefix: 'node', trusted_proxies: ['10.0.0.1'], max_body_bytes: 4096 } });
    expect(cx.hostPrefix).toBe('node-');
    expect(cx.trusted.allows('10.0.0.1')).toBe(true);
    expect(cx.trusted.allows('10.0.0.2')).toBe(false);
    expect(cx.g.max_body_bytes).toBe(4096);
  });

  it('counts RPS in this machine\'s windows without a shared limiter', () => {
    const asked: number[] = [];
    const take = rpsWindow(undefined, (_ep, cost) => { asked.push(cost); return cost - 1; });
    expect(take(stepEndpoint(), 3)).toBe(2);
    expect(asked).toEqual([3]);
  });

  it('counts RPS in the shared limiter by the endpoint\'s id and limit, never its UUID (a credential)', async () => {
    const asked: unknown[][] = [];
    const shared = { admit: async (...args: unknown[]) => { asked.push(args); return 1; } } as unknown as WindowLimiter;
    const ep = stepEndpoint({ id: 42, rpsLimit: 25 });
    const take = rpsWindow(shared, () => { throw new Error('the local window is not asked'); });
    expect(await take(ep, 4)).toBe(1);
    expect(asked).toEqual([['42', 25, 4]]);
    expect(JSON.stringify(asked)).not.toContain(ep.uuid);
  });
});

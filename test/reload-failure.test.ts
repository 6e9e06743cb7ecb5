import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.js';

/**
 * A reload whose last step fails (the gateway reads every endpoint from the store: an outage,
 * a busy SQLite) is a refused reload with its reason, and the next SIGHUP reloads again.
 * Before, the failure rejected the chain every later reload waits on: each was refused unread,
 * and the SIGHUP handler's unhandled rejection stopped the process.
 */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

describe('config reload: a failing step', () => {
  it('is refused with its reason; the next reload runs and gives the gateway the config it missed', async () => {
    const file = join(svc.dataDir, 'config.json');
    const config = JSON.parse(readFileSync(file, 'utf8')) as { limits?: Record<string, unknown> };
    config.limits = { ...config.limits, api_rps_per_ip: 4321 };
    writeFileSync(file, JSON.stringify(config));
    const gateway = svc.service.gateway;
    const real = gateway.reload.bind(gateway);
    let calls = 0;
    gateway.reload = async () => {
      calls++;
      if (calls === 1) throw new Error('store unreachable (test)');
      return real();
    };
    try {
      await expect(svc.service.reload()).resolves.toEqual({ ok: false, reason: expect.stringContaining('store unreachable (test)') });
      // Nothing changed since (the config is applied in memory), yet the gateway is asked again.
      await expect(svc.service.reload()).resolves.toEqual({ ok: true, changed: [] });
      expect(calls).toBe(2);
      await expect(svc.service.reload()).resolves.toEqual({ ok: true, changed: [] });
      expect(calls).toBe(2);
    } finally {
      gateway.reload = real;
    }
  });
});

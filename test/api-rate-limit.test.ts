import { afterEach, describe, expect, it } from 'vitest';
import { createApiKey } from '../src/store/index.js';
import { rawCall, signedCall, startTestService, type TestService } from './helpers/service.js';

let t: TestService | undefined;
afterEach(async () => { await t?.stop(); t = undefined; });

/** Starts right after a second boundary, so a burst lands in one per-second window. */
async function atSecondStart() {
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 5));
}

describe('Public API rate limits', () => {
  it('per client address: over api_rps_per_ip in one second -> 429 with Retry-After', async () => {
    t = await startTestService({ limits: { api_rps_per_ip: 5 } });
    const m = await t.merchant();
    await atSecondStart();
    const results = await Promise.all(Array.from({ length: 8 }, () => m.call('GET', '/v1/account')));
    const limited = results.filter((r) => r.status === 429);
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(limited).toHaveLength(3);
    expect(limited[0]!.body).toEqual({ ok: false, error: 'Rate limit exceeded' });
    expect(Number(limited[0]!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Unsigned and unknown routes count too: the limit protects the process, not an account.
    expect((await rawCall(t.baseUrl, 'GET', '/v1/openapi.json')).status).toBe(429);
    await new Promise((r) => setTimeout(r, 1000));
    expect((await m.call('GET', '/v1/account')).status).toBe(200);
  });

  it('per account, all keys together: over api_rpm_per_account in a minute -> 429', async () => {
    t = await startTestService({ limits: { api_rpm_per_account: 4 } });
    const a = await t.merchant();
    const other = await t.merchant();
    // Align away from a minute boundary so all calls share one window.
    if (Date.now() % 60_000 > 55_000) await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 10));
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await a.call('GET', '/v1/endpoints')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    // A second key of the same account shares the window.
    const second = await createApiKey(t.store, { accountId: a.userId });
    expect((await signedCall(t.baseUrl, second.api_key, second.secret, 'GET', '/v1/account')).status).toBe(429);
    const limited = await a.call('GET', '/v1/account');
    expect(limited.body).toEqual({ ok: false, error: 'Rate limit exceeded' });
    const retry = Number(limited.headers['retry-after']);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    // Another account is unaffected.
    expect((await other.call('GET', '/v1/account')).status).toBe(200);
  });
});

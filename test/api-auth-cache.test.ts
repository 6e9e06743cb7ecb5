import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeAccountKey, setAccountPlan, setKeyAllowedIps, updateEndpointRow } from '../src/store/index.js';
import { startTestService, storeUrlOf, type TestService } from './helpers/service.js';

// The signed API keeps keys, accounts and endpoint listings in memory; these are the changes
// that must reach it, from this process and from `rpcctl admin` in another one.

const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
let t: TestService;

/** `rpcctl admin ...` as its own process on the service's store (its PostgreSQL schema, when the suite runs there). */
async function admin(...args: string[]) {
  const url = storeUrlOf(t.dataDir);
  const r = await execa(process.execPath, [bin, 'admin', ...args, '--json', '--data-dir', t.dataDir, ...(url ? ['--database', url] : [])],
    { reject: false, env: { NO_COLOR: '1', RPCCTL_MASTER_KEY: '', RPCCTL_DATABASE_URL: '' } });
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

/**
 * Another process's change reaches the API within 100 ms on SQLite (`PRAGMA data_version`),
 * within the check interval (1 s) on PostgreSQL, sooner when its NOTIFY arrives. Reads for up
 * to twice that.
 */
async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const until = Date.now() + (storeUrlOf(t.dataDir) ? 2000 : 200);
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => { t = await startTestService(); });
afterAll(() => t?.stop());

describe('API key cache, changes made in this process', () => {
  it('a revoked key fails on the very next request', async () => {
    const m = await t.merchant();
    expect((await m.call('GET', '/v1/account')).status).toBe(200);
    await revokeAccountKey(t.store, m.userId, m.apiKey);
    expect((await m.call('GET', '/v1/account')).body).toEqual({ ok: false, error: 'Invalid API key' });
  });

  it('an allowlist change applies to the next request', async () => {
    const m = await t.merchant();
    expect((await m.call('GET', '/v1/account')).status).toBe(200);
    await setKeyAllowedIps(t.store, m.userId, m.apiKey, ['203.0.113.9']);
    expect((await m.call('GET', '/v1/account')).status).toBe(403);
    await setKeyAllowedIps(t.store, m.userId, m.apiKey, []);
    expect((await m.call('GET', '/v1/account')).status).toBe(200);
  });

  it('a plan change shows in the next answer, and in the endpoint listing', async () => {
    const m = await t.merchant({ plan: 'pro' });
    await m.call('POST', '/v1/endpoints', '{"name":"a","network_environment_id":1}');
    const pro = t.store.catalog.planBySlug('pro')!;
    const basic = t.store.catalog.planBySlug('basic')!;
    expect((await m.call('GET', '/v1/account')).body.plan.slug).toBe('pro');
    expect((await m.call('GET', '/v1/endpoints')).body.endpoints[0].rps_limit).toBe(pro.rps_limit);
    await setAccountPlan(t.store, m.userId, basic.id);
    expect((await m.call('GET', '/v1/account')).body.plan.slug).toBe('basic');
    expect((await m.call('GET', '/v1/endpoints')).body.endpoints[0].rps_limit).toBe(basic.rps_limit);
  });

  it('the endpoint listing follows creates, pauses and renames at once', async () => {
    const m = await t.merchant({ plan: 'pro' });
    expect((await m.call('GET', '/v1/endpoints')).body.endpoints).toEqual([]);
    const { endpoint } = (await m.call('POST', '/v1/endpoints', '{"name":"a","network_environment_id":1}')).body;
    expect((await m.call('GET', '/v1/endpoints')).body.endpoints.map((e: { id: number }) => e.id)).toEqual([endpoint.id]);
    await m.call('PATCH', `/v1/endpoints/${endpoint.id}/status`, '{"status":"paused"}');
    expect((await m.call('GET', '/v1/endpoints')).body.endpoints[0].status).toBe('paused');
    await updateEndpointRow(t.store, m.userId, endpoint.id, { name: 'renamed' });
    expect((await m.call('GET', '/v1/endpoints')).body.endpoints[0].name).toBe('renamed');
  });
});

describe('API key cache, changes made by `rpcctl admin` in another process', () => {
  it('a key revoked by admin stops working', async () => {
    const m = await t.merchant();
    expect((await m.call('GET', '/v1/account')).status).toBe(200);
    await admin('keys', 'revoke', m.apiKey, '--yes');
    const r = await eventually(() => m.call('GET', '/v1/account'), (r) => r.status === 401);
    expect(r.body).toEqual({ ok: false, error: 'Invalid API key' });
  });

  it('a plan changed by admin shows', async () => {
    const m = await t.merchant({ plan: 'pro' });
    expect((await m.call('GET', '/v1/account')).body.plan.slug).toBe('pro');
    await admin('accounts', 'set-plan', String(m.userId), '--plan', 'basic');
    const r = await eventually(() => m.call('GET', '/v1/account'), (r) => r.body.plan?.slug === 'basic');
    expect(r.body.plan.slug).toBe('basic');
  });

  it('a key rotated by admin: the new one works at once, the old one stops', async () => {
    const m = await t.merchant();
    const { api_key, secret } = await admin('keys', 'create', '--account', String(m.userId));
    const { signedCall } = await import('./helpers/service.js');
    await admin('keys', 'revoke', m.apiKey, '--yes');
    const fresh = await eventually(() => signedCall(t.baseUrl, api_key, secret, 'GET', '/v1/account'), (r) => r.status === 200);
    expect(fresh.body.user_id).toBe(m.userId);
    expect((await eventually(() => m.call('GET', '/v1/account'), (r) => r.status === 401)).status).toBe(401);
  });
});

import { afterAll, describe, expect, it } from 'vitest';
import { signatureHeaders } from '../src/client/signing.js';
import { dropTestSchema, rawCall, startTestService, type TestService } from './helpers/service.js';
import { freshRedisPrefix, testDatabaseUrl, testRedisUrl } from './helpers/shared-stores.js';
import { describeUnless } from './helpers/skips.js';

// Two instances of one deployment: one PostgreSQL schema, one Redis prefix.
const why = !testDatabaseUrl || !testRedisUrl ? 'RPCCTL_TEST_DATABASE_URL and RPCCTL_TEST_REDIS_URL are not both set (multi-instance mode needs both)' : undefined;

let a: TestService | undefined;
let b: TestService | undefined;
afterAll(async () => {
  await b?.stop();
  await a?.stop();
  if (a) await dropTestSchema(a.dataDir);
});

describeUnless(why, 'replay protection across instances', () => {
  it('a captured mutating request is refused by every instance, not only the one that saw it', async () => {
    const networks = [{ slug: 'anvil', name: 'Anvil', family: 'evm' as const, environments: [{ slug: 'local', upstreams: ['http://127.0.0.1:9'] }], credits: { default: 1, methods: {} } }];
    const redis = { url: testRedisUrl!, key_prefix: freshRedisPrefix() };
    a = await startTestService({ networks, redis }, { keepDataDir: true });
    b = await startTestService({ networks, redis }, { dataDir: a.dataDir, keepDataDir: true });
    const m = await a.merchant({ plan: 'pro' });
    const body = JSON.stringify({ name: 'replayed', network_slug: 'anvil', env_slug: 'local' });
    const h = { ...signatureHeaders({ apiKey: m.apiKey, secret: m.secret, method: 'POST', path: '/v1/endpoints', body }), 'content-type': 'application/json' };
    expect((await rawCall(a.baseUrl, 'POST', '/v1/endpoints', body, h)).status).toBe(200);
    expect((await rawCall(a.baseUrl, 'POST', '/v1/endpoints', body, h)).status).toBe(401);
    const other = await rawCall(b.baseUrl, 'POST', '/v1/endpoints', body, h);
    expect(other.status).toBe(401);
    expect(other.body).toEqual({ ok: false, error: 'Invalid signature.' });
    expect(other.headers['x-rpcctl-reason']).toBe('replayed');
    // GETs stay replayable on either instance.
    const get = signatureHeaders({ apiKey: m.apiKey, secret: m.secret, method: 'GET', path: '/v1/endpoints', body: '' });
    expect((await rawCall(a.baseUrl, 'GET', '/v1/endpoints', '', get)).status).toBe(200);
    expect((await rawCall(b.baseUrl, 'GET', '/v1/endpoints', '', get)).status).toBe(200);
  }, 60_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sign } from '../src/client/index.js';
import { revokeApiKey } from '../src/store/index.js';
import { rawCall, startTestService, type Merchant, type TestService } from './helpers/service.js';

let t: TestService;
let m: Merchant;

beforeAll(async () => {
  t = await startTestService({ api: { trusted_proxies: ['127.0.0.2'] } });
  m = await t.merchant();
});
afterAll(() => t.stop());

const now = () => Math.floor(Date.now() / 1000);

function headersFor(opts: { key?: string; ts?: number | string; secret?: string; method?: string; path?: string; body?: string; omit?: string[] } = {}) {
  const ts = opts.ts ?? now();
  const h: Record<string, string> = {
    'x-api-key': opts.key ?? m.apiKey,
    'x-timestamp': String(ts),
    'x-signature': sign({ secret: opts.secret ?? m.secret, timestamp: ts, method: opts.method ?? 'GET', path: opts.path ?? '/v1/account', body: opts.body ?? '' }),
  };
  for (const k of opts.omit ?? []) delete h[k];
  return h;
}

describe('Public API authentication', () => {
  it('accepts a correctly signed request', async () => {
    const r = await rawCall(t.baseUrl, 'GET', '/v1/account', '', headersFor());
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, user_id: m.userId });
  });

  it.each([
    ['x-api-key', 'Missing X-Api-Key'],
    ['x-timestamp', 'Missing or invalid X-Timestamp'],
    ['x-signature', 'Missing X-Signature'],
  ])('without %s: 401 "%s"', async (header, error) => {
    const r = await rawCall(t.baseUrl, 'GET', '/v1/account', '', headersFor({ omit: [header] }));
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ ok: false, error });
  });

  it('unknown key: 401 "Invalid API key"', async () => {
    const r = await rawCall(t.baseUrl, 'GET', '/v1/account', '', headersFor({ key: '00000000-0000-4000-8000-000000000000' }));
    expect(r).toMatchObject({ status: 401, body: { ok: false, error: 'Invalid API key' } });
  });

  it('wrong secret, wrong path or wrong body: 401 "Invalid signature."', async () => {
    for (const h of [headersFor({ secret: 'nope' }), headersFor({ path: '/v1/endpoints' }), headersFor({ method: 'POST' })]) {
      const r = await rawCall(t.baseUrl, 'GET', '/v1/account', '', h);
      expect(r).toMatchObject({ status: 401, body: { ok: false, error: 'Invalid signature.' } });
    }
    const body = '{"status":"paused"}';
    const r = await rawCall(t.baseUrl, 'PATCH', '/v1/endpoints/1/status', `${body} `, {
      ...headersFor({ method: 'PATCH', path: '/v1/endpoints/1/status', body }), 'content-type': 'application/json',
    });
    expect(r.body.error).toBe('Invalid signature.');
  });

  it('the query string is not signed', async () => {
    const r = await rawCall(t.baseUrl, 'GET', '/v1/endpoints/usage?days=7', '', headersFor({ path: '/v1/endpoints/usage' }));
    expect(r.status).toBe(200);
    expect(r.body.usage.days).toBe(7);
  });

  it('timestamps: 300 s either way pass, 301 s and junk fail', async () => {
    // Early in a second, so the server reads the clock in the same second as the test.
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 5));
    for (const skew of [-300, 300]) {
      expect((await rawCall(t.baseUrl, 'GET', '/v1/account', '', headersFor({ ts: now() + skew }))).status).toBe(200);
    }
    for (const ts of [now() - 301, now() + 301, 'abc', '', '1e9']) {
      const r = await rawCall(t.baseUrl, 'GET', '/v1/account', '', headersFor({ ts }));
      expect(r).toMatchObject({ status: 401, body: { ok: false, error: 'Missing or invalid X-Timestamp' } });
    }
  });

  it('a key with an IP allowlist: 403 "IP address not allowed." from elsewhere, 200 from a listed address', async () => {
    const elsewhere = await t.merchant({ allowedIps: ['203.0.113.7'] });
    const denied = await elsewhere.call('GET', '/v1/account');
    expect(denied).toMatchObject({ status: 403, body: { ok: false, error: 'IP address not allowed.' } });

    const local = await t.merchant({ allowedIps: ['2001:db8::1', '127.0.0.1'] });
    expect((await local.call('GET', '/v1/account')).status).toBe(200);
  });

  it('X-Forwarded-For counts only from a trusted proxy', async () => {
    const behindProxy = await t.merchant({ allowedIps: ['198.51.100.4'] });
    // 127.0.0.1 is not a trusted proxy here, so its X-Forwarded-For is ignored.
    const spoofed = await behindProxy.call('GET', '/v1/account', '', { 'x-forwarded-for': '198.51.100.4' });
    expect(spoofed.status).toBe(403);
  });

  it('a revoked key stops working within the key cache time', async () => {
    const doomed = await t.merchant();
    expect((await doomed.call('GET', '/v1/account')).status).toBe(200);
    await revokeApiKey(t.store, doomed.apiKey);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await doomed.call('GET', '/v1/account')).body).toEqual({ ok: false, error: 'Invalid API key' });
  });

  it('an exact replay keeps the spec\'s 401 "Invalid signature." and says X-Rpcctl-Reason: replayed; a wrong signature says bad_signature', async () => {
    // A developer seeing "Invalid signature." on a retry hunted a signing bug; the header tells the two apart.
    const body = '{"name":"replay-me","network_slug":"eth","env_slug":"mainnet"}';
    const headers = { ...headersFor({ method: 'POST', path: '/v1/endpoints', body }), 'content-type': 'application/json' };
    const first = await rawCall(t.baseUrl, 'POST', '/v1/endpoints', body, headers);
    expect(first.status).toBe(200);
    expect(first.headers['x-rpcctl-reason']).toBeUndefined();
    const again = await rawCall(t.baseUrl, 'POST', '/v1/endpoints', body, headers);
    expect(again).toMatchObject({ status: 401, body: { ok: false, error: 'Invalid signature.' } });
    expect(again.headers['x-rpcctl-reason']).toBe('replayed');
    const wrong = await rawCall(t.baseUrl, 'POST', '/v1/endpoints', body, { ...headersFor({ method: 'POST', path: '/v1/endpoints', body, secret: 'nope' }), 'content-type': 'application/json' });
    expect(wrong).toMatchObject({ status: 401, body: { ok: false, error: 'Invalid signature.' } });
    expect(wrong.headers['x-rpcctl-reason']).toBe('bad_signature');
    // Signed afresh (the next second's timestamp), the same request is taken: past authentication,
    // it meets the name the first one made (names are unique within an account), so the replay
    // attempts made no endpoint.
    const ts = now() + 1;
    const fresh = await rawCall(t.baseUrl, 'POST', '/v1/endpoints', body, { ...headersFor({ method: 'POST', path: '/v1/endpoints', body, ts }), 'content-type': 'application/json' });
    expect(fresh.status).toBe(409);
    expect(fresh.headers['x-rpcctl-reason']).toBeUndefined();
    const names = ((await m.call('GET', '/v1/endpoints')).body.endpoints as Array<{ name: string }>).filter((e) => e.name === 'replay-me');
    expect(names).toHaveLength(1);
  });

  it('every other authentication failure names its reason too', async () => {
    const reason = async (h: Record<string, string>) => (await rawCall(t.baseUrl, 'GET', '/v1/account', '', h)).headers['x-rpcctl-reason'];
    expect(await reason(headersFor({ omit: ['x-api-key'] }))).toBe('missing_key');
    expect(await reason(headersFor({ key: '00000000-0000-4000-8000-000000000000' }))).toBe('invalid_key');
    expect(await reason(headersFor({ ts: 'abc' }))).toBe('bad_timestamp');
    expect(await reason(headersFor({ omit: ['x-timestamp'] }))).toBe('bad_timestamp');
    expect(await reason(headersFor({ ts: now() - 1000 }))).toBe('expired_timestamp');
    expect(await reason(headersFor({ omit: ['x-signature'] }))).toBe('missing_signature');
    const elsewhere = await t.merchant({ allowedIps: ['203.0.113.7'] });
    expect((await elsewhere.call('GET', '/v1/account')).headers['x-rpcctl-reason']).toBe('ip_not_allowed');
    // The document declares the header on every 401 and 403, with these values.
    const doc = (await rawCall(t.baseUrl, 'GET', '/v1/openapi.json')).body;
    expect(doc.paths['/v1/endpoints'].post.responses['401'].headers['X-Rpcctl-Reason'].schema.enum).toEqual(
      ['missing_key', 'invalid_key', 'bad_timestamp', 'expired_timestamp', 'missing_signature', 'bad_signature', 'replayed']);
    expect(doc.paths['/v1/endpoints'].post.responses['403'].headers['X-Rpcctl-Reason'].schema.enum).toEqual(['ip_not_allowed']);
  });

  it('GET /v1/openapi.json needs no signature', async () => {
    const r = await rawCall(t.baseUrl, 'GET', '/v1/openapi.json');
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
  });
});

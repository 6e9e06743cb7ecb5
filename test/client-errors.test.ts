import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, ApiError } from '../src/client/index.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

// The TypeScript client's codes for a non-2xx answer, the same names as the Python, PHP and Go
// libraries use (their own suites check them): a 404 once came back as the generic E_API.
let t: TestService;
let m: Merchant;
const clients: ApiClient[] = [];

beforeAll(async () => {
  t = await startTestService({ limits: { api_rpm_per_account: 20 } });
  m = await t.merchant();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await t.stop();
});

function client(opts: { secret?: string; now?: () => number; slept?: number[] } = {}): ApiClient {
  const c = new ApiClient({
    baseUrl: t.baseUrl, apiKey: m.apiKey, secret: opts.secret ?? m.secret, maxRetries: 0, now: opts.now,
    sleep: async (ms) => { opts.slept?.push(ms); },
  });
  clients.push(c);
  return c;
}

async function failure(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('TypeScript client error codes', () => {
  it('404 is E_NOT_FOUND, 400 E_VALIDATION, 401 E_AUTH (reason bad_signature, not retried)', async () => {
    expect(await failure(client().getEndpoint(999_999))).toMatchObject({ code: 'E_NOT_FOUND', status: 404 });
    expect(await failure(client().request('GET', '/v1/address-watch/addresses', { query: { per_page: 0 } })))
      .toMatchObject({ code: 'E_VALIDATION', status: 400, message: 'per_page: must be an integer from 1 to 200' });
    const slept: number[] = [];
    const wrong = await failure(client({ secret: 'sk_wrong', slept }).request('POST', '/v1/endpoints', { body: { name: 'x', network_slug: 'eth', env_slug: 'mainnet' } }));
    expect(wrong).toMatchObject({ code: 'E_AUTH', status: 401, reason: 'bad_signature', message: 'Invalid signature.' });
    // A wrong signature is not a replay: no wait for a fresh second's signature.
    expect(slept).toEqual([]);
  });

  it('a replay is E_REPLAYED; a replay of another process\'s request is signed again once and goes through', async () => {
    const frozen = Date.now();
    const post = (c: ApiClient) => c.request('POST', '/v1/endpoints', { body: { name: 'twice', network_slug: 'eth', env_slug: 'mainnet' } });
    await post(client({ now: () => frozen }));
    // The same bytes at the same second from another client: the server says replayed; the
    // client waits for a fresh signature, which its frozen clock makes the same again.
    const slept: number[] = [];
    const again = await failure(post(client({ now: () => frozen, slept })));
    expect(again).toMatchObject({ code: 'E_REPLAYED', status: 401, reason: 'replayed', message: 'Invalid signature.' });
    expect(slept.length).toBeGreaterThanOrEqual(1);
    // With a clock that moves on, the one re-signing settles it: the request goes through
    // authentication and reaches the route, where the name the first call made answers 409
    // (names are unique within an account), not a replay.
    let calls = 0;
    const moving = client({ now: () => (calls++ === 0 ? frozen : frozen + 1000) });
    await expect(post(moving)).rejects.toMatchObject({ status: 409 });
  });

  it('429 is E_RATE_LIMIT', async () => {
    const c = client();
    let err: unknown;
    for (let i = 0; i < 30 && err === undefined; i++) err = await c.account().then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ code: 'E_RATE_LIMIT', status: 429 });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { cli, scriptedPrompter } from './helpers/cli.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { signedCall, startTestService, type Merchant, type TestService } from './helpers/service.js';
import { freshRedisPrefix, testRedis } from './helpers/shared-stores.js';
import { createLoginLink, consumeLoginLink, html, raw, setLogin, checkLogin } from '../src/cabinet/index.js';
import { verifyPassword, hashPassword } from '../src/cabinet/credentials.js';
import { primaryOwner } from '../src/store/index.js';
import { itUnless } from './helpers/skips.js';

// The cabinet over plain HTTP: headers, assets, sign-in limits, escaping, admin commands,
// and the API additions it brought (redeliver, key last-use, response excerpts).

const sharedRedis = await testRedis();
afterAll(() => sharedRedis.stop());
const redisUp = sharedRedis.url !== undefined;

let t: TestService;
let m: Merchant;
let receiver: Receiver;
const PASSWORD = 'a long enough password';

beforeAll(async () => {
  receiver = await startReceiver();
  t = await startTestService({ webhooks: { allow_private_urls: true } }, { watch: { delivery: { pollMs: 100 } }, cabinet: { signIn: { perIpPerMinute: 1000 } } });
  m = await t.merchant({ plan: 'pro' });
  await setLogin(t.store, m.userId, { email: 'http@example.com', password: PASSWORD });
});
afterAll(async () => {
  await t.stop();
  await receiver.close();
});

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await request(t.baseUrl + path, { headers });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

async function post(path: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await request(t.baseUrl + path, {
    method: 'POST', body: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** Signs in over HTTP; returns the cookie header and the session's CSRF token. */
async function session(email = 'http@example.com', password = PASSWORD): Promise<{ cookie: string; csrf: string }> {
  const res = await post('/login', { email, password });
  expect(res.status).toBe(303);
  const cookie = String(res.headers['set-cookie']).split(';')[0]!;
  const page = await get('/keys', { cookie });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1]!;
  return { cookie, csrf };
}

describe('headers and assets', () => {
  it('pages carry CSP default-src self, no inline script, X-Frame-Options DENY, no-store', async () => {
    const res = await get('/login');
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['cache-control']).toBe('no-store');
    // Every script is an external file of ours; JSON data blocks are not scripts.
    for (const tag of res.text.match(/<script[^>]*>/g) ?? []) expect(tag).toMatch(/src="\/static\/|type="application\/json"/);
    expect(res.text).not.toMatch(/ style="/);
  });

  it('static files have fingerprinted names and a year of cache; other names are 404', async () => {
    const page = await get('/login');
    const src = /src="(\/static\/htmx\.min\.[0-9a-f]{10}\.js)"/.exec(page.text)![1]!;
    const asset = await get(src);
    expect(asset.status).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['content-type']).toContain('text/javascript');
    expect((await get('/static/htmx.min.js')).status).toBe(404);
  });

  it('vendored files are exactly those of the installed packages (update both together)', async () => {
    const { readFileSync } = await import('node:fs');
    const { createRequire } = await import('node:module');
    const req = createRequire(import.meta.url);
    const pairs: Array<[string, string]> = [
      ['htmx.min.js', 'htmx.org/dist/htmx.min.js'], ['uplot.min.js', 'uplot/dist/uPlot.iife.min.js'], ['uplot.min.css', 'uplot/dist/uPlot.min.css'],
    ];
    for (const [vendored, pkgFile] of pairs) {
      expect(readFileSync(new URL(`../src/cabinet/static/${vendored}`, import.meta.url)).equals(readFileSync(req.resolve(pkgFile))), vendored).toBe(true);
    }
  });

  it('/v1 stays the JSON API; unknown cabinet paths are an HTML 404', async () => {
    const api = await get('/v1/nope');
    expect(api.status).toBe(404);
    expect(JSON.parse(api.text)).toEqual({ ok: false, error: 'Not found' });
    const page = await get('/nope');
    expect(page.status).toBe(404);
    expect(page.headers['content-type']).toContain('text/html');
  });

  it('pages match as the API routes do: trailing slash, HEAD as GET, 405 for another method, a bad escape or empty segment is no page', async () => {
    const { cookie } = await session();
    expect((await get('/keys/', { cookie })).text).toContain('<title>API keys · rpcctl</title>');
    const head = await request(t.baseUrl + '/watch', { method: 'HEAD', headers: { cookie } });
    expect(head.statusCode).toBe(200);
    expect(await head.body.text()).toBe('');
    const put = await request(t.baseUrl + '/keys', { method: 'PUT', headers: { cookie } });
    expect(put.statusCode).toBe(405);
    expect(await put.body.text()).toContain('PUT is not allowed here.');
    expect((await post('/webhook/deliveries', {}, { cookie })).status).toBe(405);
    expect((await get('/endpoints/%zz', { cookie })).status).toBe(404);
    expect((await get('/keys//revoke', { cookie })).status).toBe(404);
    // A fixed path next to a template: /payments/settings is the settings page, not an order.
    expect((await get('/payments/settings', { cookie })).text).toContain('<title>Payment settings · rpcctl</title>');
  });

  it('signed-out pages redirect to sign-in and keep where the user was going', async () => {
    const res = await get('/endpoints?days=7');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/login?next=%2Fendpoints%3Fdays%3D7');
  });
});

const unescapeHtml = (text: string) => text.replace(/&(quot|#39|lt|gt|amp);/g, (_, e: string) => ({ quot: '"', '#39': "'", lt: '<', gt: '>', amp: '&' })[e]!);

describe('per-family examples', () => {
  // The "Try it" curl and the request log's method placeholder come from the endpoint's family
  // (its `example` trait): an EVM call shown on a Solana endpoint would not work there.
  const cases: Array<[network: string, env: string, curl: RegExp, placeholder: string]> = [
    ['eth', 'mainnet', /"method":"eth_blockNumber"/, 'e.g. eth_blockNumber'],
    ['solana', 'devnet', /"method":"getSlot","params":\[\{"commitment":"confirmed"\}\]/, 'e.g. getSlot'],
    ['bitcoin', 'mainnet', /"method":"getblockcount"/, 'e.g. getblockcount'],
    ['stellar', 'mainnet', /^curl -s 'http[^ ']*\/[0-9a-f-]{36}\/ledgers\?order=desc&limit=1'$/, 'e.g. GET /ledgers'],
    ['tron', 'mainnet', /^curl -s -X POST 'http[^ ']*\/[0-9a-f-]{36}\/wallet\/getnowblock'$/, 'e.g. POST /wallet/getnowblock'],
  ];
  // One sign-in for all: sign-ins are rate limited per e-mail.
  let cookie: string;
  let csrf: string;
  beforeAll(async () => { ({ cookie, csrf } = await session()); });
  it.each(cases)('a %s endpoint shows its own family\'s call', async (network, env, curl, placeholder) => {
    const created = await m.call('POST', '/v1/endpoints', JSON.stringify({ name: `try-${network}`, network_slug: network, env_slug: env }));
    expect(created.status).toBe(200);
    const endpoint = created.body.endpoint as { id: number };
    const page = (await get(`/endpoints/${endpoint.id}`, { cookie })).text;
    const tryIt = unescapeHtml(/<summary>Try it<\/summary><pre><code>([\s\S]*?)<\/code>/.exec(page)![1]!);
    expect(tryIt).toMatch(curl);
    if (network !== 'eth') expect(tryIt).not.toContain('eth_');
    const logs = (await get(`/endpoints/${endpoint.id}/logs`, { cookie })).text;
    expect(/name="method"[^>]*placeholder="([^"]*)"/.exec(logs)![1]).toBe(placeholder);
  });

  it('Address Watch offers the Solana networks and takes a Solana public key as given', async () => {
    const page = (await get('/watch', { cookie })).text;
    expect(page).toContain('<option value="solana">Solana mainnet</option>');
    expect(page).toContain('<option value="solana-devnet">Solana devnet</option>');
    expect(page).toMatch(/name="address"[^>]*placeholder="[^"]*Solana public key"/);
    const key = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
    expect((await post('/watch/addresses', { _csrf: csrf, network_slug: 'solana-devnet', address: key }, { cookie })).status).toBe(303);
    expect((await get('/watch', { cookie })).text).toMatch(new RegExp(`<code class="address">${key}</code></td><td data-label="Network">solana-devnet</td>`));
  });

  it('the payment settings take the Solana wallet; an address of another family is refused naming wallets.solana, as typed', async () => {
    const form = { _csrf: csrf, aml_fail_at: 'high', underpaid_tolerance_bps: '0' };
    const evm = `0x${'ab'.repeat(20)}`;
    const bad = await post('/payments/settings', { ...form, wallet_solana: evm }, { cookie });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('wallets.solana: must be a Solana address (32 to 44 base58 characters)');
    expect(bad.text).toMatch(new RegExp(`name="wallet_solana" value="${evm}"`));
    expect((await m.call('GET', '/v1/payments/settings')).body.wallets).toEqual({});
    const key = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
    expect((await post('/payments/settings', { ...form, wallet_solana: ` ${key} ` }, { cookie })).status).toBe(303);
    expect((await m.call('GET', '/v1/payments/settings')).body.wallets).toEqual({ solana: key });
    expect((await get('/payments/settings', { cookie })).text).toMatch(new RegExp(`Wallet \\(Solana\\)[\\s\\S]*?name="wallet_solana" value="${key}"`));
  });
});

/** Sign-in windows are whole minutes of the clock: a test's attempts must not straddle two. */
async function startOfMinuteIfLate(needMs: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 50));
}

describe('sign-in', () => {
  it('is rate limited per e-mail, and a correct password does not get around the limit', async () => {
    await setLogin(t.store, (await t.merchant()).userId, { email: 'limited@example.com', password: PASSWORD });
    const statuses: number[] = [];
    await startOfMinuteIfLate(15_000);
    for (let i = 0; i < 11; i++) statuses.push((await post('/login', { email: 'limited@example.com', password: 'wrong password' })).status);
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses[10]).toBe(429);
    const right = await post('/login', { email: 'limited@example.com', password: PASSWORD });
    expect(right.status).toBe(429);
    expect(right.text).toContain('Too many sign-in attempts');
  });

  itUnless(!redisUp && sharedRedis.why, 'two instances on one Redis count the same e-mail\'s attempts together', async () => {
    const redis = { url: sharedRedis.url!, key_prefix: freshRedisPrefix() };
    const [a, b] = await Promise.all([0, 1].map(() => startTestService({ redis }, { cabinet: { signIn: { perIpPerMinute: 1000, perEmailPerMinute: 4 } } })));
    try {
      const attempt = (s: TestService) => request(`${s.baseUrl}/login`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ email: 'spread@example.com', password: 'wrong password' }).toString(),
      }).then(async (r) => { await r.body.dump(); return r.statusCode; });
      await startOfMinuteIfLate(15_000);
      const statuses = [await attempt(a!), await attempt(b!), await attempt(a!), await attempt(b!), await attempt(a!), await attempt(b!)];
      expect(statuses).toEqual([401, 401, 401, 401, 429, 429]);
    } finally {
      await Promise.all([a?.stop(), b?.stop()]);
    }
  });

  it('the next parameter never leaves the site', async () => {
    const res = await post('/login', { email: 'http@example.com', password: PASSWORD, next: '//evil.example/x' });
    expect(res.headers.location).toBe('/');
  });

  it('passwords are scrypt hashes checked in constant time; an unknown e-mail costs the same work', async () => {
    const stored = await hashPassword('hunter2hunter2');
    expect(stored).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(await verifyPassword('hunter2hunter2', stored)).toBe(true);
    expect(await verifyPassword('hunter2hunter3', stored)).toBe(false);
    expect(await verifyPassword('x', 'garbage')).toBe(false);
    expect(await checkLogin(t.store, 'nobody@example.com', 'whatever')).toBeUndefined();
    const row = await t.store.db.selectFrom('cabinet_members').select('password_hash').where('account_id', '=', m.userId).executeTakeFirst();
    expect(row!.password_hash).not.toContain(PASSWORD);
  });

  it('a login link works once and not after 15 minutes', async () => {
    const now = Date.now();
    const owner = (await primaryOwner(t.store, m.userId))!;
    const login = { accountId: m.userId, memberId: owner.id };
    const { token } = await createLoginLink(t.store, login, { nowMs: now });
    expect(await consumeLoginLink(t.store, token, 'sign-in', now + 15 * 60_000 + 1)).toBeUndefined();
    const fresh = await createLoginLink(t.store, login);
    expect((await get(`/login/link/${fresh.token}`)).status).toBe(200);
    const first = await post(`/login/link/${fresh.token}`, {});
    expect(first.status).toBe(303);
    expect(String(first.headers['set-cookie'])).toMatch(/rpcctl_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax/);
    expect((await post(`/login/link/${fresh.token}`, {})).status).toBe(410);
    // Only hashes are stored.
    const rows = await t.store.db.selectFrom('cabinet_login_links').select('token_hash').execute();
    expect(rows.map((r) => r.token_hash)).not.toContain(fresh.token);
  });

  it('a session ends 24 hours after sign-in however active it is', async () => {
    const { cookie } = await session();
    expect((await get('/', { cookie })).status).toBe(200);
    const { sha256 } = await import('../src/cabinet/credentials.js');
    await t.store.db.updateTable('cabinet_sessions').set({ created_at: Date.now() - 24 * 3600_000 - 1000 })
      .where('id_hash', '=', sha256(cookie.split('=')[1]!)).execute();
    const res = await get('/', { cookie });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/login?expired=1&next=%2F');
  });

  it('sessions are stored by hash only', async () => {
    const { cookie } = await session();
    const id = cookie.split('=')[1]!;
    const rows = await t.store.db.selectFrom('cabinet_sessions').select('id_hash').execute();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.map((r) => r.id_hash)).not.toContain(id);
  });
});

describe('CSRF and origin', () => {
  it('a POST with the token but from another origin is refused', async () => {
    const { cookie, csrf } = await session();
    const cross = await post('/keys', { _csrf: csrf, name: 'x' }, { cookie, origin: 'http://evil.example' });
    expect(cross.status).toBe(403);
    const fetchMeta = await post('/keys', { _csrf: csrf, name: 'x' }, { cookie, 'sec-fetch-site': 'cross-site' });
    expect(fetchMeta.status).toBe(403);
    const wrong = await post('/keys', { _csrf: 'not-the-token', name: 'x' }, { cookie });
    expect(wrong.status).toBe(403);
    const ok = await post('/keys', { _csrf: csrf, name: 'made here' }, { cookie, origin: t.baseUrl });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('copy the secret now');
  });
});

describe('escaping', () => {
  it('names a merchant typed come back as text, never markup', async () => {
    const { cookie, csrf } = await session();
    await post('/keys', { _csrf: csrf, name: '<img src=x onerror=alert(1)>' }, { cookie });
    const page = await get('/keys', { cookie });
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  it('the html tag escapes values, nests templates, and joins arrays', () => {
    const name = '"><script>x</script>';
    expect(html`<a title="${name}">${name}</a>`.text).toBe('<a title="&quot;&gt;&lt;script&gt;x&lt;/script&gt;">&quot;&gt;&lt;script&gt;x&lt;/script&gt;</a>');
    expect(html`<ul>${['a', 'b&c'].map((s) => html`<li>${s}</li>`)}</ul>`.text).toBe('<ul><li>a</li><li>b&amp;c</li></ul>');
    expect(html`${raw('<b>ok</b>')}${null}${undefined}${false}${0}`.text).toBe('<b>ok</b>0');
  });

  it('events in the feed are shown escaped', async () => {
    await t.store.db.insertInto('watch_events').values({
      account_id: m.userId, watch_id: 'w_1', network_environment_id: 1, network: 'eth', type: 'payment', block_height: 7, block_hash: '0xab',
      body: JSON.stringify({ watch_id: 'w_1', network: 'eth', address: '<b>0xabc</b>', tx_hash: '0x12', block_height: 7, type: 'payment', direction: 'in', amount: '5' }),
      removed: 0, created_at: new Date().toISOString(),
    }).execute();
    const { cookie } = await session();
    const page = await get('/watch', { cookie });
    expect(page.text).toContain('&lt;b&gt;0xabc&lt;/b&gt;');
  });
});

describe('API additions', () => {
  it('POST /v1/address-watch/deliveries/{id}/redeliver resends with the same id; another account gets 404', async () => {
    expect((await m.call('PUT', '/v1/address-watch/webhook', JSON.stringify({ url: receiver.url, enabled: true }))).status).toBe(200);
    receiver.respond = () => 200;
    const test = await m.call('POST', '/v1/address-watch/webhook/test', JSON.stringify({ type: 'block', network: 'eth' }));
    expect(test.status).toBe(200);
    await receiver.waitFor((all) => all.some((r) => r.headers['x-webhook-id'] === test.body.webhook_id));
    let delivery: any;
    await expect.poll(async () => {
      delivery = (await m.call('GET', '/v1/address-watch/deliveries?limit=1')).body.deliveries[0];
      return delivery.status;
    }).toBe('delivered');
    expect(delivery.attempts[0].response_excerpt).toBe('ok');

    const other = await t.merchant();
    expect((await other.call('POST', `/v1/address-watch/deliveries/${delivery.delivery_id}/redeliver`)).status).toBe(404);
    const again = await m.call('POST', `/v1/address-watch/deliveries/${delivery.delivery_id}/redeliver`);
    expect(again.status).toBe(200);
    expect(again.body.delivery.status).toBe('pending');
    await receiver.waitFor((all) => all.filter((r) => r.headers['x-webhook-id'] === test.body.webhook_id).length === 2);
    const resent = receiver.received.filter((r) => r.headers['x-webhook-id'] === test.body.webhook_id)[1]!;
    expect(resent.headers['x-webhook-attempt']).toBe('2');
    expect((await m.call('POST', '/v1/address-watch/deliveries/999999/redeliver')).status).toBe(404);
    expect((await m.call('POST', '/v1/address-watch/deliveries/abc/redeliver')).status).toBe(400);
  });

  it('a redelivered real delivery is billed once', async () => {
    const { enqueueDelivery } = await import('../src/webhooks/outbox.js');
    const merchant = await t.merchant({ plan: 'pro' });
    await merchant.call('PUT', '/v1/address-watch/webhook', JSON.stringify({ url: receiver.url, enabled: true }));
    await enqueueDelivery(t.store.db, { accountId: merchant.userId, eventId: null, webhookId: `wh_${merchant.userId}`, type: 'payment', network: 'eth', body: '{}', credits: 30, isTest: false });
    t.service.webhooks.kick();
    const credits = async () => (await merchant.call('GET', '/v1/account')).body.usage.credits_used as number;
    await expect.poll(credits).toBe(30);
    const id = (await merchant.call('GET', '/v1/address-watch/deliveries')).body.deliveries[0].delivery_id;
    expect((await merchant.call('POST', `/v1/address-watch/deliveries/${id}/redeliver`)).status).toBe(200);
    await expect.poll(async () => (await merchant.call('GET', '/v1/address-watch/deliveries')).body.deliveries[0].attempt_count).toBe(2);
    expect(await credits()).toBe(30);
  });

  it('key last use reaches the store in batches, not per request', async () => {
    const merchant = await t.merchant();
    await signedCall(t.baseUrl, merchant.apiKey, merchant.secret, 'GET', '/v1/account');
    const stored = async () => (await t.store.db.selectFrom('api_keys').select('last_used_at').where('id', '=', merchant.apiKey).executeTakeFirst())!.last_used_at;
    expect(await stored()).toBeNull();
    await t.service.keyUse.flush();
    expect(await stored()).toMatch(/^\d{4}-/);
  });
});

describe('admin commands', () => {
  it('on a terminal, accounts create --email asks for the password twice; two different ones change nothing', async () => {
    const ASK = /^Cabinet password \(at least 10 characters\)$/;
    const typed = (first: string, second: string) => scriptedPrompter([{ match: ASK, answer: first }, { match: /^Cabinet password \(again\)$/, answer: second }]);
    // The rule is in the question, and a short password is refused as it is typed, not after it was typed twice.
    const short = scriptedPrompter([{ match: ASK, answer: 'short' }]);
    const refused = await cli(['admin', 'accounts', 'create', '--email', 'twice@example.com', '--data-dir', t.dataDir], { tty: true, prompter: short });
    expect(refused.stderr).toContain('rejected: the password must have at least 10 characters');
    expect(short.asked).toHaveLength(1);

    const differ = typed(PASSWORD, `${PASSWORD}x`);
    const bad = await cli(['admin', 'accounts', 'create', '--email', 'twice@example.com', '--data-dir', t.dataDir], { tty: true, prompter: differ });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('error: the two passwords differ; nothing was changed\n');
    expect(differ.asked).toEqual(['Cabinet password (at least 10 characters)', 'Cabinet password (again)']);

    // The same email is still free (a duplicate is refused): the refused run wrote nothing.
    const same = typed(PASSWORD, PASSWORD);
    const made = await cli(['admin', 'accounts', 'create', '--email', 'twice@example.com', '--data-dir', t.dataDir], { tty: true, prompter: same });
    expect(made.code, made.stderr).toBe(0);
    expect(same.asked).toHaveLength(2);
    expect((await post('/login', { email: 'twice@example.com', password: PASSWORD })).status).toBe(303);
  });

  it('accounts create --email reads the password from stdin; set-password replaces it and ends sessions; login-link prints a URL', async () => {
    const bad = await cli(['admin', 'accounts', 'create', '--email', 'short@example.com', '--data-dir', t.dataDir], { stdin: 'short\n' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('at least 10 characters');
    const badEmail = await cli(['admin', 'accounts', 'create', '--email', 'not-an-email', '--data-dir', t.dataDir], { stdin: `${PASSWORD}\n` });
    expect(badEmail.code).toBe(2);

    const made = await cli(['admin', 'accounts', 'create', '--email', 'admin-made@example.com', '--data-dir', t.dataDir, '--json'], { stdin: `${PASSWORD}\n` });
    expect(made.code, made.stderr).toBe(0);
    const account = JSON.parse(made.stdout) as { user_id: number; email: string; plan: string };
    expect(account.email).toBe('admin-made@example.com');
    expect(account.plan).toBe(t.store.catalog.plans[0]!.slug);
    const got = await cli(['admin', 'accounts', 'get', String(account.user_id), '--data-dir', t.dataDir, '--json']);
    expect(JSON.parse(got.stdout).email).toBe('admin-made@example.com');
    const dup = await cli(['admin', 'accounts', 'create', '--email', 'admin-made@example.com', '--data-dir', t.dataDir], { stdin: `${PASSWORD}\n` });
    expect(dup.code).toBe(2);

    const { cookie } = await session('admin-made@example.com', PASSWORD);
    expect((await get('/', { cookie })).status).toBe(200);
    const set = await cli(['admin', 'accounts', 'set-password', String(account.user_id), '--data-dir', t.dataDir], { stdin: 'another long password\n' });
    expect(set.code, set.stderr).toBe(0);
    expect((await get('/', { cookie })).status).toBe(303);
    expect((await post('/login', { email: 'admin-made@example.com', password: PASSWORD })).status).toBe(401);
    expect((await post('/login', { email: 'admin-made@example.com', password: 'another long password' })).status).toBe(303);

    const link = await cli(['admin', 'login-link', '--account', String(account.user_id), '--data-dir', t.dataDir]);
    expect(link.code, link.stderr).toBe(0);
    expect(link.stdout.trim()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login\/link\/[A-Za-z0-9_-]{43}$/);
    expect(link.stderr).toContain('15 minutes');

    const noPw = await cli(['admin', 'accounts', 'create', '--email', 'link-only@example.com', '--no-password', '--data-dir', t.dataDir, '--json']);
    expect(noPw.code, noPw.stderr).toBe(0);
    expect((await post('/login', { email: 'link-only@example.com', password: '' })).status).toBe(401);
  });
});

describe('behind a TLS-terminating proxy', () => {
  it('the session cookie is Secure when a trusted proxy says https, and not otherwise', async () => {
    const proxied = await startTestService({ api: { trusted_proxies: ['127.0.0.1'] } });
    try {
      const acct = await proxied.merchant();
      await setLogin(proxied.store, acct.userId, { email: 'tls@example.com', password: PASSWORD });
      const signIn = async (headers: Record<string, string>) => {
        const res = await request(`${proxied.baseUrl}/login`, {
          method: 'POST', body: new URLSearchParams({ email: 'tls@example.com', password: PASSWORD }).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        });
        await res.body.dump();
        return String(res.headers['set-cookie']);
      };
      expect(await signIn({ 'x-forwarded-proto': 'https', 'x-forwarded-for': '198.51.100.4' })).toContain('; Secure');
      expect(await signIn({})).not.toContain('Secure');
    } finally {
      await proxied.stop();
    }
  });
});

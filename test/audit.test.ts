import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { sql } from 'kysely';
import { rawCall, startTestService, type Merchant, type TestService } from './helpers/service.js';
import { setLogin } from '../src/cabinet/index.js';
import { secretFromBase32, totp } from '../src/cabinet/totp.js';
import { CORE_PAGES } from '../src/cabinet/shell.js';
import { paymentsSection } from '../src/payments/cabinet.js';
import { watchSection } from '../src/watch/cabinet.js';
import { webhooksSection } from '../src/webhooks/cabinet.js';
import { getAccount } from '../src/store/index.js';
import { cli, tempConfigDir } from './helpers/cli.js';

// The audit log over real HTTP: changes through the signed API and through the cabinet are
// recorded with who, what, target and the client's address (a trusted proxy's X-Forwarded-For);
// secrets never reach it; the list pages back and filters; every changing route is covered.

let t: TestService;
let m: Merchant;
const EMAIL = 'audit@example.com';
const PASSWORD = 'a long enough password';
const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
const CLIENT = { 'x-forwarded-for': '203.0.113.9' };

beforeAll(async () => {
  // The test's loopback is the trusted proxy, so X-Forwarded-For names the client.
  t = await startTestService({ api: { trusted_proxies: ['127.0.0.1'] }, webhooks: { allow_private_urls: true } },
    { cabinet: { signIn: { perIpPerMinute: 1000, perEmailPerMinute: 1000 } } });
  m = await t.merchant({ plan: 'pro' });
  await setLogin(t.store, m.userId, { email: EMAIL, password: PASSWORD });
});
afterAll(() => t.stop());

async function audit(query = ''): Promise<{ entries: any[]; next_before: string | null; retention_days: number | null }> {
  const res = await m.call('GET', `/v1/account/audit${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function post(path: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await request(t.baseUrl + path, {
    method: 'POST', body: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const res = await post('/login', { email: EMAIL, password: PASSWORD });
  expect(res.status).toBe(303);
  const cookie = String(res.headers['set-cookie']).split(';')[0]!;
  const page = await request(`${t.baseUrl}/keys`, { headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.body.text())![1]!;
  return { cookie, csrf };
}

describe('changes through the API', () => {
  it('are recorded with the key prefix, the client address, the target and the changed fields', async () => {
    const created = await m.call('POST', '/v1/endpoints', JSON.stringify({ network_slug: 'eth', env_slug: 'mainnet', name: 'audited' }), CLIENT);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = String(created.body.endpoint.id);
    expect((await m.call('PATCH', `/v1/endpoints/${id}`, JSON.stringify({ name: 'renamed' }), CLIENT)).status).toBe(200);
    expect((await m.call('PATCH', `/v1/endpoints/${id}/status`, JSON.stringify({ status: 'paused' }), CLIENT)).status).toBe(200);
    expect((await m.call('PATCH', `/v1/endpoints/${id}/status`, JSON.stringify({ status: 'active' }), CLIENT)).status).toBe(200);
    expect((await m.call('PATCH', `/v1/endpoints/${id}/allowed-ips`, JSON.stringify({ allowed_ips: ['198.51.100.7'] }), CLIENT)).status).toBe(200);
    // A refused change is not a change.
    expect((await m.call('PATCH', '/v1/endpoints/999999', JSON.stringify({ name: 'x' }), CLIENT)).status).toBe(404);

    const { entries } = await audit('?action=endpoint.');
    const actor = { kind: 'key', id: m.apiKey.slice(0, 8), label: m.apiKey.slice(0, 8) };
    expect(entries.map((e) => [e.action, e.target, e.changes])).toEqual([
      ['endpoint.allowlist', { type: 'endpoint', id }, { allowed_ips: ['198.51.100.7'] }],
      ['endpoint.resume', { type: 'endpoint', id }, { status: 'active' }],
      ['endpoint.pause', { type: 'endpoint', id }, { status: 'paused' }],
      ['endpoint.rename', { type: 'endpoint', id }, { name: 'renamed' }],
      ['endpoint.create', { type: 'endpoint', id }, { name: 'audited', network: 'eth-mainnet' }],
    ]);
    for (const e of entries) {
      expect(e.actor).toEqual(actor);
      expect(e.ip).toBe('203.0.113.9');
      expect(Date.now() - Date.parse(e.created_at)).toBeLessThan(60_000);
    }
  });

  it('keep secrets out: a webhook URL keeps only its origin, an xpub is "set"', async () => {
    const hook = 'http://127.0.0.1:9/hooks/tok_SECRETPATH?sig=SECRETQUERY';
    expect((await m.call('PUT', '/v1/address-watch/webhook', JSON.stringify({ url: hook, enabled: false }))).status).toBe(200);
    const settings = await m.call('PUT', '/v1/payments/settings', JSON.stringify({ xpubs: { evm: XPUB }, aml_fail_at: 'high' }));
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    const { entries } = await audit();
    expect(entries.find((e) => e.action === 'webhook.set').changes).toEqual({ url: 'http://127.0.0.1:9', enabled: false });
    expect(entries.find((e) => e.action === 'payments.settings').changes).toEqual({ xpubs: { evm: 'set' }, aml_fail_at: 'high' });
    const stored = JSON.stringify(await t.store.db.selectFrom('audit_log').selectAll().execute());
    for (const secret of ['SECRETPATH', 'SECRETQUERY', XPUB, m.secret]) expect(stored).not.toContain(secret);
  });

  it('an idempotent repeat that changed nothing is not recorded', async () => {
    const body = JSON.stringify({ network_slug: 'eth', address: '0x00000000000000000000000000000000000000a1' });
    expect((await m.call('POST', '/v1/address-watch/addresses', body)).body.created).toBe(true);
    expect((await m.call('POST', '/v1/address-watch/addresses', body)).body.created).toBe(false);
    expect((await audit('?action=watch.add')).entries).toHaveLength(1);
  });
});

describe('a change that did not happen is not recorded', () => {
  it('pausing a paused endpoint, resuming an active one, its own name, the same allowlist, cancelling a cancelled order', async () => {
    const n = await t.merchant({ plan: 'pro' });
    const entries = async () => (await n.call('GET', '/v1/account/audit')).body.entries as Array<{ action: string }>;
    const e = (await n.call('POST', '/v1/endpoints', JSON.stringify({ network_slug: 'eth', env_slug: 'mainnet', name: 'noop' }))).body.endpoint;
    const pause = (space = '') => n.call('PATCH', `/v1/endpoints/${e.id}/status`, `{"status":"paused"}${space}`);
    expect((await pause()).body.endpoint.status).toBe('paused');
    // A no-op is answered as the change would be (200, the endpoint), only not recorded.
    expect((await pause(' ')).body).toMatchObject({ ok: true, endpoint: { status: 'paused' } });
    expect((await n.call('PATCH', `/v1/endpoints/${e.id}/status`, '{"status":"active"}')).status).toBe(200);
    expect((await n.call('PATCH', `/v1/endpoints/${e.id}/status`, '{"status":"active"} ')).status).toBe(200);
    expect((await n.call('PATCH', `/v1/endpoints/${e.id}`, '{"name":"noop"}')).status).toBe(200);
    expect((await n.call('PATCH', `/v1/endpoints/${e.id}/allowed-ips`, '{"allowed_ips":["192.0.2.1"]}')).status).toBe(200);
    expect((await n.call('PATCH', `/v1/endpoints/${e.id}/allowed-ips`, '{"allowed_ips":["192.0.2.1","192.0.2.1"]}')).status).toBe(200);
    expect((await n.call('PUT', '/v1/payments/settings', JSON.stringify({ xpubs: { evm: XPUB } }))).status).toBe(200);
    const order = await n.call('POST', '/v1/payments', JSON.stringify({ order_id: 'noop-1', network_slug: 'eth', amount: '1' }));
    expect(order.status, JSON.stringify(order.body)).toBe(200);
    const id = order.body.payment.payment_id;
    expect((await n.call('POST', `/v1/payments/${id}/cancel`, '')).body.payment).toMatchObject({ status: 'failed', reason: 'canceled' });
    expect((await n.call('POST', `/v1/payments/${id}/cancel`, ' ')).status).toBe(200);
    expect((await entries()).map((x) => x.action).reverse()).toEqual([
      'endpoint.create', 'endpoint.pause', 'endpoint.resume', 'endpoint.allowlist', 'payments.settings', 'payment.create', 'payment.cancel',
    ]);
  });
});

describe('changes in the cabinet', () => {
  it('are recorded as the login, from the client address: its own writes and the API routes it runs', async () => {
    const { cookie, csrf } = await signIn();
    const made = await post('/keys', { _csrf: csrf, name: 'ci deploy', allowed_ips: '192.0.2.1' }, { cookie, ...CLIENT });
    expect(made.status).toBe(200);
    const secret = /id="new-secret"[^>]*>([^<]+)</.exec(made.text)![1]!;
    const prefix = /PUBLIC_API_KEY=([0-9a-f]{8})/.exec(made.text)![1]!;
    expect(prefix).not.toBe(m.apiKey.slice(0, 8));
    expect((await post(`/keys/${prefix}/revoke`, { _csrf: csrf }, { cookie, ...CLIENT })).status).toBe(303);
    expect((await post('/endpoints', { _csrf: csrf, network: 'eth:mainnet', name: 'from the cabinet' }, { cookie, ...CLIENT })).status).toBe(303);
    // A name in use is refused in the cabinet as by the API (names are unique within an account), and not recorded.
    const twice = await post('/endpoints', { _csrf: csrf, network: 'eth:mainnet', name: 'from the cabinet' }, { cookie, ...CLIENT });
    expect(twice.status).toBe(409);
    expect(twice.text).toContain('an endpoint named &quot;from the cabinet&quot; exists already');

    const { entries } = await audit();
    const byLogin = entries.filter((e) => e.actor.kind === 'login');
    expect(byLogin.map((e) => [e.action, e.target.type])).toEqual([['endpoint.create', 'endpoint'], ['key.revoke', 'key'], ['key.create', 'key']]);
    for (const e of byLogin) {
      expect(e.actor).toEqual({ kind: 'login', id: String(m.userId), label: EMAIL });
      expect(e.ip).toBe('203.0.113.9');
    }
    expect(byLogin[2].target.id).toBe(prefix);
    expect(byLogin[2].changes).toEqual({ name: 'ci deploy', allowed_ips: ['192.0.2.1'] });
    const stored = JSON.stringify(await t.store.db.selectFrom('audit_log').selectAll().execute());
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(PASSWORD);
    expect(stored).not.toContain((await getAccount(t.store, m.userId))!.webhook_secret);
  });

  it('two-factor on and off and the account policy are recorded; the TOTP key and recovery codes are not', async () => {
    const other = await t.merchant({ plan: 'pro' });
    const email = 'audit-2fa@example.com';
    await setLogin(t.store, other.userId, { email, password: PASSWORD });
    const login = await post('/login', { email, password: PASSWORD });
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const page = await (await request(`${t.baseUrl}/account/two-factor`, { headers: { cookie } })).body.text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
    const shown = /id="totp-secret"[^>]*>([A-Z2-7 ]+)</.exec(page)![1]!;
    const enrolled = await post('/account/two-factor/confirm', { _csrf: csrf, code: totp(secretFromBase32(shown), Date.now()) }, { cookie, ...CLIENT });
    expect(enrolled.status).toBe(200);
    const codes = [...enrolled.text.matchAll(/<li><code>([a-z2-7]{5}-[a-z2-7]{5})<\/code><\/li>/g)].map((x) => x[1]!);
    expect(codes).toHaveLength(10);
    expect((await post('/account/two-factor/policy', { _csrf: csrf, require: '1' }, { cookie, ...CLIENT })).status).toBe(303);
    expect((await post('/account/two-factor/policy', { _csrf: csrf, require: '0' }, { cookie, ...CLIENT })).status).toBe(303);
    expect((await post('/account/two-factor/disable', { _csrf: csrf, proof: PASSWORD }, { cookie, ...CLIENT })).status).toBe(303);

    const { entries } = (await other.call('GET', '/v1/account/audit')).body;
    expect(entries.map((e: any) => [e.action, e.changes, e.actor.label, e.ip])).toEqual([
      ['two_factor.disable', null, email, '203.0.113.9'],
      ['account.policy', { require_two_factor: false }, email, '203.0.113.9'],
      ['account.policy', { require_two_factor: true }, email, '203.0.113.9'],
      ['two_factor.enable', null, email, '203.0.113.9'],
    ]);
    const stored = JSON.stringify(await t.store.db.selectFrom('audit_log').selectAll().execute());
    for (const secret of [shown.replace(/ /g, ''), ...codes]) expect(stored).not.toContain(secret);
  });

  it('the Audit log page lists them, newest first, and filters by kind', async () => {
    const { cookie } = await signIn();
    const page = await request(`${t.baseUrl}/account/audit`, { headers: { cookie } });
    const text = await page.body.text();
    expect(page.statusCode).toBe(200);
    expect(text).toContain('Audit log');
    expect(text).toContain(EMAIL);
    expect(text.indexOf('endpoint.create')).toBeLessThan(text.indexOf('key.create'));
    const keys = await (await request(`${t.baseUrl}/account/audit?action=key.`, { headers: { cookie } })).body.text();
    expect(keys).toContain('key.revoke');
    expect(keys).not.toContain('endpoint.rename');
  });
});

describe('the list', () => {
  it('pages back newest first with next_before, filters by action, says how long it keeps entries', async () => {
    const all = await audit('?limit=200');
    expect(all.retention_days).toBe(365);
    const seen: string[] = [];
    let before: string | null = null;
    do {
      const page = await audit(`?limit=3${before ? `&before=${before}` : ''}`);
      expect(page.entries.length).toBeLessThanOrEqual(3);
      seen.push(...page.entries.map((e) => e.audit_id));
      before = page.next_before;
    } while (before);
    expect(seen).toEqual(all.entries.map((e) => e.audit_id));
    expect(seen.map(Number)).toEqual([...seen.map(Number)].sort((a, b) => b - a));
    expect((await audit('?action=endpoint.rename')).entries.map((e) => e.action)).toEqual(['endpoint.rename']);
    expect((await m.call('GET', '/v1/account/audit?limit=0')).status).toBe(400);
    expect((await m.call('GET', '/v1/account/audit?action=DROP%20TABLE')).status).toBe(400);
  });

  it('shows one account only its own entries', async () => {
    const other = await t.merchant({ plan: 'pro' });
    expect((await other.call('GET', '/v1/account/audit')).body.entries).toEqual([]);
  });

  it('operator changes (rpcctl admin) are recorded as the operator, with no address', async () => {
    const r = await cli(['admin', 'accounts', 'set-plan', String(m.userId), '--plan', 'pro', '--data-dir', t.dataDir]);
    expect(r.code, r.stderr).toBe(0);
    expect((await audit('?limit=1')).entries[0]).toMatchObject({
      actor: { kind: 'admin', id: 'admin', label: 'rpcctl admin' }, action: 'account.plan', target: { type: 'account', id: String(m.userId) }, ip: null, changes: { plan: 'pro' },
    });
  });

  it('rpcctl account audit: a table, --json the entries, --action filters', async () => {
    const env = { PUBLIC_API_KEY: m.apiKey, PUBLIC_API_SECRET: m.secret, PUBLIC_API_BASE: t.baseUrl, RPCCTL_CONFIG_DIR: tempConfigDir() };
    const json = await cli(['account', 'audit', '--json', '--action', 'endpoint.', '-n', '2'], { env });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).map((e: { action: string }) => e.action)).toEqual(['endpoint.create', 'endpoint.allowlist']);
    const table = await cli(['account', 'audit', '-n', '3'], { env });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stderr).toMatch(/Older: rpcctl account audit --before \d+/);
    expect(table.stdout).toContain('account.plan');
    expect(table.stdout).toContain('rpcctl admin');
  });
});

describe('a record that cannot be written', () => {
  it('does not undo or fail the change; it is logged and counted', async () => {
    const metric = async () => {
      const text = await (await request(`${t.metricsUrl}/metrics`)).body.text();
      return Number(/^rpcctl_audit_write_failures_total (\d+)/m.exec(text)?.[1] ?? 0);
    };
    const before = await metric();
    await sql`ALTER TABLE audit_log RENAME TO audit_log_away`.execute(t.store.db);
    try {
      const res = await m.call('POST', '/v1/endpoints', JSON.stringify({ network_slug: 'eth', env_slug: 'mainnet', name: 'unrecorded' }));
      expect(res.status).toBe(200);
      expect((await m.call('GET', `/v1/endpoints/${res.body.endpoint.id}`)).body.endpoint.name).toBe('unrecorded');
    } finally {
      await sql`ALTER TABLE audit_log_away RENAME TO audit_log`.execute(t.store.db);
    }
    expect(await metric()).toBe(before + 1);
  });
});

describe('coverage', () => {
  it('every changing API route declares its audit action (walked in the served openapi.json)', async () => {
    const doc = (await rawCall(t.baseUrl, 'GET', '/v1/openapi.json')).body;
    const changing = Object.entries(doc.paths as Record<string, Record<string, Record<string, unknown>>>)
      .flatMap(([path, ops]) => Object.entries(ops).filter(([method]) => method !== 'get').map(([method, op]) => ({ at: `${method.toUpperCase()} ${path}`, action: op['x-audit-action'] })));
    expect(changing.length).toBeGreaterThanOrEqual(12);
    expect(changing.filter((c) => typeof c.action !== 'string' || !/^[a-z_]+\.[a-z_]+$/.test(c.action)).map((c) => c.at)).toEqual([]);
  });

  it('every cabinet POST page says how its change is audited', () => {
    const pages = [...CORE_PAGES, ...watchSection.routes, ...webhooksSection.routes, ...paymentsSection.routes];
    expect(pages.filter((p) => p.method === 'POST').length).toBeGreaterThanOrEqual(15);
    expect(pages.filter((p) => p.method === 'POST' && p.audit === undefined).map((p) => p.path)).toEqual([]);
  });
});

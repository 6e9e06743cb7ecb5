import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { cabinetForms, cookieNamed, cookiesOf, csrfOf } from './helpers/cabinet-forms.js';
import { cli } from './helpers/cli.js';
import { startTestService, type TestService } from './helpers/service.js';
import { setLogin, createLoginLink } from '../src/cabinet/index.js';
import { secretFromBase32, secretToBase32, totp } from '../src/cabinet/totp.js';
import { primaryOwner } from '../src/store/index.js';

// Two-factor sign-in over plain HTTP: enrolment, the second step (no session before it), code
// reuse, recovery codes, login links, the limits, the account's policy and the admin reset.

let t: TestService;
const PASSWORD = 'a long enough password';

beforeAll(async () => {
  t = await startTestService({}, { cabinet: { signIn: { perIpPerMinute: 1000, perEmailPerMinute: 10 } } });
});
afterAll(() => t?.stop());

const { get, post } = cabinetForms(() => t.baseUrl);

async function login(email: string): Promise<number> {
  const m = await t.merchant({ plan: 'pro' });
  await setLogin(t.store, m.userId, { email, password: PASSWORD });
  return m.userId;
}

/** Password only: a session when the login has no second factor. */
async function passwordSession(email: string): Promise<string> {
  const res = await post('/login', { email, password: PASSWORD });
  expect(res.status).toBe(303);
  const cookie = cookieNamed(res, 'rpcctl_session');
  expect(cookie, 'a session cookie').toBeDefined();
  return cookie!;
}

/** Enrols the login of `cookie`; returns its key and recovery codes. */
async function enrol(cookie: string): Promise<{ secret: Uint8Array; codes: string[] }> {
  const page = await get('/account/two-factor', cookie);
  expect(page.status).toBe(200);
  const shown = /id="totp-secret"[^>]*>([A-Z2-7 ]+)</.exec(page.text)![1]!;
  const secret = secretFromBase32(shown);
  expect(page.text).toContain('<svg');
  // A reload offers the same key: an app scanned a moment ago still matches.
  expect((await get('/account/two-factor', cookie)).text).toContain(shown);
  const wrong = await post('/account/two-factor/confirm', { _csrf: csrfOf(page.text), code: String((Number(totp(secret, Date.now())) + 1) % 1_000_000).padStart(6, '0') }, cookie);
  expect(wrong.status).toBe(400);
  const ok = await post('/account/two-factor/confirm', { _csrf: csrfOf(page.text), code: totp(secret, Date.now()) }, cookie);
  expect(ok.status).toBe(200);
  const codes = [...ok.text.matchAll(/<li><code>([a-z2-7]{5}-[a-z2-7]{5})<\/code><\/li>/g)].map((m) => m[1]!);
  expect(codes).toHaveLength(10);
  return { secret, codes };
}

/** Password right, second factor owed: the challenge cookie and no session. */
async function challenge(email: string, next = '/'): Promise<string> {
  const res = await post('/login', { email, password: PASSWORD, next });
  expect(res.status).toBe(303);
  expect(res.headers.location).toBe('/login/two-factor');
  expect(cookieNamed(res, 'rpcctl_session')).toBeUndefined();
  const c = cookiesOf(res).find((x) => x.startsWith('rpcctl_2fa='))!;
  expect(c).toContain('HttpOnly');
  expect(c).toContain('Path=/login');
  return c.split(';')[0]!;
}

describe('enrolment and sign-in', () => {
  const email = 'tf@example.com';
  let userId: number;
  let secret: Uint8Array;
  let codes: string[];

  beforeAll(async () => {
    userId = await login(email);
    ({ secret, codes } = await enrol(await passwordSession(email)));
  });

  it('the key is sealed at rest, recovery codes only hashed', async () => {
    const row = await t.store.db.selectFrom('cabinet_members').selectAll().where('account_id', '=', userId).executeTakeFirstOrThrow();
    expect(row.totp_secret).toMatch(/^v1\./);
    expect(row.totp_pending).toBeNull();
    const dump = JSON.stringify(await t.store.db.selectFrom('cabinet_recovery_codes').selectAll().execute()) + JSON.stringify(row);
    expect(dump).not.toContain(secretToBase32(secret));
    expect(dump).not.toContain(Buffer.from(secret).toString('hex'));
    for (const c of codes) expect(dump).not.toContain(c.replace('-', ''));
  });

  it('after the password only the second step: no session, pages still send to sign-in', async () => {
    const c = await challenge(email, '/keys');
    const keys = await get('/keys', c);
    expect(keys.status).toBe(303);
    expect(keys.headers.location).toMatch(/^\/login/);
    const step = await get('/login/two-factor', c);
    expect(step.status).toBe(200);
    expect(step.text).toContain('name="code"');
    // Without the challenge cookie there is no second step to take.
    expect((await get('/login/two-factor')).headers.location).toBe('/login');
  });

  it('a wrong code is refused; the right one starts a session and goes to next; the same code twice is refused', async () => {
    const c = await challenge(email, '/keys');
    const now = Date.now();
    const wrong = await post('/login/two-factor', { code: String((Number(totp(secret, now)) + 1) % 1_000_000).padStart(6, '0') }, c);
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('wrong or was used already');
    expect(cookieNamed(wrong, 'rpcctl_session')).toBeUndefined();
    // Enrolment used this step's code; the app's next one is inside the window.
    const code = totp(secret, now + 30_000);
    const ok = await post('/login/two-factor', { code }, c);
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe('/keys');
    const session = cookieNamed(ok, 'rpcctl_session')!;
    expect((await get('/keys', session)).status).toBe(200);
    // The challenge is spent with the sign-in.
    expect((await post('/login/two-factor', { code }, c)).headers.location).toBe('/login?expired=1');
    // A code seen once (over a shoulder, in a proxy log) does not sign in again.
    const again = await post('/login/two-factor', { code }, await challenge(email));
    expect(again.status).toBe(401);
  });

  it('a recovery code signs in once', async () => {
    // As people type them: capitals, no dash, a 0 or 1 for the o or l it looks like.
    const typed = codes[0]!.toUpperCase().replace('-', ' ').replace(/O/g, '0').replace(/L/g, '1');
    const ok = await post('/login/two-factor', { code: typed }, await challenge(email));
    expect(ok.status).toBe(303);
    expect(cookieNamed(ok, 'rpcctl_session')).toBeDefined();
    const overview = await get('/', cookieNamed(ok, 'rpcctl_session')!.concat('; ', cookieNamed(ok, 'rpcctl_flash')!));
    expect(overview.text).toContain('recovery code; 9 left');
    expect((await post('/login/two-factor', { code: codes[0]! }, await challenge(email))).status).toBe(401);
  });

  it('a one-time login link still asks for the second factor', async () => {
    const { token } = await createLoginLink(t.store, { accountId: userId, memberId: (await primaryOwner(t.store, userId))!.id });
    const res = await post(`/login/link/${token}`, {});
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/login/two-factor');
    expect(cookieNamed(res, 'rpcctl_session')).toBeUndefined();
    const c = cookieNamed(res, 'rpcctl_2fa')!;
    const ok = await post('/login/two-factor', { code: codes[1]! }, c);
    expect(ok.status).toBe(303);
    expect(cookieNamed(ok, 'rpcctl_session')).toBeDefined();
  });
});

describe('limits', () => {
  it('five wrong codes end a challenge; past 10 a minute per login even the right code is 429', async () => {
    const email = 'tf-limit@example.com';
    await login(email);
    const { secret } = await enrol(await passwordSession(email));
    const bad = String((Number(totp(secret, Date.now())) + 500_000) % 1_000_000).padStart(6, '0');
    const statuses: number[] = [];
    for (let round = 0; round < 2; round++) {
      const c = await challenge(email);
      for (let i = 0; i < 5; i++) statuses.push((await post('/login/two-factor', { code: bad }, c)).status);
      const spent = await post('/login/two-factor', { code: totp(secret, Date.now() + 30_000) }, c);
      expect(spent.headers.location, 'a used-up challenge asks for the password again').toBe('/login?expired=1');
    }
    expect(statuses).toEqual(Array(10).fill(401));
    const right = await post('/login/two-factor', { code: totp(secret, Date.now() + 30_000) }, await challenge(email));
    expect(right.status).toBe(429);
    expect(cookieNamed(right, 'rpcctl_session')).toBeUndefined();
  });
});

describe('the account policy and the admin reset', () => {
  it('with two-factor required, a login without it may only enrol; reset-2fa turns it off and ends sessions', async () => {
    const email = 'tf-policy@example.com';
    const userId = await login(email);
    const first = await passwordSession(email);
    // Nobody requires what they do not have themselves.
    const page = await get('/account/two-factor', first);
    expect((await post('/account/two-factor/policy', { _csrf: csrfOf(page.text), require: '1' }, first)).status).toBe(400);
    const { secret } = await enrol(first);
    expect((await post('/account/two-factor/policy', { _csrf: csrfOf(page.text), require: '1' }, first)).status).toBe(303);
    // Turning it off for yourself waits until the requirement is off.
    expect((await post('/account/two-factor/disable', { _csrf: csrfOf(page.text), proof: PASSWORD }, first)).status).toBe(400);

    const shown = async () => JSON.parse((await cli(['admin', 'accounts', 'get', String(userId), '--data-dir', t.dataDir, '--json'])).stdout).two_factor;
    expect(await shown()).toEqual({ enabled: true, required: true, recovery_codes_left: 10 });
    const reset = await cli(['admin', 'accounts', 'reset-2fa', String(userId), '--data-dir', t.dataDir, '--json']);
    expect(reset.code, reset.stderr).toBe(0);
    expect(JSON.parse(reset.stdout)).toEqual({ user_id: userId, email, two_factor_was_on: true });
    expect((await get('/keys', first)).headers.location, 'the old session ended').toMatch(/^\/login/);
    expect(await shown()).toEqual({ enabled: false, required: true, recovery_codes_left: 0 });

    const s = await passwordSession(email);
    const keys = await get('/keys', s);
    expect(keys.status).toBe(303);
    expect(keys.headers.location).toBe('/account/two-factor');
    // An htmx request is sent there as a whole window, not swapped into a fragment.
    const hx = await request(`${t.baseUrl}/keys`, { headers: { cookie: s, 'hx-request': 'true' } });
    await hx.body.dump();
    expect(hx.headers['hx-redirect']).toBe('/account/two-factor');
    const enrolPage = await get('/account/two-factor', s);
    expect(enrolPage.text).toContain('requires two-factor sign-in for every login');
    expect((await post('/keys', { _csrf: csrfOf(enrolPage.text), name: 'x' }, s)).status).toBe(403);
    const again = await enrol(s);
    expect(Buffer.from(again.secret).equals(Buffer.from(secret))).toBe(false);
    expect((await get('/keys', s)).status).toBe(200);

    const twice = await cli(['admin', 'accounts', 'reset-2fa', String(userId), '--data-dir', t.dataDir]);
    expect(twice.code, twice.stderr).toBe(0);
    const off = await cli(['admin', 'accounts', 'reset-2fa', String(userId), '--data-dir', t.dataDir]);
    expect(off.stderr).toContain('had no two-factor sign-in');
  });

  it('disable and new recovery codes need the password or a code', async () => {
    const email = 'tf-off@example.com';
    await login(email);
    const s = await passwordSession(email);
    const { secret, codes } = await enrol(s);
    const csrf = csrfOf((await get('/account/two-factor', s)).text);
    expect((await post('/account/two-factor/recovery', { _csrf: csrf, proof: 'wrong password!!' }, s)).status).toBe(400);
    const fresh = await post('/account/two-factor/recovery', { _csrf: csrf, proof: totp(secret, Date.now() + 30_000) }, s);
    expect(fresh.status).toBe(200);
    expect(fresh.text).toContain('id="recovery-codes"');
    // The old codes stopped working.
    expect((await post('/login/two-factor', { code: codes[2]! }, await challenge(email))).status).toBe(401);
    expect((await post('/account/two-factor/disable', { _csrf: csrf, proof: 'wrong password!!' }, s)).status).toBe(400);
    expect((await post('/account/two-factor/disable', { _csrf: csrf, proof: PASSWORD }, s)).status).toBe(303);
    expect(cookieNamed(await post('/login', { email, password: PASSWORD }), 'rpcctl_session')).toBeDefined();
  });
});

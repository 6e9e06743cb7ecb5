import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cabinetForms, cookieNamed, csrfOf, type FormResponse } from './helpers/cabinet-forms.js';
import { cli } from './helpers/cli.js';
import { signedCall, startTestService, type Merchant, type TestService } from './helpers/service.js';
import { freshSchema, testDatabaseUrl } from './helpers/shared-stores.js';
import { setLogin } from '../src/cabinet/index.js';
import { newTotpSecret, secretFromBase32, secretToBase32, totp } from '../src/cabinet/totp.js';
import { createApiKey, listMembers, memberByEmail, primaryOwner, type Role } from '../src/store/index.js';
import { migrationProvider } from '../src/store/migrations.js';
import { openSqlite } from '../src/store/sqlite-dialect.js';
import { openPostgres, PostgresSchemaPlugin } from '../src/store/dialect.js';

// Members and roles over plain HTTP: the invitation link, each role's allowed and refused
// actions in the cabinet and through the API (a key acts with its maker's role), the last-owner
// rule, `rpcctl admin members`, and the migration that turns an account's login into its owner.

let t: TestService;
const PASSWORD = 'a long enough password';

beforeAll(async () => {
  t = await startTestService({}, { cabinet: { signIn: { perIpPerMinute: 1000, perEmailPerMinute: 100 } } });
});
afterAll(() => t?.stop());

const { get, post } = cabinetForms(() => t.baseUrl);
const json = (v: unknown) => JSON.stringify(v);

async function signIn(email: string, password = PASSWORD): Promise<{ cookie: string; csrf: string }> {
  const res = await post('/login', { email, password });
  expect(res.status, `sign-in of ${email}`).toBe(303);
  const cookie = cookieNamed(res, 'rpcctl_session')!;
  expect(cookie).toBeDefined();
  return { cookie, csrf: csrfOf((await get('/account', cookie)).text) };
}

/** An owner invites `email` as `role`; the invitee opens the link, chooses a password and is signed in. */
async function invite(owner: { cookie: string; csrf: string }, email: string, role: Role): Promise<{ cookie: string; csrf: string; link: string }> {
  const res = await post('/members/invite', { _csrf: owner.csrf, email, role }, owner.cookie);
  expect(res.status).toBe(200);
  const link = /id="invite-link"[^>]*>([^<]+)</.exec(res.text)![1]!;
  const path = new URL(link).pathname;
  expect(path).toMatch(/^\/join\/[A-Za-z0-9_-]{43}$/);
  const joined = await post(path, { password: PASSWORD, confirm: PASSWORD });
  expect(joined.status).toBe(303);
  const cookie = cookieNamed(joined, 'rpcctl_session')!;
  expect(cookie).toBeDefined();
  return { cookie, csrf: csrfOf((await get('/account', cookie)).text), link: path };
}

/** A key as if `email` had made it in the cabinet (only owners may; a key keeps its maker's role as it changes). */
async function keyOf(m: Merchant, email: string) {
  const member = (await memberByEmail(t.store, email))!;
  const key = await createApiKey(t.store, { accountId: m.userId, createdByMember: member.id });
  return (method: string, path: string, body = '') => signedCall(t.baseUrl, key.api_key, key.secret, method, path, body);
}

describe('invitations', () => {
  it('an owner invites by a one-time link; the invitee sets a password and signs in with it; the link works once', async () => {
    const m = await t.merchant();
    await setLogin(t.store, m.userId, { email: 'inv-owner@example.com', password: PASSWORD });
    const owner = await signIn('inv-owner@example.com');
    const page = await get('/members', owner.cookie);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Invite a member');

    const res = await post('/members/invite', { _csrf: owner.csrf, email: 'Inv-Dev@Example.com', role: 'developer' }, owner.cookie);
    expect(res.status).toBe(200);
    const path = new URL(/id="invite-link"[^>]*>([^<]+)</.exec(res.text)![1]!).pathname;
    // Invited, not joined: no password, so no sign-in yet.
    expect((await get('/members', owner.cookie)).text).toMatch(/inv-dev@example\.com[\s\S]*?invited/);
    expect((await post('/login', { email: 'inv-dev@example.com', password: PASSWORD })).status).toBe(401);
    // Opening the link only asks (a mail scanner's prefetch must not use it up).
    const form = await get(path);
    expect(form.status).toBe(200);
    expect(form.text).toContain('value="inv-dev@example.com"');
    expect((await get(path)).status).toBe(200);
    // A refused password leaves the link working.
    expect((await post(path, { password: 'short', confirm: 'short' })).status).toBe(400);
    expect((await post(path, { password: PASSWORD, confirm: PASSWORD + 'x' })).status).toBe(400);
    const joined = await post(path, { password: PASSWORD, confirm: PASSWORD });
    expect(joined.status).toBe(303);
    expect(cookieNamed(joined, 'rpcctl_session')).toBeDefined();
    expect((await post(path, { password: PASSWORD, confirm: PASSWORD })).status).toBe(410);
    expect((await get(path)).status).toBe(410);
    // Their own login: the header shows their e-mail, the password signs them in.
    const dev = await signIn('inv-dev@example.com');
    expect((await get('/', dev.cookie)).text).toContain('inv-dev@example.com');
    const members = await listMembers(t.store, m.userId);
    expect(members.map((x) => [x.email, x.role, x.joinedAt !== null])).toEqual([
      ['inv-owner@example.com', 'owner', true], ['inv-dev@example.com', 'developer', true],
    ]);
    // A lost invitation: the owner makes a new link and the old one stops working.
    const pending = await post('/members/invite', { _csrf: owner.csrf, email: 'inv-late@example.com', role: 'viewer' }, owner.cookie);
    const lost = new URL(/id="invite-link"[^>]*>([^<]+)</.exec(pending.text)![1]!).pathname;
    const lateId = (await memberByEmail(t.store, 'inv-late@example.com'))!.id;
    const again = await post(`/members/${lateId}/invitation`, { _csrf: owner.csrf }, owner.cookie);
    expect(again.status).toBe(200);
    const fresh = new URL(/id="invite-link"[^>]*>([^<]+)</.exec(again.text)![1]!).pathname;
    expect(fresh).not.toBe(lost);
    expect((await get(lost)).status).toBe(410);
    expect((await get(fresh)).status).toBe(200);
    const devId = (await memberByEmail(t.store, 'inv-dev@example.com'))!.id;
    expect((await post(`/members/${devId}/invitation`, { _csrf: owner.csrf }, owner.cookie)).status).toBe(400);
    expect((await post(`/members/${lateId}/invitation`, { _csrf: dev.csrf }, dev.cookie)).status).toBe(403);
    // Only hashes of the link are stored.
    expect(JSON.stringify(await t.store.db.selectFrom('cabinet_login_links').selectAll().execute())).not.toContain(path.slice(6));
  });

  it('an e-mail that already signs in anywhere cannot be invited again', async () => {
    const m = await t.merchant();
    await setLogin(t.store, m.userId, { email: 'dup-owner@example.com', password: PASSWORD });
    const owner = await signIn('dup-owner@example.com');
    const res = await post('/members/invite', { _csrf: owner.csrf, email: 'inv-owner@example.com', role: 'viewer' }, owner.cookie);
    expect(res.status).toBe(400);
    expect(res.text).toContain('already signs in to an account of this service');
    // Never which account: an owner must not map e-mails to other tenants.
    expect(res.text).not.toMatch(/already signs in to account/);
    expect((await post('/members/invite', { _csrf: owner.csrf, email: 'x@example.com', role: 'admin' }, owner.cookie)).status).toBe(400);
  });

  it('with two-factor required, the invitee must set it up before anything else', async () => {
    const m = await t.merchant();
    await setLogin(t.store, m.userId, { email: 'tfa-owner@example.com', password: PASSWORD });
    const owner = await signIn('tfa-owner@example.com');
    const res = await post('/members/invite', { _csrf: owner.csrf, email: 'tfa-dev@example.com', role: 'developer' }, owner.cookie);
    const path = new URL(/id="invite-link"[^>]*>([^<]+)</.exec(res.text)![1]!).pathname;
    // The owner turns the policy on (their own enrolment is the two-factor tests' part).
    await t.store.db.insertInto('cabinet_policies').values({ account_id: m.userId, require_two_factor: 1, updated_at: new Date().toISOString() }).execute();
    const joined = await post(path, { password: PASSWORD, confirm: PASSWORD });
    expect(joined.status).toBe(303);
    const cookie = cookieNamed(joined, 'rpcctl_session')!;
    expect((await get('/endpoints', cookie)).headers.location).toBe('/account/two-factor');
    expect((await get('/account/two-factor', cookie)).text).toContain('id="totp-secret"');
  });
});

describe('roles', () => {
  let m: Merchant;
  let owner: { cookie: string; csrf: string };
  let dev: { cookie: string; csrf: string };
  let viewer: { cookie: string; csrf: string };
  let network: string;

  beforeAll(async () => {
    m = await t.merchant();
    await setLogin(t.store, m.userId, { email: 'r-owner@example.com', password: PASSWORD });
    owner = await signIn('r-owner@example.com');
    dev = await invite(owner, 'r-dev@example.com', 'developer');
    viewer = await invite(owner, 'r-viewer@example.com', 'viewer');
    const n = (await m.call('GET', '/v1/endpoints/available-networks')).body.networks[0];
    network = `${n.slug}:${n.environment_kinds[0]}`;
  });

  const refused = (res: FormResponse) => {
    expect(res.status).toBe(403);
    expect(res.text).toContain('Not allowed for your role');
  };

  it('a viewer reads every page and changes nothing: each change is a 403 page', async () => {
    for (const path of ['/', '/keys', '/endpoints', '/members', '/account', '/webhook', '/watch', '/payments', '/payments/settings']) {
      expect((await get(path, viewer.cookie)).status, path).toBe(200);
    }
    const members = await get('/members', viewer.cookie);
    expect(members.text).toContain('id="role-notice"');
    expect((await get('/members', dev.cookie)).text).not.toContain('id="role-notice"');
    expect(members.text).not.toContain('Invite a member');
    expect(members.text).not.toContain('Change role');
    const { csrf, cookie } = viewer;
    refused(await post('/keys', { _csrf: csrf, name: 'x' }, cookie));
    refused(await post('/endpoints', { _csrf: csrf, name: 'v', network }, cookie));
    refused(await post('/members/invite', { _csrf: csrf, email: 'v2@example.com', role: 'viewer' }, cookie));
    refused(await post('/payments/settings', { _csrf: csrf }, cookie));
    refused(await post('/watch/addresses', { _csrf: csrf }, cookie));
    refused(await post('/webhook', { _csrf: csrf, url: 'https://example.com/hook' }, cookie));
    refused(await post('/account/two-factor/policy', { _csrf: csrf, require: '1' }, cookie));
    const owners = await listMembers(t.store, m.userId);
    refused(await post(`/members/${owners[0]!.id}/role`, { _csrf: csrf, role: 'viewer' }, cookie));
    // Their own login is theirs: a wrong current password is a 400, not a 403; so is turning off
    // their own second factor with a wrong proof (it was a 403 before the review).
    expect((await post('/account/password', { _csrf: csrf, current: 'wrong password!', password: PASSWORD, confirm: PASSWORD }, cookie)).status).toBe(400);
    expect((await post('/account/two-factor/disable', { _csrf: csrf, proof: 'wrong password!' }, cookie)).status).toBe(400);
    expect((await get('/endpoints', cookie)).text).not.toContain('>v<');
  });

  it('a developer works on endpoints but not on keys, members or payment settings', async () => {
    const { csrf, cookie } = dev;
    const made = await post('/endpoints', { _csrf: csrf, name: 'dev-made', network }, cookie);
    expect(made.status).toBe(303);
    expect(made.headers.location).toMatch(/^\/endpoints\/\d+$/);
    refused(await post('/keys', { _csrf: csrf, name: 'x' }, cookie));
    refused(await get('/keys/abcdef12/revoke', cookie));
    refused(await post('/members/invite', { _csrf: csrf, email: 'd2@example.com', role: 'viewer' }, cookie));
    refused(await post('/payments/settings', { _csrf: csrf }, cookie));
    expect((await get('/members', cookie)).text).not.toContain('Invite a member');
  });

  it('an owner makes keys, and the key records who made it', async () => {
    const res = await post('/keys', { _csrf: owner.csrf, name: 'by-owner' }, owner.cookie);
    expect(res.status).toBe(200);
    const row = await t.store.db.selectFrom('api_keys').select('created_by_member').where('name', '=', 'by-owner').executeTakeFirstOrThrow();
    expect(row.created_by_member).toBe((await memberByEmail(t.store, 'r-owner@example.com'))!.id);
  });

  it('through the API a key acts with its maker\'s role: a viewer\'s key reads only, a developer\'s cannot change payment settings', async () => {
    const asViewer = await keyOf(m, 'r-viewer@example.com');
    const asDev = await keyOf(m, 'r-dev@example.com');
    const [networkSlug, envSlug] = network.split(':');
    const body = json({ name: 'api-made', network_slug: networkSlug, env_slug: envSlug });

    expect((await asViewer('GET', '/v1/endpoints')).status).toBe(200);
    expect((await asViewer('GET', '/v1/payments/settings')).status).toBe(200);
    for (const [method, path, b] of [
      ['POST', '/v1/endpoints', body], ['PUT', '/v1/payments/settings', json({ underpaid_tolerance_bps: 10 })],
      ['PUT', '/v1/address-watch/webhook', json({ url: 'https://example.com/h' })],
    ] as const) {
      const res = await asViewer(method, path, b);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error).toMatch(/role of the member who made it \(viewer\), which may only read/);
    }

    expect((await asDev('POST', '/v1/endpoints', body)).status).toBe(200);
    const settings = await asDev('PUT', '/v1/payments/settings', json({ underpaid_tolerance_bps: 10 }));
    expect(settings.status).toBe(403);
    expect(settings.body.error).toMatch(/\(developer\).*PUT \/v1\/payments\/settings needs the owner role/);
    // openapi.json says which role each operation needs.
    const doc = JSON.parse((await get('/v1/openapi.json')).text);
    expect([doc.paths['/v1/payments/settings'].put['x-rpcctl-role'], doc.paths['/v1/endpoints'].post['x-rpcctl-role'], doc.paths['/v1/endpoints'].get['x-rpcctl-role']])
      .toEqual(['owner', 'developer', 'viewer']);
    const asOwner = await keyOf(m, 'r-owner@example.com');
    expect((await asOwner('PUT', '/v1/payments/settings', json({ underpaid_tolerance_bps: 20 }))).status).toBe(200);
    // The merchant's key predates members (no maker): it acts as an owner.
    expect((await m.call('PUT', '/v1/payments/settings', json({ underpaid_tolerance_bps: 10 }))).status).toBe(200);
  });

  it('a role change applies to the member\'s keys at once; removing a member revokes the keys they made', async () => {
    const asDev = await keyOf(m, 'r-dev@example.com');
    const devId = (await memberByEmail(t.store, 'r-dev@example.com'))!.id;
    const before = await asDev('POST', '/v1/endpoints', json({ name: 'x' }));
    expect(before.status).toBe(400); // past the role check, refused by validation
    expect((await post(`/members/${devId}/role`, { _csrf: owner.csrf, role: 'viewer' }, owner.cookie)).status).toBe(303);
    expect((await asDev('POST', '/v1/endpoints', json({ name: 'x' }))).status).toBe(403);
    refused(await post('/endpoints', { _csrf: dev.csrf, name: 'again', network }, dev.cookie));
    expect((await post(`/members/${devId}/role`, { _csrf: owner.csrf, role: 'developer' }, owner.cookie)).status).toBe(303);
    expect((await asDev('POST', '/v1/endpoints', json({ name: 'x' }))).status).toBe(400);

    const removed = await post(`/members/${devId}/remove`, { _csrf: owner.csrf }, owner.cookie);
    expect(removed.status).toBe(303);
    expect((await asDev('GET', '/v1/endpoints')).status).toBe(401);
    // Their session ended with them.
    expect((await get('/endpoints', dev.cookie)).headers.location).toMatch(/^\/login/);
    expect((await post('/login', { email: 'r-dev@example.com', password: PASSWORD })).status).toBe(401);
  });
});

describe('each member\'s own second factor', () => {
  it('one member\'s two-factor asks nothing of another; a key enrolled before members still signs in', async () => {
    const m = await t.merchant();
    await setLogin(t.store, m.userId, { email: 'own-owner@example.com', password: PASSWORD });
    const owner = await signIn('own-owner@example.com');
    const dev = await invite(owner, 'own-dev@example.com', 'developer');
    const page = await get('/account/two-factor', dev.cookie);
    const secret = secretFromBase32(/id="totp-secret"[^>]*>([A-Z2-7 ]+)</.exec(page.text)![1]!);
    expect((await post('/account/two-factor/confirm', { _csrf: dev.csrf, code: totp(secret, Date.now()) }, dev.cookie)).status).toBe(200);
    // The developer now signs in in two steps; the owner still in one.
    expect((await post('/login', { email: 'own-dev@example.com', password: PASSWORD })).headers.location).toBe('/login/two-factor');
    expect((await post('/login', { email: 'own-owner@example.com', password: PASSWORD })).headers.location).toBe('/');

    // A key sealed under the login row's old name (before migration 0027) is read with that name.
    const ownerId = (await primaryOwner(t.store, m.userId))!.id;
    const old = newTotpSecret();
    await t.store.db.updateTable('cabinet_members')
      .set({ totp_secret: t.store.secrets.seal(secretToBase32(old), `cabinet_logins:${m.userId}:totp_secret`), totp_enabled_at: new Date().toISOString() })
      .where('id', '=', ownerId).execute();
    const first = await post('/login', { email: 'own-owner@example.com', password: PASSWORD });
    expect(first.headers.location).toBe('/login/two-factor');
    const done = await post('/login/two-factor', { code: totp(old, Date.now()) }, cookieNamed(first, 'rpcctl_2fa')!);
    expect(done.status).toBe(303);
    expect(cookieNamed(done, 'rpcctl_session')).toBeDefined();
  });
});

describe('the last owner', () => {
  it('cannot be demoted or leave; with a second owner who has joined, they can', async () => {
    const m = await t.merchant();
    await setLogin(t.store, m.userId, { email: 'lo-owner@example.com', password: PASSWORD });
    const owner = await signIn('lo-owner@example.com');
    const ownerId = (await primaryOwner(t.store, m.userId))!.id;
    const demote = await post(`/members/${ownerId}/role`, { _csrf: owner.csrf, role: 'developer' }, owner.cookie);
    expect(demote.status).toBe(409);
    expect(demote.text).toContain('last owner');
    expect((await post('/members/leave', { _csrf: owner.csrf }, owner.cookie)).status).toBe(409);
    // An invited owner who has not joined does not count.
    await post('/members/invite', { _csrf: owner.csrf, email: 'lo-pending@example.com', role: 'owner' }, owner.cookie);
    expect((await post(`/members/${ownerId}/role`, { _csrf: owner.csrf, role: 'viewer' }, owner.cookie)).status).toBe(409);
    const second = await invite(owner, 'lo-second@example.com', 'owner');
    expect((await post(`/members/${ownerId}/role`, { _csrf: owner.csrf, role: 'viewer' }, owner.cookie)).status).toBe(303);
    expect((await listMembers(t.store, m.userId)).find((x) => x.id === ownerId)!.role).toBe('viewer');
    // Now the second is the last owner: cannot leave, and the demoted one may not promote themselves.
    expect((await post('/members/leave', { _csrf: second.csrf }, second.cookie)).status).toBe(409);
    expect((await post(`/members/${ownerId}/role`, { _csrf: owner.csrf, role: 'owner' }, owner.cookie)).status).toBe(403);
    const left = await post('/members/leave', { _csrf: owner.csrf }, owner.cookie);
    expect(left.status).toBe(303);
    expect(left.headers.location).toBe('/login');
    expect((await listMembers(t.store, m.userId)).map((x) => x.email)).toEqual(['lo-pending@example.com', 'lo-second@example.com']);
  });
});

describe('rpcctl admin members', () => {
  it('lists an account\'s members and resets one: a set-password link, two-factor off', async () => {
    const m = await t.merchant();
    await setLogin(t.store, m.userId, { email: 'adm-owner@example.com', password: PASSWORD });
    const owner = await signIn('adm-owner@example.com');
    await invite(owner, 'adm-dev@example.com', 'developer');
    const list = await cli(['admin', 'members', 'list', '--account', String(m.userId), '--data-dir', t.dataDir, '--json']);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).map((r: { email: string; role: string }) => [r.email, r.role])).toEqual([
      ['adm-owner@example.com', 'owner'], ['adm-dev@example.com', 'developer'],
    ]);
    const table = await cli(['admin', 'members', 'list', '--account', String(m.userId), '--data-dir', t.dataDir]);
    expect(table.stdout).toMatch(/adm-dev@example\.com\s+developer\s+joined/);

    expect((await cli(['admin', 'members', 'reset', '--account', String(m.userId), '--email', 'adm-dev@example.com', '--data-dir', t.dataDir])).code).not.toBe(0);
    const other = await cli(['admin', 'members', 'reset', '--account', String(m.userId), '--email', 'r-owner@example.com', '--password-link', '--data-dir', t.dataDir]);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain('has no member');

    const reset = await cli(['admin', 'members', 'reset', '--account', String(m.userId), '--email', 'adm-dev@example.com', '--password-link', '--remove-2fa',
      '--base-url', t.baseUrl, '--data-dir', t.dataDir, '--json']);
    expect(reset.code).toBe(0);
    const out = JSON.parse(reset.stdout);
    expect(out).toMatchObject({ email: 'adm-dev@example.com', two_factor_was_on: false });
    const path = new URL(out.password_link).pathname;
    const NEW = 'another long password';
    expect((await post(path, { password: NEW, confirm: NEW })).status).toBe(303);
    expect((await post('/login', { email: 'adm-dev@example.com', password: PASSWORD })).status).toBe(401);
    expect((await post('/login', { email: 'adm-dev@example.com', password: NEW })).status).toBe(303);
    // A set-password link is no sign-in link, and the other way round.
    expect((await post(`/login/link/${path.slice(6)}`, {})).status).toBe(410);
    // A sign-in link names the member by e-mail (with --account, the first owner).
    const link = await cli(['admin', 'login-link', '--email', 'adm-dev@example.com', '--base-url', t.baseUrl, '--data-dir', t.dataDir, '--json']);
    expect(link.code, link.stderr).toBe(0);
    const signedIn = await post(new URL(JSON.parse(link.stdout).url).pathname, {});
    expect(signedIn.status).toBe(303);
    expect((await get('/', cookieNamed(signedIn, 'rpcctl_session')!)).text).toContain('adm-dev@example.com');
    expect((await post(`/join/${new URL(JSON.parse(link.stdout).url).pathname.split('/').pop()}`, { password: NEW, confirm: NEW })).status).toBe(410);
  });
});

describe('migration 0027', () => {
  const kinds = testDatabaseUrl ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);
  for (const kind of kinds) {
    it(`makes each account's login its first owner and moves sessions, links and recovery codes to it (${kind})`, async () => {
      let db: Kysely<any>;
      let cleanup: () => Promise<void>;
      if (kind === 'sqlite') {
        const dir = mkdtempSync(join(tmpdir(), 'rpcctl-members-mig-'));
        db = new Kysely({ dialect: openSqlite(join(dir, 'rpcctl.db')).dialect });
        cleanup = async () => { await db.destroy(); rmSync(dir, { recursive: true, force: true }); };
      } else {
        const schema = await freshSchema();
        db = new Kysely({ dialect: openPostgres(schema.url).dialect, plugins: [new PostgresSchemaPlugin()] });
        cleanup = async () => { await db.destroy(); await schema.drop(); };
      }
      try {
        const migrationTableSchema = kind === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]!.s : undefined;
        const migrator = new Migrator({ db, provider: migrationProvider, migrationTableSchema });
        expect((await migrator.migrateTo('0026_cabinet_totp')).error).toBeUndefined();
        const now = new Date().toISOString();
        await db.insertInto('plans').values({ id: 1, slug: 'p', name: 'P', included_credits: 1, rps_limit: 1, endpoints_limit: 1 }).execute();
        for (const id of [1, 2]) {
          await db.insertInto('accounts').values({ id, name: null, plan_id: 1, webhook_secret: 'x', created_at: now }).execute();
        }
        await db.insertInto('cabinet_logins').values({ account_id: 2, email: 'two@example.com', password_hash: 'scrypt$h', updated_at: now, totp_secret: 'v1.sealed' }).execute();
        await db.insertInto('cabinet_sessions').values([
          { id_hash: 's2', account_id: 2, csrf_token: 'c', created_at: 1, last_seen_at: 1, user_agent: null },
          { id_hash: 's1', account_id: 1, csrf_token: 'c', created_at: 1, last_seen_at: 1, user_agent: null },
        ]).execute();
        await db.insertInto('cabinet_recovery_codes').values({ account_id: 2, code_hash: 'h', used_at: null }).execute();
        await db.insertInto('cabinet_login_links').values({ token_hash: 't', account_id: 2, expires_at: 1, used_at: null }).execute();
        await db.insertInto('api_keys').values({ id: 'k', account_id: 2, prefix: 'k', secret: 's', name: null, allowed_ips: '[]', created_at: now, revoked_at: null }).execute();

        expect((await migrator.migrateToLatest()).error).toBeUndefined();
        const members = await db.selectFrom('cabinet_members').selectAll().execute();
        expect(members).toHaveLength(1);
        expect(members[0]).toMatchObject({ account_id: 2, email: 'two@example.com', password_hash: 'scrypt$h', role: 'owner', totp_secret: 'v1.sealed' });
        expect(members[0]!.joined_at).not.toBeNull();
        const id = Number(members[0]!.id);
        expect((await db.selectFrom('cabinet_sessions').select(['id_hash', 'member_id']).execute()).map((r) => [r.id_hash, Number(r.member_id)])).toEqual([['s2', id]]);
        expect(Number((await db.selectFrom('cabinet_recovery_codes').select('member_id').executeTakeFirstOrThrow()).member_id)).toBe(id);
        expect(await db.selectFrom('cabinet_login_links').select(['member_id', 'purpose']).executeTakeFirstOrThrow()).toMatchObject({ purpose: 'sign-in' });
        expect((await db.selectFrom('api_keys').select('created_by_member').executeTakeFirstOrThrow()).created_by_member).toBeNull();
      } finally {
        await cleanup();
      }
    });
  }
});

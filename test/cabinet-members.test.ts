import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cabinetForms, cookieNamed, csrfOf, type FormResponse } from './helpers/cabinet-forms.js';
import { cli } from './helpers/cli.js';
import { signedCall, startTestService, type Merchant, type TestService } from './helpers/service.js';
import { testDatabaseUrl } from './helpers/shared-stores.js';
import { migrationDb } from './helpers/migration-db.js';
import { setLogin } from '../src/cabinet/index.js';
import { newTotpSecret, secretFromBase32, secretToBase32, totp } from '../src/cabinet/totp.js';
import { createApiKey, listAudit, listMembers, memberByEmail, primaryOwner, type Role } from '../src/store/index.js';

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
    const lateId = (await memberByEmail(t.store, 'inv-late@example.com', m.userId))!.id;
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

  it('inviting an e-mail that signs in elsewhere and a free one: the same answer, the same /members listing, the same audit entry, a new link alike', async () => {
    const m = await t.merchant();
    await setLogin(t.store, m.userId, { email: 'dup-owner@example.com', password: PASSWORD });
    const owner = await signIn('dup-owner@example.com');
    const other = await t.merchant();
    await setLogin(t.store, other.userId, { email: 'elsewhere@example.com', password: PASSWORD });
    const taken = await post('/members/invite', { _csrf: owner.csrf, email: 'elsewhere@example.com', role: 'viewer' }, owner.cookie);
    const free = await post('/members/invite', { _csrf: owner.csrf, email: 'nowhere@example.com', role: 'viewer' }, owner.cookie);
    // The same page but for the address, the link's token, its expiry time and the rows' ids;
    // the free invitation's page lists the first one too, so the address is cut from its row.
    const same = (page: FormResponse, email: string) => page.text.replaceAll(email, 'EMAIL')
      .replace(/\/join\/[A-Za-z0-9_-]{43}/g, '/join/TOKEN').replace(/<time[^>]*>[^<]*<\/time>/g, 'TIME').replace(/\/members\/\d+\//g, '/members/ID/')
      .replace(/name="_csrf" value="[^"]+"/g, '');
    expect(taken.status).toBe(200);
    expect(free.status).toBe(200);
    const rowOf = (text: string, email: string) => new RegExp(`<tr data-member="${email.replace(/\./g, '\\.')}">[\\s\\S]*?</tr>`).exec(text)?.[0];
    expect(same(taken, 'elsewhere@example.com')).toBe(same({ ...free, text: free.text.replace(rowOf(free.text, 'elsewhere@example.com')!, '') }, 'nowhere@example.com'));
    expect(taken.text).not.toMatch(/already signs in|another account/);
    // A reload lists both alike, as invited.
    const list = (await get('/members', owner.cookie)).text;
    const rowTaken = rowOf(list, 'elsewhere@example.com');
    const rowFree = rowOf(list, 'nowhere@example.com');
    expect(rowTaken).toContain('invited');
    const norm = (row: string | undefined, email: string) => row?.replaceAll(email, 'EMAIL').replace(/\/members\/\d+\//g, '/members/ID/').replace(/name="_csrf" value="[^"]+"/g, '');
    expect(norm(rowTaken, 'elsewhere@example.com')).toBe(norm(rowFree, 'nowhere@example.com'));
    // The same audit entry for each.
    const entries = (await listAudit(t.store, { accountId: m.userId, limit: 10, action: 'member.invite' })).entries.reverse();
    expect(entries.map((e) => [e.action, e.target.type, e.changes, e.actor.label])).toEqual([
      ['member.invite', 'member', { email: 'elsewhere@example.com', role: 'viewer' }, 'dup-owner@example.com'],
      ['member.invite', 'member', { email: 'nowhere@example.com', role: 'viewer' }, 'dup-owner@example.com'],
    ]);
    // Both links open the same form; a new link works for both alike.
    const linkOf = (page: FormResponse) => new URL(/id="invite-link"[^>]*>([^<]+)</.exec(page.text)![1]!).pathname;
    expect((await get(linkOf(taken))).status).toBe(200);
    expect((await get(linkOf(free))).status).toBe(200);
    for (const email of ['elsewhere@example.com', 'nowhere@example.com']) {
      const id = (await memberByEmail(t.store, email, m.userId))!.id;
      expect((await post(`/members/${id}/invitation`, { _csrf: owner.csrf }, owner.cookie)).status).toBe(200);
    }
    // The other login is untouched: it signs in to its own account.
    expect((await memberByEmail(t.store, 'elsewhere@example.com'))!.accountId).toBe(other.userId);
    const elsewhere = await signIn('elsewhere@example.com');
    expect((await get('/members', elsewhere.cookie)).text).toContain(`Who signs in to account ${other.userId}.`);
    // One of the account's own members or invitations is told so (the owner sees them in the list anyway).
    for (const email of ['dup-owner@example.com', 'nowhere@example.com']) {
      const own = await post('/members/invite', { _csrf: owner.csrf, email, role: 'viewer' }, owner.cookie);
      expect(own.status).toBe(409);
      expect(own.text).toContain('is a member of this account already');
    }
    expect((await post('/members/invite', { _csrf: owner.csrf, email: 'x@example.com', role: 'admin' }, owner.cookie)).status).toBe(400);
  });

  it('two invitations of one e-mail to one account at once: one is stored, the other gets the refusal an own member gets', async () => {
    const m = await t.merchant();
    await setLogin(t.store, m.userId, { email: 'race-owner@example.com', password: PASSWORD });
    const owner = await signIn('race-owner@example.com');
    const answers = await Promise.all([1, 2].map(() => post('/members/invite', { _csrf: owner.csrf, email: 'race@example.com', role: 'viewer' }, owner.cookie)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(answers.find((a) => a.status === 409)!.text).toContain('race@example.com is a member of this account already');
    expect((await listMembers(t.store, m.userId)).filter((x) => x.email === 'race@example.com')).toHaveLength(1);
  });

  it('joining with an e-mail that signs in elsewhere tells the invitee to sign in with their login; the invitation waits, and joins once that login is gone', async () => {
    const m = await t.merchant();
    await setLogin(t.store, m.userId, { email: 'j-owner@example.com', password: PASSWORD });
    const owner = await signIn('j-owner@example.com');
    const other = await t.merchant();
    await setLogin(t.store, other.userId, { email: 'j-taken@example.com', password: PASSWORD });
    const page = await post('/members/invite', { _csrf: owner.csrf, email: 'j-taken@example.com', role: 'developer' }, owner.cookie);
    const path = new URL(/id="invite-link"[^>]*>([^<]+)</.exec(page.text)![1]!).pathname;
    // Opening the link shows the form a free e-mail's link shows.
    const form = await get(path);
    expect(form.status).toBe(200);
    expect(form.text).toContain('value="j-taken@example.com"');
    expect(form.text).not.toMatch(/already signs in|login already/);
    // Choosing a password: the invitee is told, and nothing changes.
    const NEW = 'the invitee new password';
    const refused = await post(path, { password: NEW, confirm: NEW });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('j-taken@example.com already signs in to an account of this service');
    expect(refused.text).toContain('href="/login"');
    expect(cookieNamed(refused, 'rpcctl_session')).toBeUndefined();
    expect((await memberByEmail(t.store, 'j-taken@example.com', m.userId))).toMatchObject({ joinedAt: null, hasPassword: false });
    expect((await post('/login', { email: 'j-taken@example.com', password: NEW })).status).toBe(401);
    const theirs = await signIn('j-taken@example.com');
    expect((await get('/members', theirs.cookie)).text).toContain(`Who signs in to account ${other.userId}.`);
    // The owner's list still says invited; the link still opens.
    expect((await get('/members', owner.cookie)).text).toMatch(/j-taken@example\.com[\s\S]*?invited/);
    expect((await get(path)).status).toBe(200);
    // Once that login signs in with another address, the same link joins this account.
    await setLogin(t.store, other.userId, { email: 'j-moved@example.com' });
    const joined = await post(path, { password: NEW, confirm: NEW });
    expect(joined.status).toBe(303);
    const now = await signIn('j-taken@example.com', NEW);
    expect((await get('/members', now.cookie)).text).toContain(`Who signs in to account ${m.userId}.`);
  });

  it('two accounts invite one free e-mail: both are listed; the first to join gets the login, the other is told on joining', async () => {
    const owners = [];
    for (const n of [1, 2]) {
      const m = await t.merchant();
      await setLogin(t.store, m.userId, { email: `multi-owner${n}@example.com`, password: PASSWORD });
      owners.push({ m, s: await signIn(`multi-owner${n}@example.com`) });
    }
    const links = [];
    for (const o of owners) {
      const page = await post('/members/invite', { _csrf: o.s.csrf, email: 'multi@example.com', role: 'viewer' }, o.s.cookie);
      expect(page.status).toBe(200);
      links.push(new URL(/id="invite-link"[^>]*>([^<]+)</.exec(page.text)![1]!).pathname);
      expect((await get('/members', o.s.cookie)).text).toMatch(/multi@example\.com[\s\S]*?invited/);
    }
    expect((await post('/login', { email: 'multi@example.com', password: PASSWORD })).status).toBe(401);
    expect((await post(links[1]!, { password: PASSWORD, confirm: PASSWORD })).status).toBe(303);
    expect((await post(links[0]!, { password: PASSWORD, confirm: PASSWORD })).status).toBe(409);
    expect((await memberByEmail(t.store, 'multi@example.com'))!.accountId).toBe(owners[1]!.m.userId);
  });

  it('an e-mail with control characters is refused in the cabinet and by admin; one stored before is shown escaped by admin members list', async () => {
    const m = await t.merchant();
    await setLogin(t.store, m.userId, { email: 'ctl-owner@example.com', password: PASSWORD });
    const owner = await signIn('ctl-owner@example.com');
    for (const email of ['a\u001b[31m@example.com', 'a\u0000b@example.com', 'a\r\nb@example.com', 'a@example.com\u001b]0;pwned\u0007']) {
      const res = await post('/members/invite', { _csrf: owner.csrf, email, role: 'viewer' }, owner.cookie);
      expect(res.status, JSON.stringify(email)).toBe(400);
      expect(res.text).toContain('an e-mail address has no control characters');
      const made = await cli(['admin', 'accounts', 'create', '--email', email, '--no-password', '--data-dir', t.dataDir]);
      expect(made.code).toBe(2);
      expect(made.stderr).toBe('error: an e-mail address has no control characters\n');
    }
    expect((await listMembers(t.store, m.userId)).map((x) => x.email)).toEqual(['ctl-owner@example.com']);
    // A row from before the rule (written straight to the store): the operator's terminal shows it escaped.
    const now = new Date().toISOString();
    await t.store.db.insertInto('cabinet_members').values({ account_id: m.userId, email: 'old\u001b[2J\r\nfake@example.com', password_hash: null, role: 'viewer', created_at: now, joined_at: null, updated_at: now }).execute();
    for (const tty of [true, false]) {
      const list = await cli(['admin', 'members', 'list', '--account', String(m.userId), '--data-dir', t.dataDir], { tty, columns: 200, env: { NO_COLOR: '1' } });
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).not.toMatch(/[\u001b\r]/);
      expect(list.stdout).toContain('old\\x1b[2J\\r\\nfake@example.com');
      expect(list.stdout.trimEnd().split('\n')).toHaveLength(tty ? 3 : 2);
    }
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

    // What the cabinet keeps of the member, in each of its tables (a second factor's codes and challenge written here).
    await t.store.db.insertInto('cabinet_recovery_codes').values({ account_id: m.userId, member_id: devId, code_hash: 'gone-with-them', used_at: null }).execute();
    await t.store.db.insertInto('cabinet_sign_in_challenges').values({ token_hash: 'gone-with-them', account_id: m.userId, member_id: devId, next: '/', expires_at: Date.now() + 60_000 }).execute();
    const kept = async () => Promise.all([
      t.store.db.selectFrom('cabinet_sessions').select('member_id').where('member_id', '=', devId).execute(),
      t.store.db.selectFrom('cabinet_login_links').select('member_id').where('member_id', '=', devId).execute(),
      t.store.db.selectFrom('cabinet_recovery_codes').select('member_id').where('member_id', '=', devId).execute(),
      t.store.db.selectFrom('cabinet_sign_in_challenges').select('member_id').where('member_id', '=', devId).execute(),
    ]).then((tables) => tables.map((rows) => rows.length > 0));
    expect(await kept()).toEqual([true, true, true, true]);
    const removed = await post(`/members/${devId}/remove`, { _csrf: owner.csrf }, owner.cookie);
    expect(removed.status).toBe(303);
    expect(await kept()).toEqual([false, false, false, false]);
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
      const { db, migrator, cleanup } = await migrationDb(kind);
      try {
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

describe('migration 0031', () => {
  const kinds = testDatabaseUrl ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);
  for (const kind of kinds) {
    it(`keeps every member and makes an e-mail unique among joined members only, and once per account (${kind})`, async () => {
      const { db, migrator, cleanup } = await migrationDb(kind);
      try {
        expect((await migrator.migrateTo('0030_endpoint_names_unique')).error).toBeUndefined();
        const now = new Date().toISOString();
        await db.insertInto('plans').values({ id: 1, slug: 'p', name: 'P', included_credits: 1, rps_limit: 1, endpoints_limit: 1 }).execute();
        for (const id of [1, 2, 3]) {
          await db.insertInto('accounts').values({ id, name: null, plan_id: 1, webhook_secret: 'x', created_at: now }).execute();
        }
        const row = (account_id: number, email: string, joined: boolean) => ({
          account_id, email, password_hash: joined ? 'scrypt$h' : null, role: 'owner', created_at: now, joined_at: joined ? now : null, updated_at: now, totp_secret: joined ? 'v1.sealed' : null,
        });
        await db.insertInto('cabinet_members').values([row(1, 'a@example.com', true), row(1, 'b@example.com', false)]).execute();
        // Before: an invitation took its e-mail from the whole service.
        await expect(db.insertInto('cabinet_members').values(row(2, 'b@example.com', false)).execute()).rejects.toThrow();
        const before = await db.selectFrom('cabinet_members').selectAll().orderBy('id').execute();

        expect((await migrator.migrateToLatest()).error).toBeUndefined();
        expect(await db.selectFrom('cabinet_members').selectAll().orderBy('id').execute()).toEqual(before);
        // Invitations of an e-mail that signs in or is invited elsewhere are stored.
        await db.insertInto('cabinet_members').values([row(2, 'a@example.com', false), row(2, 'b@example.com', false), row(3, 'b@example.com', false)]).execute();
        // A second login of one e-mail is refused, so is a second row of one e-mail in one account.
        await expect(db.insertInto('cabinet_members').values(row(3, 'a@example.com', true)).execute()).rejects.toThrow();
        await expect(db.updateTable('cabinet_members').set({ joined_at: now }).where('account_id', '=', 2).where('email', '=', 'a@example.com').execute()).rejects.toThrow();
        await expect(db.insertInto('cabinet_members').values(row(1, 'b@example.com', false)).execute()).rejects.toThrow();
        // A joined one among invitations is fine, and new ids continue after the kept ones.
        await db.updateTable('cabinet_members').set({ joined_at: now }).where('account_id', '=', 3).where('email', '=', 'b@example.com').execute();
        const ids = (await db.selectFrom('cabinet_members').select('id').orderBy('id').execute()).map((r) => Number(r.id));
        expect(new Set(ids).size).toBe(5);
        expect(Math.min(...ids.slice(2))).toBeGreaterThan(Math.max(...before.map((r) => Number(r.id))));
      } finally {
        await cleanup();
      }
    });
  }
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { axeViolations, launchBrowser, screenshotAll, type TestBrowser } from './helpers/browser.js';
import { cli } from './helpers/cli.js';
import { startTestService, type TestService } from './helpers/service.js';

// Members in a real Chromium: an owner invites from the Members page, the invitee accepts in a
// second browser (its own cookies) and sees the cabinet as their role allows; the owner changes
// the role and the member's next change is refused; an e-mail that signs in elsewhere is invited
// like any other and told to sign in when joining. axe-core on each Members page state.
// One service, two browser contexts, steps in order.

let t: TestService;
let browser: TestBrowser;
let owner: Page;
let member: Page;
let base: string;
let inviteUrl: string;
const OWNER = 'members-owner@example.com';
const MEMBER = 'members-dev@example.com';
const PASSWORD = 'correct horse battery staple';
const pageProblems: string[] = [];

beforeAll(async () => {
  t = await startTestService({}, { cabinet: { signIn: { perIpPerMinute: 1000, perEmailPerMinute: 1000 } } });
  base = t.baseUrl;
  const made = await cli(['admin', 'accounts', 'create', '--plan', 'pro', '--email', OWNER, '--data-dir', t.dataDir, '--json'], { stdin: `${PASSWORD}\n` });
  expect(made.code, made.stderr).toBe(0);
  browser = await launchBrowser();
  // bypassCSP: axe-core is injected as a script of its own.
  owner = await (await browser.context({ bypassCSP: true })).newPage();
  member = await (await browser.context({ bypassCSP: true })).newPage();
  for (const p of [owner, member]) p.on('pageerror', (err) => pageProblems.push(`pageerror: ${err.message}`));
});

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

beforeEach((c) => {
  c.onTestFailed(async () => {
    const files = await screenshotAll([owner, member], 'cabinet-members', c.task.name);
    console.error(`screenshots: ${files.join(', ')}`);
  });
});

async function noViolations(page: Page, state: string) {
  const found = await axeViolations(page);
  expect(found.map((v) => `${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), state).toEqual([]);
}

describe('members and roles in the browser', () => {
  it('the owner invites a developer from the Members page', async () => {
    await owner.goto(`${base}/login`);
    await owner.getByLabel('E-mail').fill(OWNER);
    await owner.getByLabel('Password').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Sign in' }).click();
    await owner.getByRole('heading', { name: 'Overview' }).waitFor();
    await owner.getByRole('link', { name: OWNER }).click();
    await owner.getByRole('link', { name: 'Members', exact: true }).click();
    await owner.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    await noViolations(owner, 'Members page, one owner');
    await owner.getByLabel('E-mail').fill(MEMBER);
    await owner.getByLabel('Role', { exact: true }).selectOption('developer');
    await owner.getByRole('button', { name: 'Invite' }).click();
    await owner.getByRole('heading', { name: `Invitation for ${MEMBER}` }).waitFor();
    inviteUrl = (await owner.locator('#invite-link').textContent())!.trim();
    expect(inviteUrl).toMatch(/\/join\/[A-Za-z0-9_-]+$/);
    await noViolations(owner, 'Members page with an invitation link');
    await owner.locator(`tr[data-member="${MEMBER}"]`).getByText('invited').waitFor();
  });

  it('the invitee accepts in a second browser and works as a developer', async () => {
    await member.goto(inviteUrl);
    await member.getByRole('heading', { name: 'Choose a password' }).waitFor();
    await member.getByLabel(/^Password \(at least/).fill(PASSWORD);
    await member.getByLabel('Password again').fill(PASSWORD);
    await member.getByRole('button', { name: 'Set password and sign in' }).click();
    await member.getByRole('heading', { name: 'Overview' }).waitFor();
    await member.getByRole('link', { name: MEMBER }).waitFor();

    await member.goto(`${base}/members`);
    await member.getByText('You are a developer').waitFor();
    expect(await member.getByRole('heading', { name: 'Invite a member' }).count()).toBe(0);
    expect(await member.getByRole('button', { name: 'Change role' }).count()).toBe(0);
    expect(await member.locator('#role-notice').count()).toBe(0);
    await noViolations(member, 'Members page as a developer');

    await member.goto(`${base}/endpoints`);
    await member.getByLabel('Name').fill('from-developer');
    await member.getByRole('button', { name: 'Create endpoint' }).click();
    await member.getByText('Endpoint from-developer created.').waitFor();

    await member.goto(`${base}/keys`);
    await member.getByRole('button', { name: 'Create key' }).click();
    await member.getByRole('heading', { name: 'Not allowed for your role' }).waitFor();
    await member.getByText('Your role in this account is developer; this needs an owner.').waitFor();
    // The owner sees the new member as joined.
    await owner.goto(`${base}/members`);
    await owner.locator(`tr[data-member="${MEMBER}"]`).getByText('joined').waitFor();
  });

  it('the owner makes them a viewer: their next change is refused, reading still works', async () => {
    const row = owner.locator(`tr[data-member="${MEMBER}"]`);
    await row.getByLabel(`Role of ${MEMBER}`).selectOption('viewer');
    await row.getByRole('button', { name: 'Change role' }).click();
    await owner.getByText(`${MEMBER} is now a viewer.`).waitFor();
    await noViolations(owner, 'Members page, two members');

    await member.goto(`${base}/endpoints`);
    await member.getByRole('link', { name: 'from-developer' }).waitFor();
    await member.getByLabel('Name').fill('from-viewer');
    await member.getByRole('button', { name: 'Create endpoint' }).click();
    await member.getByRole('heading', { name: 'Not allowed for your role' }).waitFor();
    await member.goto(`${base}/members`);
    await member.getByText('You are a viewer').waitFor();
    await member.locator('#role-notice').getByText('read-only access').waitFor();
    await noViolations(member, 'Members page as a viewer');
  });

  it('an invitation of an e-mail that signs in elsewhere is listed as invited; joining with it says to sign in instead', async () => {
    const ELSEWHERE = 'members-elsewhere@example.com';
    const made = await cli(['admin', 'accounts', 'create', '--email', ELSEWHERE, '--data-dir', t.dataDir, '--json'], { stdin: `${PASSWORD}\n` });
    expect(made.code, made.stderr).toBe(0);
    await owner.goto(`${base}/members`);
    await owner.getByLabel('E-mail').fill(ELSEWHERE);
    await owner.getByRole('button', { name: 'Invite' }).click();
    await owner.getByRole('heading', { name: `Invitation for ${ELSEWHERE}` }).waitFor();
    const url = (await owner.locator('#invite-link').textContent())!.trim();
    await owner.reload();
    await owner.locator(`tr[data-member="${ELSEWHERE}"]`).getByText('invited').waitFor();

    const invitee = await (await browser.context({ bypassCSP: true })).newPage();
    invitee.on('pageerror', (err) => pageProblems.push(`pageerror: ${err.message}`));
    await invitee.goto(url);
    await invitee.getByRole('heading', { name: 'Choose a password' }).waitFor();
    await invitee.getByLabel(/^Password \(at least/).fill('another long password');
    await invitee.getByLabel('Password again').fill('another long password');
    await invitee.getByRole('button', { name: 'Set password and sign in' }).click();
    await invitee.getByRole('heading', { name: 'You have a login already' }).waitFor();
    await invitee.getByText(`${ELSEWHERE} already signs in to an account of this service`).waitFor();
    await noViolations(invitee, 'join page of an e-mail that has a login');
    await invitee.getByRole('link', { name: 'Sign in' }).click();
    await invitee.getByLabel('E-mail').fill(ELSEWHERE);
    await invitee.getByLabel('Password').fill(PASSWORD);
    await invitee.getByRole('button', { name: 'Sign in' }).click();
    await invitee.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(pageProblems).toEqual([]);
  });
});

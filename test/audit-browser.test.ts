import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { axeViolations, launchBrowser, screenshotAll, type TestBrowser } from './helpers/browser.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';
import { setLogin } from '../src/cabinet/index.js';

// The Audit log page in a real Chromium: reached from the Account page, changes made through
// the API and in the cabinet listed newest first with who and from where, a filter, the pager;
// axe-core's WCAG 2.1 A/AA rules in light and dark, on a desktop and a phone.

let t: TestService;
let m: Merchant;
let browser: TestBrowser;
const pages: Page[] = [];
const EMAIL = 'audit-browser@example.com';
const PASSWORD = 'correct horse battery staple';

beforeAll(async () => {
  t = await startTestService({}, { cabinet: { signIn: { perIpPerMinute: 1000, perEmailPerMinute: 1000 } } });
  m = await t.merchant({ plan: 'pro' });
  await setLogin(t.store, m.userId, { email: EMAIL, password: PASSWORD });
  // More than one page of entries (the page shows 50): 52 renames through the API.
  const made = await m.call('POST', '/v1/endpoints', JSON.stringify({ network_slug: 'eth', env_slug: 'mainnet', name: 'first' }));
  for (let i = 0; i < 52; i++) {
    expect((await m.call('PATCH', `/v1/endpoints/${made.body.endpoint.id}`, JSON.stringify({ name: `name ${i}` }))).status).toBe(200);
  }
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});
beforeEach((c) => {
  c.onTestFailed(async () => {
    console.error(`screenshots: ${(await screenshotAll(pages, 'audit', c.task.name)).join(', ')}`);
  });
});

async function signIn(p: Page) {
  await p.goto(`${t.baseUrl}/login`);
  await p.getByLabel('E-mail').fill(EMAIL);
  await p.getByLabel('Password').fill(PASSWORD);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.getByRole('heading', { name: 'Overview' }).waitFor();
}

describe('the Audit log page', () => {
  it('lists API and cabinet changes newest first, filters them, pages back', async () => {
    const p = await (await browser.context()).newPage();
    pages.push(p);
    await signIn(p);
    // A change in the cabinet: a key, made on the Keys page.
    await p.goto(`${t.baseUrl}/keys`);
    await p.getByLabel('Name').fill('from the browser');
    await p.getByRole('button', { name: 'Create key' }).click();
    await p.getByRole('heading', { name: /Key created/ }).waitFor();

    await p.goto(`${t.baseUrl}/account`);
    await p.getByRole('link', { name: 'Open the audit log' }).click();
    await p.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
    const rows = p.locator('#audit-table tbody tr');
    expect(await rows.count()).toBe(50);
    const first = rows.first();
    expect(await first.textContent()).toContain('key.create');
    expect(await first.textContent()).toContain(EMAIL);
    expect(await rows.nth(1).textContent()).toContain('endpoint.rename');
    expect(await rows.nth(1).textContent()).toContain(m.apiKey.slice(0, 8));

    await p.getByRole('link', { name: 'Older →' }).click();
    await p.waitForURL(/before=/);
    expect(await rows.count()).toBe(4);
    expect(await rows.last().textContent()).toContain('endpoint.create');

    const filter = p.getByRole('navigation', { name: 'Filter by kind of change' });
    await filter.getByRole('link', { name: 'API keys' }).click();
    await p.waitForURL(/action=key\./);
    expect(await rows.count()).toBe(1);
    expect(await filter.getByRole('link', { name: 'API keys' }).getAttribute('aria-current')).toBe('true');
  });

  it('passes axe-core\'s WCAG 2.1 A/AA rules, in light and dark, on a desktop and a phone', async () => {
    const found: string[] = [];
    for (const [colorScheme, viewport] of [['light', { width: 1280, height: 900 }], ['dark', { width: 390, height: 844 }]] as const) {
      const c = await browser.context({ colorScheme, viewport, bypassCSP: true });
      const p = await c.newPage();
      pages.push(p);
      await signIn(p);
      for (const path of ['/account/audit', '/account/audit?action=endpoint.', '/account/audit?action=member.']) {
        await p.goto(`${t.baseUrl}${path}`);
        for (const v of await axeViolations(p)) found.push(`${colorScheme} ${path}: ${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      }
      await c.close();
    }
    expect(found).toEqual([]);
  }, 120_000);
});

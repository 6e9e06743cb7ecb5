import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { launchBrowser, screenshotAll, type TestBrowser, watchPageProblems } from './helpers/browser.js';
import { cli } from './helpers/cli.js';
import { startTestService, type TestService } from './helpers/service.js';
import { secretFromBase32, totp } from '../src/cabinet/totp.js';

// Two-factor sign-in in a real Chromium: enrol by reading the key off the page, sign in with a
// code and with a recovery code, a wrong code and a used recovery code refused, the account's
// policy forcing enrolment; axe-core on every new page state. One browser, steps in order.

let t: TestService;
let browser: TestBrowser;
let page: Page;
let base: string;
let userId: number;
const pageProblems: string[] = [];
// jsqr is CommonJS whose types say `export default`: Node hands the function itself to a default import.
const jsQR = jsQRModule as unknown as typeof jsQRModule.default;
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const EMAIL = 'two-factor@example.com';
const PASSWORD = 'correct horse battery staple';

beforeAll(async () => {
  t = await startTestService({}, { cabinet: { signIn: { perIpPerMinute: 1000, perEmailPerMinute: 1000 } } });
  base = t.baseUrl;
  const made = await cli(['admin', 'accounts', 'create', '--plan', 'pro', '--email', EMAIL, '--data-dir', t.dataDir, '--json'], { stdin: `${PASSWORD}\n` });
  expect(made.code, made.stderr).toBe(0);
  userId = JSON.parse(made.stdout).user_id;
  browser = await launchBrowser();
  page = await (await browser.context()).newPage();
  watchPageProblems(page, pageProblems);
});

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

beforeEach((c) => {
  c.onTestFailed(async () => {
    const files = await screenshotAll([page], 'cabinet-two-factor', c.task.name);
    console.error(`screenshots: ${files.join(', ')}`);
  });
});

async function signInWithPassword() {
  await page.goto(`${base}/login`);
  await page.getByLabel('E-mail').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function signOut() {
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
}

async function enterCode(code: string) {
  await page.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
  await page.getByLabel('Code').fill(code);
  await page.getByRole('button', { name: 'Verify' }).click();
}

/**
 * axe-core on the page as served, CSP and all: evaluated through DevTools (not a script tag,
 * which the cabinet's CSP rightly refuses), so the same page also reports any CSP violation.
 */
async function noViolations(state: string) {
  if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })`) as { violations: Array<{ id: string; help: string; nodes: Array<{ target: string[] }> }> };
  expect(result.violations.map((v) => `${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), state).toEqual([]);
}

/** The key as the page shows it (grouped by four), read the way a person types it into an app. */
async function enrolFromPage(): Promise<{ secret: Uint8Array; codes: string[] }> {
  await page.getByRole('heading', { name: 'Set up two-factor sign-in' }).waitFor();
  const shown = (await page.locator('#totp-secret').textContent())!;
  // The QR code as a phone's camera sees it: the same key, for this login, in the app's format.
  const png = PNG.sync.read(await page.locator('.qr').screenshot());
  const scanned = jsQR(Uint8ClampedArray.from(png.data), png.width, png.height);
  expect(scanned?.data, 'the QR code decodes').toBeDefined();
  const uri = new URL(scanned!.data);
  expect(`${uri.protocol}//${uri.host}${decodeURIComponent(uri.pathname)}`).toBe(`otpauth://totp/rpcctl:${EMAIL}`);
  expect(uri.searchParams.get('secret')).toBe(shown.replace(/ /g, ''));
  const secret = secretFromBase32(shown);
  await page.getByLabel('Code from the app').fill(totp(secret, Date.now()));
  await page.getByRole('button', { name: 'Turn on' }).click();
  await page.getByRole('heading', { name: /Recovery codes/ }).waitFor();
  const codes = await page.locator('#recovery-codes code').allTextContents();
  expect(codes).toHaveLength(10);
  return { secret, codes };
}

describe('two-factor sign-in', () => {
  let secret: Uint8Array;
  let codes: string[];

  it('enrols from the account page: QR code, the key as text, a code to confirm, recovery codes once', async () => {
    await signInWithPassword();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.goto(`${base}/account`);
    await page.getByRole('link', { name: 'Set up two-factor' }).click();
    await page.getByRole('heading', { name: 'Set up two-factor sign-in' }).waitFor();
    await noViolations('enrolment page');
    // A wrong code first: refused next to the form, the same key still offered.
    const shown = await page.locator('#totp-secret').textContent();
    await page.getByLabel('Code from the app').fill('000000' === totp(secretFromBase32(shown!), Date.now()) ? '111111' : '000000');
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByText('That code is wrong').waitFor();
    expect(await page.locator('#totp-secret').textContent()).toBe(shown);
    ({ secret, codes } = await enrolFromPage());
    await noViolations('recovery codes');
    await page.getByRole('link', { name: 'Done' }).click();
    await page.getByRole('link', { name: 'Manage two-factor' }).waitFor();
    expect(await page.locator('body').textContent()).toContain('10 recovery codes left');
    expect(pageProblems).toEqual([]);
  });

  it('signs in with the password and then a code; a wrong code is refused', async () => {
    await signOut();
    await signInWithPassword();
    await page.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
    await noViolations('second step');
    await enterCode(String((Number(totp(secret, Date.now() + 30_000)) + 1) % 1_000_000).padStart(6, '0'));
    await page.getByText('That code is wrong or was used already.').waitFor();
    await noViolations('second step with an error');
    // Enrolment used this step's code; the app's next one is inside the window.
    await enterCode(totp(secret, Date.now() + 30_000));
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  });

  it('a recovery code signs in once, then is refused', async () => {
    await signOut();
    await signInWithPassword();
    await enterCode(codes[0]!);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByText('recovery code; 9 left').waitFor();
    await signOut();
    await signInWithPassword();
    await enterCode(codes[0]!);
    await page.getByText('That code is wrong or was used already.').waitFor();
    await enterCode(codes[1]!);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  });

  it('the account policy sends a login without two-factor to enrolment before anything else', async () => {
    await page.goto(`${base}/account/two-factor`);
    await noViolations('two-factor settings');
    await page.getByLabel('Require two-factor sign-in for every member').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Every member now needs two-factor sign-in.').waitFor();
    // The operator resets the lost phone: sessions end, the next sign-in must enrol again.
    const reset = await cli(['admin', 'accounts', 'reset-2fa', String(userId), '--data-dir', t.dataDir]);
    expect(reset.code, reset.stderr).toBe(0);
    await page.goto(`${base}/keys`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Your account requires two-factor sign-in for every login').waitFor();
    expect(new URL(page.url()).pathname).toBe('/account/two-factor');
    await noViolations('enrolment required');
    await page.getByRole('link', { name: 'API keys' }).first().click();
    await page.getByText('Your account requires two-factor sign-in for every login').waitFor();
    expect(new URL(page.url()).pathname).toBe('/account/two-factor');
    const again = await enrolFromPage();
    expect(Buffer.from(again.secret).equals(Buffer.from(secret))).toBe(false);
    await page.goto(`${base}/keys`);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(pageProblems).toEqual([]);
  });
});

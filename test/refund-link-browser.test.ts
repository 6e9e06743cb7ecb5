import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LANGUAGES } from '../src/payments/hosted-page.js';
import { axeAll, axeViolations, launchBrowser, screenshotAll, type TestBrowser, watchPageProblems } from './helpers/browser.js';
import { startRefundLinkWorld, type RefundLinkWorld } from './helpers/refund-link.js';

// The refund link in Chromium at 390 px (issue 34): the customer types an address; another
// network's is refused with a message in the page; the right one is taken once; the page then
// follows the refund as the merchant's wallet pays it. axe-core finds nothing; the CSP refuses nothing.
// In every language of the checkout, picked as the checkout picks it.

const CUSTOMER = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
let w: RefundLinkWorld;
let browser: TestBrowser;
const openPages: Page[] = [];
const problems: string[] = [];

beforeAll(async () => {
  w = await startRefundLinkWorld({ displayName: 'Corner Shop' });
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await w?.stop();
});
beforeEach((c) => {
  c.onTestFailed(async () => {
    console.error(`screenshots: ${(await screenshotAll(openPages, 'refund-link', c.task.name)).join(', ')}`);
  });
});

/** The form's heading as a customer reads it in each language (a language added to the checkout needs its line here). */
const WAITING: Record<string, string> = {
  en: 'Waiting for your address', de: 'Wartet auf Ihre Adresse', es: 'Esperando su dirección', fr: 'En attente de votre adresse',
  pt: 'Aguardando seu endereço', ru: 'Ожидание вашего адреса', tr: 'Adresiniz bekleniyor', zh: '等待您的地址',
};

/**
 * A 390 px page; `opts` for a browser of another language, without JavaScript, or as another
 * client (the link's pages allow a client 60 calls a minute, and refund.js polls in the other test).
 */
async function phone(bypassCSP: boolean, opts: { locale?: string; javaScriptEnabled?: boolean; clientIp?: string } = {}): Promise<Page> {
  const ctx = await browser.browser.newContext({
    viewport: { width: 390, height: 844 }, bypassCSP, deviceScaleFactor: 1, locale: opts.locale, javaScriptEnabled: opts.javaScriptEnabled,
    extraHTTPHeaders: opts.clientIp ? { 'x-forwarded-for': opts.clientIp } : undefined,
  });
  ctx.setDefaultTimeout(20_000);
  const page = await ctx.newPage();
  openPages.push(page);
  if (!bypassCSP) watchPageProblems(page, problems);
  return page;
}

async function noAxeViolations(url: string): Promise<void> {
  // axe is injected as a script of its own: a second page that bypasses the CSP looks at the same HTML.
  const page = await phone(true);
  await page.goto(url);
  const found = (await axeViolations(page)).map((v) => `${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(found).toEqual([]);
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
  await page.context().close();
}

describe('refund link page in Chromium at 390 px', () => {
  it('address entry: a Tron address refused with a message, the right one taken; the state after payment; axe 0 violations', async () => {
    const { url, paymentId, refundId } = await w.refundLink('browser-1', '1', '0.4');
    await noAxeViolations(url);
    const page = await phone(false);
    await page.goto(url);
    await expect(page.title()).resolves.toBe('Corner Shop: refund of 0.4 ETH');
    const field = page.getByLabel('Your ETH address on Anvil (local)');
    await field.fill('TLsV52sRDL79HXGGm9yzwKibb6BeruhUzy');
    await page.getByRole('button', { name: 'Send my refund here' }).click();
    const alert = page.getByRole('alert');
    await expect(alert.textContent()).resolves.toMatch(/^Not a valid Anvil \(local\) address: /);
    expect(await field.inputValue()).toBe('TLsV52sRDL79HXGGm9yzwKibb6BeruhUzy');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    // The refused form, too, has nothing axe objects to.
    const refused = await phone(true);
    await refused.goto(url);
    await refused.getByLabel('Your ETH address on Anvil (local)').fill('0x123');
    await refused.getByRole('button', { name: 'Send my refund here' }).click();
    await refused.getByRole('alert').waitFor();
    expect((await axeViolations(refused)).map((v) => v.id)).toEqual([]);
    await refused.context().close();

    await field.fill(CUSTOMER);
    await page.getByRole('button', { name: 'Send my refund here' }).click();
    await page.locator('#state', { hasText: /^Awaiting payment$/ }).waitFor();
    expect(await page.locator('#address').textContent()).toBe(CUSTOMER);
    expect(await page.locator('#amount').textContent()).toBe('0.4');
    expect(await page.locator('form').count()).toBe(0);
    await noAxeViolations(url);

    await w.pay(CUSTOMER, 400_000_000_000_000_000n);
    await w.anvil.test.mine({ blocks: 1 });
    await w.waitForRefund(paymentId, refundId, 'sent');
    // refund.js sees the new state and reloads the page by itself.
    await page.locator('#state', { hasText: /^Sent: confirming$/ }).waitFor();
    await w.anvil.test.mine({ blocks: 70 });
    await w.waitForRefund(paymentId, refundId, 'completed');
    await page.locator('#state', { hasText: /^Completed$/ }).waitFor();
    await noAxeViolations(url);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 90_000);

  it('every language at 390 px: its words, 0 axe violations (all rules, CSP enforced), no sideways scroll; Accept-Language and the switch pick it, the form answers in it without JavaScript', async () => {
    expect(Object.keys(WAITING).sort()).toEqual(LANGUAGES.map((l) => l.code).sort());
    const { url } = await w.refundLink('browser-langs', '1', '0.2');
    const page = await phone(false, { clientIp: '198.51.100.7' });
    const found: string[] = [];
    for (const l of LANGUAGES) {
      await page.goto(`${url}?lang=${l.code}`);
      expect(await page.locator('html').getAttribute('lang'), l.code).toBe(l.locale);
      expect(await page.locator('#state').textContent(), l.code).toBe(WAITING[l.code]);
      for (const v of await axeAll(page)) found.push(`${l.code}: ${v}`);
      expect(await page.evaluate('document.documentElement.scrollWidth'), l.code).toBeLessThanOrEqual(390);
    }
    expect(found).toEqual([]);
    await page.context().close();

    const fr = await phone(false, { locale: 'fr-FR', javaScriptEnabled: false, clientIp: '198.51.100.8' });
    await fr.goto(url);
    expect(await fr.locator('#state').textContent()).toBe('En attente de votre adresse');
    await fr.getByRole('navigation', { name: 'Langue' }).getByRole('link', { name: 'Deutsch' }).click();
    await fr.locator('html[lang="de"]').waitFor();
    expect(await fr.getByRole('navigation', { name: 'Sprache' }).getByRole('link', { name: 'Deutsch' }).getAttribute('aria-current')).toBe('true');
    const field = fr.getByLabel('Ihre ETH-Adresse im Netzwerk Anvil (local)');
    await field.fill('TLsV52sRDL79HXGGm9yzwKibb6BeruhUzy');
    await fr.getByRole('button', { name: 'Erstattung an diese Adresse senden' }).click();
    await expect(fr.getByRole('alert').textContent()).resolves.toMatch(/^Keine gültige Adresse im Netzwerk Anvil \(local\): /);
    await field.fill(CUSTOMER);
    await fr.getByRole('button', { name: 'Erstattung an diese Adresse senden' }).click();
    await fr.locator('#state', { hasText: /^Zahlung ausstehend$/ }).waitFor();
    expect(await fr.locator('#address').textContent()).toBe(CUSTOMER);
    expect(problems).toEqual([]);
    await fr.context().close();
  }, 60_000);
});

import { copyFileSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import jsQRModule from 'jsqr';
import type { Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { parseEther, type Address } from 'viem';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { setLogin } from '../src/cabinet/index.js';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { axeAll, axeViolations, launchBrowser, screenshotAll, TEST_OUTPUT, type TestBrowser, watchPageProblems } from './helpers/browser.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';
import { type FakeSolanaNode, USDC_MINT, startFakeSolana } from './helpers/fake-solana.js';
import { parseURL, type TransferRequestURL } from '@solana/pay';

// The checkout page in a real Chromium against a real service on anvil (issue 24): its look at
// phone and desktop widths, the QR a wallet scans, the status as anvil pays, the countdown and
// expiry, what is still due, the way back to the shop, and the page without JavaScript.

const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
// jsqr is CommonJS whose module.exports is the function; its types declare it as `default`.
const jsQR = jsQRModule as unknown as typeof jsQRModule.default;
/** anvil's chain id: the EIP-681 URIs name it. */
const CHAIN_ID = 31337;
const PASSWORD = 'correct horse battery staple';
const json = (o: unknown) => JSON.stringify(o);
let anvil: Anvil;
let solana: FakeSolanaNode;
/** The merchant's Solana wallet: Solana Pay orders are paid to it, told apart by reference. */
const SOLANA_WALLET = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
let t: TestService;
let m: Merchant;
let browser: TestBrowser;
let shop: Server;
let shopUrl: string;
let payer: Address;
const openPages: Page[] = [];
/** Script errors and CSP refusals on pages opened with the CSP enforced: the page must cause none. */
const problems: string[] = [];

beforeAll(async () => {
  [anvil, solana] = await Promise.all([startAnvil(), startFakeSolana()]);
  payer = anvil.accounts[1]!;
  // The merchant's shop, where a paid customer is sent back to.
  shop = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Shop</title><h1>Thanks</h1>'));
  await new Promise<void>((r) => shop.listen(0, '127.0.0.1', r));
  shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
  t = await startTestService({
    networks: [
      { slug: 'anvil', name: 'Anvil', family: 'evm', environments: [{ slug: 'local', upstreams: [anvil.url], confirmations: 2 }] },
      { slug: 'solana', name: 'Solana', family: 'solana', tokens: [{ symbol: 'USDC', address: USDC_MINT, decimals: 6 }], environments: [{ slug: 'mainnet', upstreams: [solana.url], confirmations: 1 }] },
    ],
    // As under `serve --dev`: the shop is plain http on loopback.
    payments: { tick_ms: 50, checkout: { allow_any_redirect: true }, rates: { provider: 'static', static: { 'ETH/EUR': '3000' } } },
  }, { watch: { pollMs: 100 } });
  m = await t.merchant({ plan: 'pro' });
  const put = await m.call('PUT', '/v1/payments/settings', json({ xpubs: { evm: XPUB }, wallets: { solana: SOLANA_WALLET }, display_name: 'Corner Shop', redirect_url: `${shopUrl}/thanks` }));
  expect(put.status, json(put.body)).toBe(200);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await anvil?.stop();
  await solana?.stop();
  await new Promise((r) => shop?.close(r));
});

beforeEach((c) => {
  c.onTestFailed(async () => {
    const files = await screenshotAll(openPages, 'checkout', c.task.name);
    console.error(`screenshots: ${files.join(', ')}`);
  });
});

async function create(body: Record<string, unknown>) {
  const r = await m.call('POST', '/v1/payments', json({ network_slug: 'anvil', ...body }));
  expect(r.status, json(r.body)).toBe(200);
  return r.body.payment as Record<string, any>;
}

/** Sends `eth` to `to`; anvil mines it alone in a block (one confirmation of the two required). */
async function pay(to: string, eth: string): Promise<void> {
  const hash = await anvil.wallet.sendTransaction({ account: payer, to: to as Address, value: parseEther(eth), chain: null });
  await anvil.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
}

const confirm = () => anvil.test.mine({ blocks: 1 });

async function statusOf(id: string): Promise<string> {
  return (await m.call('GET', `/v1/payments/${id}`)).body.payment.status as string;
}

async function waitForStatus(id: string, status: string, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while ((await statusOf(id)) !== status) {
    if (Date.now() > until) throw new Error(`order ${id} is ${await statusOf(id)}, not ${status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function newPage(opts: { width?: number; height?: number; javaScript?: boolean; bypassCSP?: boolean; colorScheme?: 'light' | 'dark' } = {}): Promise<Page> {
  const ctx = await browser.browser.newContext({
    viewport: { width: opts.width ?? 390, height: opts.height ?? 844 }, javaScriptEnabled: opts.javaScript ?? true,
    bypassCSP: opts.bypassCSP ?? false, colorScheme: opts.colorScheme ?? 'light', deviceScaleFactor: 1,
  });
  ctx.setDefaultTimeout(20_000);
  const page = await ctx.newPage();
  openPages.push(page);
  if (!opts.bypassCSP) {
    watchPageProblems(page, problems);
  }
  return page;
}

/** What a wallet's camera reads from the QR code as drawn on the screen. */
async function scanQr(page: Page, file?: string): Promise<string | undefined> {
  const png = PNG.sync.read(await page.locator('#qr svg').screenshot(file ? { path: file } : {}));
  return jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height)?.data;
}

const LANGS = ['en', 'de', 'es', 'fr', 'pt', 'ru', 'zh', 'tr'];

/**
 * On how many lines the number in the h1 lies, as laid out: a Range over its characters,
 * whatever elements hold them, and the distinct tops of its line boxes.
 */
async function numberLines(page: Page): Promise<{ number: string; lines: number }> {
  return page.evaluate(`(() => {
    const h1 = document.querySelector('h1');
    const walker = document.createTreeWalker(h1, NodeFilter.SHOW_TEXT);
    const nodes = [];
    let text = '';
    for (let n = walker.nextNode(); n; n = walker.nextNode()) { nodes.push({ node: n, start: text.length }); text += n.data; }
    const m = /\\d[\\d.,]*\\d/.exec(text);
    const at = (i) => { const f = nodes.filter((x) => x.start <= i).pop(); return [f.node, i - f.start]; };
    const range = document.createRange();
    range.setStart(...at(m.index));
    range.setEnd(...at(m.index + m[0].length - 1));
    range.setEnd(range.endContainer, range.endOffset + 1);
    const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
    return { number: m[0], lines: tops.size };
  })()`);
}

describe('checkout page in Chromium', () => {
  it('at 390 and 1280 px, light and dark: no axe violations, no sideways scroll, the QR scans to the EIP-681 URI', async () => {
    const p = await create({ order_id: 'look-1', amount: '0.5' });
    const uri = `ethereum:${p.address}@${CHAIN_ID}?value=500000000000000000`;
    const found: string[] = [];
    for (const [width, colorScheme] of [[390, 'light'], [1280, 'light'], [390, 'dark']] as const) {
      const page = await newPage({ width, height: width === 390 ? 844 : 900, bypassCSP: true, colorScheme });
      await page.goto(p.checkout_url);
      await expect(page.title()).resolves.toBe('Corner Shop: pay 0.5 ETH');
      expect(await page.locator('.merchant').textContent()).toBe('Corner Shop');
      expect(await page.locator('#amount').textContent()).toBe('0.5');
      expect(await page.locator('#address').textContent()).toBe(p.address);
      expect(await page.locator('#network').textContent()).toBe('Anvil (local)');
      // Copy buttons show once the script runs.
      await page.getByRole('button', { name: 'Copy address' }).waitFor();
      for (const v of await axeViolations(page)) found.push(`${width} ${colorScheme}: ${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      expect(await page.evaluate('document.documentElement.scrollWidth'), `${width} px`).toBeLessThanOrEqual(width);
      expect(await scanQr(page), `${width} px`).toBe(uri);
      if (width === 390 && colorScheme === 'light') {
        const dir = join(TEST_OUTPUT, 'checkout');
        mkdirSync(dir, { recursive: true });
        const shot = join(dir, 'checkout-390.png');
        await page.screenshot({ path: shot, fullPage: true });
        // `RPCCTL_DOCS_SCREENSHOT=1 npx vitest run test/checkout-browser.test.ts` refreshes the one in the docs.
        if (process.env.RPCCTL_DOCS_SCREENSHOT) copyFileSync(shot, join(process.cwd(), 'docs', 'checkout.png'));
      }
      await page.context().close();
    }
    expect(found).toEqual([]);
  });

  it('live, with the CSP enforced: pending → seen with its confirmations → paid, then back to the shop with ?order_id=', async () => {
    const p = await create({ order_id: 'live-1', amount: '0.25' });
    const page = await newPage();
    await page.goto(p.checkout_url);
    await expect(page.locator('#state').textContent()).resolves.toBe('Awaiting payment');
    // The page is never reloaded: a mark on the window stays until the shop's page.
    await page.evaluate('window.stayed = 1');
    await pay(p.address, '0.25');
    await page.locator('#state', { hasText: 'Payment seen: waiting for 2 confirmations' }).waitFor();
    await confirm();
    await page.locator('#state', { hasText: /^Paid$/ }).waitFor();
    expect(await page.evaluate('window.stayed')).toBe(1);
    expect(await page.locator('#announce').textContent()).toBe('Paid');
    expect(await page.getByRole('link', { name: 'Return to Corner Shop' }).getAttribute('href')).toBe(`${shopUrl}/thanks?order_id=live-1`);
    await page.waitForURL(`${shopUrl}/thanks?order_id=live-1`);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('underpaid: what is still due, with a QR for that amount', async () => {
    const p = await create({ order_id: 'under-1', amount: '1' });
    await pay(p.address, '0.4');
    await confirm();
    await waitForStatus(p.payment_id, 'underpaid');
    const page = await newPage();
    await page.goto(p.checkout_url);
    await expect(page.locator('#state').textContent()).resolves.toBe('Partly paid: 0.6 ETH still due');
    expect(await page.locator('#amount').textContent()).toBe('0.6');
    expect(await scanQr(page)).toBe(`ethereum:${p.address}@${CHAIN_ID}?value=600000000000000000`);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('the countdown runs to expires_at, then the page turns expired and hides the address', async () => {
    const p = await create({ order_id: 'expiring-1', amount: '0.1', expires_in: 10 });
    const page = await newPage();
    await page.goto(p.checkout_url);
    const countdown = page.locator('#countdown');
    const first = await countdown.textContent();
    expect(first).toMatch(/^0:(0\d|10)$/);
    await expect.poll(() => countdown.textContent(), { timeout: 5000, interval: 100 }).not.toBe(first);
    expect(Number((await countdown.textContent())!.split(':')[1])).toBeLessThan(Number(first!.split(':')[1]));
    await page.locator('#state', { hasText: /^Expired$/ }).waitFor({ timeout: 25_000 });
    expect(await page.locator('#address').count()).toBe(0);
    expect(await page.locator('#qr').count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('without JavaScript: everything to pay is there, and the page refreshes itself until paid', async () => {
    const p = await create({ order_id: 'nojs-1', amount: '0.3' });
    const page = await newPage({ javaScript: false });
    await page.goto(p.checkout_url);
    expect(await page.locator('#state').textContent()).toBe('Awaiting payment');
    expect(await page.locator('#address').textContent()).toBe(p.address);
    expect(await page.locator('#countdown').textContent()).toMatch(/^(59|60):\d\d$/);
    expect(await scanQr(page)).toBe(`ethereum:${p.address}@${CHAIN_ID}?value=300000000000000000`);
    // Without the script the copy buttons stay hidden (they would do nothing); the values are selectable text.
    expect(await page.getByRole('button', { name: 'Copy address' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Refresh the status' }).waitFor();
    await pay(p.address, '0.3');
    await confirm();
    await waitForStatus(p.payment_id, 'paid');
    // No reload from here: the page's own refresh brings the new status.
    await page.locator('#state', { hasText: /^Paid$/ }).waitFor({ timeout: 25_000 });
    expect(await page.getByRole('link', { name: 'Return to Corner Shop' }).getAttribute('href')).toBe(`${shopUrl}/thanks?order_id=nojs-1`);
    await page.context().close();
  });

  it('the cabinet: the payment list links to each order\'s checkout page; the settings form sets its name and return address', async () => {
    await setLogin(t.store, m.userId, { email: 'shop@example.com', password: PASSWORD });
    const page = await newPage({ width: 1280, height: 900 });
    await page.goto(`${t.baseUrl}/login`);
    await page.getByLabel('E-mail').fill('shop@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.goto(`${t.baseUrl}/payments`);
    const link = page.getByRole('link', { name: 'Checkout page of order look-1 (opens in a new tab)' });
    const p = (await m.call('GET', '/v1/payments?order_id=look-1')).body.payments[0];
    expect(await link.getAttribute('href')).toBe(p.checkout_url);
    const [tab] = await Promise.all([page.context().waitForEvent('page'), link.click()]);
    await tab!.locator('.merchant', { hasText: 'Corner Shop' }).waitFor();
    await tab!.close();

    await page.goto(`${t.baseUrl}/payments/settings`);
    expect(await page.getByLabel('Name on the checkout page').inputValue()).toBe('Corner Shop');
    await page.getByLabel('Name on the checkout page').fill('Corner Shop & Café');
    await page.getByLabel('Return address after payment').fill('ftp://shop.example/thanks');
    await page.getByRole('button', { name: 'Save settings' }).click();
    // The API's message, the typed values kept.
    await page.getByRole('alert').filter({ hasText: 'redirect_url: must be an https URL (or http in development); got ftp' }).waitFor();
    expect(await page.getByLabel('Name on the checkout page').inputValue()).toBe('Corner Shop & Café');
    await page.getByLabel('Return address after payment').fill('https://shop.example/thanks');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Payment settings saved.').waitFor();
    expect((await m.call('GET', '/v1/payments/settings')).body).toMatchObject({ display_name: 'Corner Shop & Café', redirect_url: 'https://shop.example/thanks' });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('a Solana USDC order: the QR scans to the Solana Pay transfer request, and "Open in wallet" is the same URI', async () => {
    const r = await m.call('POST', '/v1/payments', json({ network_slug: 'solana', order_id: 'sol-1', asset: USDC_MINT, amount: '12.5' }));
    expect(r.status, json(r.body)).toBe(200);
    const p = r.body.payment as Record<string, any>;
    expect(p.address).toBe(SOLANA_WALLET);
    const page = await newPage();
    await page.goto(p.checkout_url);
    expect(await page.locator('#address').textContent()).toBe(SOLANA_WALLET);
    const uri = await scanQr(page);
    // The label is the merchant's display name as the settings have it now (the cabinet test renames the shop).
    const label = (await m.call('GET', '/v1/payments/settings')).body.display_name as string;
    expect(uri).toBe(`solana:${SOLANA_WALLET}?amount=12.5&spl-token=${USDC_MINT}&reference=${p.reference}&label=${encodeURIComponent(label)}&message=Order%20sol-1`);
    expect(await page.getByRole('link', { name: 'Open in wallet' }).getAttribute('href')).toBe(uri);
    // What a Solana Pay wallet reads from it.
    const fields = parseURL(uri!) as TransferRequestURL;
    expect([fields.recipient, fields.amount, fields.splToken, fields.reference, fields.label]).toEqual([SOLANA_WALLET, 12.5, USDC_MINT, [p.reference], label]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('a fiat-priced order: the price beside an amount rounded up; "Open in wallet" is the QR\'s URI, and paying it is paid, not overpaid', async () => {
    const p = await create({ order_id: 'fiat-1', price_amount: '19.99', price_currency: 'EUR' });
    expect(p.amount).toBe('0.006663333333333334');
    const page = await newPage();
    await page.goto(p.checkout_url);
    expect(await page.locator('h1').textContent()).toBe('0.006664 ETH');
    expect(await page.locator('#price').textContent()).toBe('Price: €19.99');
    expect(await page.locator('#amount').textContent()).toBe('0.006664');
    expect(await page.content()).not.toContain('0.006663333333333334');
    const uri = await scanQr(page);
    expect(uri).toBe(`ethereum:${p.address}@${CHAIN_ID}?value=6664000000000000`);
    const wallet = page.getByRole('link', { name: 'Open in wallet' });
    expect(await wallet.getAttribute('href')).toBe(uri);
    // The customer's wallet sends what the link asks for.
    const value = BigInt(new URL(uri!).searchParams.get('value')!);
    const hash = await anvil.wallet.sendTransaction({ account: payer, to: p.address as Address, value, chain: null });
    await anvil.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    await confirm();
    await waitForStatus(p.payment_id, 'paid');
    const paid = (await m.call('GET', `/v1/payments/${p.payment_id}`)).body.payment;
    expect(paid).toMatchObject({ status: 'paid', amount: '0.006663333333333334', amount_received: '0.006664', overpaid: false });
    await page.locator('#state', { hasText: /^Paid$/ }).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('every language at 390 px: 0 axe violations (all rules, CSP enforced), no sideways scroll, the amount on one line', async () => {
    const p = await create({ order_id: 'langs-1', price_amount: '19.99', price_currency: 'EUR' });
    const found: string[] = [];
    const page = await newPage({ width: 390, height: 844 });
    for (const lang of LANGS) {
      await page.goto(`${p.checkout_url}?lang=${lang}`);
      await page.locator(`html[lang^="${lang}"]`).waitFor();
      // The copy buttons (the script's) are shown, in the page's language.
      await page.locator('button.copy:not([hidden])').first().waitFor();
      for (const v of await axeAll(page)) found.push(`${lang}: ${v}`);
      expect(await page.evaluate('document.documentElement.scrollWidth'), lang).toBeLessThanOrEqual(390);
      expect(await numberLines(page), lang).toEqual({ number: '0.006664', lines: 1 });
      expect(await page.locator('#open-wallet').getAttribute('href'), lang).toBe(await page.locator('#qr').getAttribute('data-uri'));
    }
    // The expired page too (a way back to the shop, no QR).
    const gone = await create({ order_id: 'langs-expired', amount: '0.1', expires_in: 10 });
    for (const lang of ['en', 'ru']) {
      await page.goto(`${gone.checkout_url}?lang=${lang}`);
      await page.locator('#state.bad').waitFor({ timeout: 25_000 });
      for (const v of await axeAll(page)) found.push(`expired ${lang}: ${v}`);
      // The merchant's redirect_url as set now (the cabinet test changes it), with the order id.
      const back = new URL((await m.call('GET', '/v1/payments/settings')).body.redirect_url as string);
      back.searchParams.set('order_id', 'langs-expired');
      expect(await page.locator('#back').getAttribute('href')).toBe(back.toString());
    }
    expect(found).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('the amount heading never breaks inside the number on a 390 px screen (0.012345678901234567 ETH)', async () => {
    const p = await create({ order_id: 'long-1', amount: '0.012345678901234567' });
    for (const width of [390, 360]) {
      const page = await newPage({ width });
      await page.goto(p.checkout_url);
      expect(await numberLines(page), `${width} px`).toEqual({ number: '0.012345678901234567', lines: 1 });
      expect(await page.evaluate('document.documentElement.scrollWidth'), `${width} px`).toBeLessThanOrEqual(width);
      await page.context().close();
    }
  });

  it('the language from the browser\'s Accept-Language, and the switch works without JavaScript', async () => {
    const p = await create({ order_id: 'switch-1', amount: '0.2' });
    const ctx = await browser.browser.newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false, locale: 'fr-FR' });
    const page = await ctx.newPage();
    openPages.push(page);
    await page.goto(p.checkout_url);
    expect(await page.locator('#state').textContent()).toBe('En attente du paiement');
    await page.getByRole('navigation', { name: 'Langue' }).getByRole('link', { name: 'Deutsch' }).click();
    await page.locator('html[lang="de"]').waitFor();
    expect(await page.locator('#state').textContent()).toBe('Zahlung ausstehend');
    expect(await page.getByRole('link', { name: 'In Wallet öffnen' }).getAttribute('href')).toBe(await scanQr(page));
    expect(await page.getByRole('navigation', { name: 'Sprache' }).getByRole('link', { name: 'Deutsch' }).getAttribute('aria-current')).toBe('true');
    await ctx.close();
  });
});

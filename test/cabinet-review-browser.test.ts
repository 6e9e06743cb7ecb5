import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { join } from 'node:path';
import { axeViolations, launchBrowser, screenshotAll, TEST_OUTPUT, type TestBrowser, watchPageProblems } from './helpers/browser.js';
import { cli } from './helpers/cli.js';
import { FakeEvm } from './helpers/fake-evm.js';
import { signedCall, startTestService, type TestService } from './helpers/service.js';

// The fixes of issue 26's review ("to fix on the way"), in a real Chromium against a real
// service: a phone-sized cabinet, allowlist errors by line, the usage chart, and what the
// Blocks box of the webhook form costs before it is saved.

let t: TestService;
let eth: FakeEvm;
let polygon: FakeEvm;
let browser: TestBrowser;
let userId: number;
const openPages: Page[] = [];
const problems: string[] = [];
const EMAIL = 'phone@example.com';
const PASSWORD = 'correct horse battery staple';
const PHONE = { width: 390, height: 844 };

beforeAll(async () => {
  eth = await new FakeEvm().start();
  polygon = await new FakeEvm().start();
  t = await startTestService({
    networks: [
      { id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [eth.url] }],
        credits: { default: 20, methods: { eth_blockNumber: 10 } } },
      // Polygon's 2 s blocks and a price of its own for the block fetch: 43,200 × 5 a day.
      { id: 2, slug: 'polygon', name: 'Polygon', environments: [{ id: 2, slug: 'mainnet', upstreams: [polygon.url] }],
        credits: { default: 20, methods: { eth_getBlockByNumber: 5 } } },
    ],
    plans: [{ id: 1, slug: 'pro', name: 'Pro', included_credits: 1_000_000, rps_limit: 1000, endpoints_limit: 5, webhook_address_slots: 50, network_limit: null }],
    webhooks: { allow_private_urls: true },
  }, { watch: { delivery: { pollMs: 100 } } });
  const made = await cli(['admin', 'accounts', 'create', '--plan', 'pro', '--email', EMAIL, '--data-dir', t.dataDir, '--json'], { stdin: `${PASSWORD}\n` });
  expect(made.code, made.stderr).toBe(0);
  userId = JSON.parse(made.stdout).user_id;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await eth?.stop();
  await polygon?.stop();
});

beforeEach((c) => {
  c.onTestFailed(async () => {
    const files = await screenshotAll(openPages, 'cabinet-review', c.task.name);
    console.error(`screenshots: ${files.join(', ')}`);
  });
});

async function signedIn(opts: { viewport?: { width: number; height: number }; bypassCSP?: boolean } = {}): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.context(opts);
  const page = await ctx.newPage();
  openPages.push(page);
  watchPageProblems(page, problems);
  await page.goto(`${t.baseUrl}/login`);
  await page.getByLabel('E-mail').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  return { ctx, page };
}

async function key(): Promise<[string, string]> {
  const made = await cli(['admin', 'keys', 'create', '--account', String(userId), '--data-dir', t.dataDir, '--json']);
  const k = JSON.parse(made.stdout) as { api_key: string; secret: string };
  return [k.api_key, k.secret];
}

async function rpc(uuid: string) {
  const res = await request(`${t.gatewayUrl}/${uuid}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
  });
  await res.body.dump();
  return res.statusCode;
}

/** Rows in every list: an endpoint, two keys, a watched address, a payment order. */
async function fill(): Promise<{ endpointId: number; paymentId: string }> {
  const k = await key();
  await key();
  const endpoint = await signedCall(t.baseUrl, ...k, 'POST', '/v1/endpoints', JSON.stringify({ name: 'phone-endpoint-with-a-long-name', network_environment_id: 1 }));
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200);
  const watch = await signedCall(t.baseUrl, ...k, 'POST', '/v1/address-watch/addresses', JSON.stringify({ address: '0x52908400098527886E0F7030069857D2E4169EE7', network_slug: 'eth' }));
  expect(watch.status, JSON.stringify(watch.body)).toBe(200);
  const order = await signedCall(t.baseUrl, ...k, 'POST', '/v1/payments', JSON.stringify({
    network_slug: 'eth', order_id: 'phone-order-1', amount: '0.25', address: '0x3f1e9d0e3bd0b5fe3c1b0bb76e1a4c5a0b6a2e01',
  }));
  expect(order.status, JSON.stringify(order.body)).toBe(200);
  // A delivery in the list (to a closed port: it stays pending or fails, either shows Redeliver).
  const hook = await signedCall(t.baseUrl, ...k, 'PUT', '/v1/address-watch/webhook', JSON.stringify({ url: 'http://127.0.0.1:9/hook', enabled: false }));
  expect(hook.status, JSON.stringify(hook.body)).toBe(200);
  const sent = await signedCall(t.baseUrl, ...k, 'POST', '/v1/address-watch/webhook/test', JSON.stringify({ type: 'payment', network: 'eth' }));
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  return { endpointId: endpoint.body.endpoint.id, paymentId: order.body.payment.payment_id };
}

/** Each element lies inside the viewport's width as laid out, without scrolling anything sideways. */
async function expectOnScreen(page: Page, what: string, locator: Locator) {
  const n = await locator.count();
  expect(n, `${what}: none found`).toBeGreaterThan(0);
  const width = page.viewportSize()!.width;
  for (let i = 0; i < n; i++) {
    const box = await locator.nth(i).evaluate((el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left, right: r.right, width: r.width, height: r.height, clipped: el.scrollWidth > el.clientWidth + 1 };
    });
    expect(box.width > 0 && box.height > 0, `${what} #${i} is not shown`).toBe(true);
    expect(box.left >= 0 && box.right <= width, `${what} #${i} lies at ${box.left}..${box.right}, outside 0..${width}`).toBe(true);
    expect(box.clipped, `${what} #${i}'s label is cut`).toBe(false);
  }
}

async function expectNoSidewaysScroll(page: Page, path: string) {
  const { scroll, inner } = await page.evaluate(() => {
    const w = globalThis as any;
    return { scroll: w.document.documentElement.scrollWidth as number, inner: w.innerWidth as number };
  });
  expect(scroll, `${path} scrolls sideways`).toBeLessThanOrEqual(inner);
}

describe('at 390 px', () => {
  it('every page shows its nav, the way to the Account page and its primary actions inside the screen', async () => {
    const { endpointId, paymentId } = await fill();
    const { page } = await signedIn({ viewport: PHONE });
    const pages: Array<[string, Array<[string, (p: Page) => Locator]>]> = [
      ['/', [['period picker', (p) => p.locator('#usage .segmented a')]]],
      ['/keys', [
        ['Revoke', (p) => p.locator('#keys-table').getByRole('link', { name: 'Revoke' })],
        ['allowlist edit', (p) => p.locator('#keys-table summary')],
        ['Create key', (p) => p.getByRole('button', { name: 'Create key' })],
      ]],
      ['/endpoints', [
        ['endpoint link', (p) => p.locator('#endpoints-table').getByRole('link', { name: 'phone-endpoint-with-a-long-name' })],
        ['Copy', (p) => p.locator('#endpoints-table').getByRole('button', { name: /^Copy URL/ })],
        ['Create endpoint', (p) => p.getByRole('button', { name: 'Create endpoint' })],
      ]],
      [`/endpoints/${endpointId}`, [
        ['Copy', (p) => p.getByRole('button', { name: 'Copy endpoint URL' })],
        ['Pause', (p) => p.getByRole('button', { name: 'Pause endpoint' })],
        ['Save allowlist', (p) => p.getByRole('button', { name: 'Save allowlist' })],
      ]],
      ['/watch', [
        ['Remove', (p) => p.locator('#watch-table').getByRole('button', { name: /^Remove / })],
        ['Watch', (p) => p.getByRole('button', { name: 'Watch', exact: true })],
      ]],
      ['/webhook', [
        ['Save webhook', (p) => p.getByRole('button', { name: 'Save webhook' })],
        ['Reveal secret', (p) => p.getByRole('button', { name: 'Reveal secret' })],
        ['Send test', (p) => p.getByRole('button', { name: 'Send test' })],
        ['block estimate', (p) => p.locator('#block-estimate')],
        ['Redeliver', (p) => p.locator('li.delivery').getByRole('button', { name: 'Redeliver' })],
      ]],
      ['/account', [
        ['Change password', (p) => p.getByRole('button', { name: 'Change password' })],
        ['two-factor', (p) => p.getByRole('link', { name: /two-factor/ })],
      ]],
      ['/payments', [
        ['order link', (p) => p.locator('#payments-table').getByRole('link', { name: 'phone-order-1' })],
        ['Checkout', (p) => p.locator('#payments-table').getByRole('link', { name: /^Checkout page of order/ })],
        ['Settings', (p) => p.getByRole('link', { name: 'Settings' })],
      ]],
      [`/payments/${paymentId}`, [['Cancel', (p) => p.getByText('Cancel this order…')]]],
      ['/payments/settings', [['Save settings', (p) => p.getByRole('button', { name: 'Save settings' })]]],
      ['/payouts', [['Create payout', (p) => p.getByRole('button', { name: 'Create payout' })]]],
      // The team pages (issue 26): members, two-factor, the audit log, an endpoint's request log.
      ['/members', [['Invite', (p) => p.getByRole('button', { name: 'Invite' })]]],
      ['/account/two-factor', [['Turn on', (p) => p.getByRole('button', { name: 'Turn on' })]]],
      // Its rows have no actions (the table scrolls sideways inside its own region); its filters do.
      ['/account/audit', [['filters', (p) => p.getByRole('navigation', { name: 'Filter by kind of change' }).getByRole('link').first()]]],
      [`/endpoints/${endpointId}/logs`, [['Show', (p) => p.getByRole('button', { name: 'Show' })]]],
    ];
    for (const [path, actions] of pages) {
      await page.goto(`${t.baseUrl}${path}`);
      // RPCCTL_SCREENSHOTS=1: every page at 390 px, to look at.
      if (process.env.RPCCTL_SCREENSHOTS) await page.screenshot({ path: join(TEST_OUTPUT, 'cabinet-review', `phone${path.replace(/[^a-z0-9]+/gi, '-')}.png`), fullPage: true });
      await expectNoSidewaysScroll(page, path);
      // Every nav item whole and on screen: none scrolled away, no label cut.
      await expectOnScreen(page, `${path} nav`, page.getByRole('navigation', { name: 'Main' }).getByRole('link'));
      await expectOnScreen(page, `${path} Account`, page.getByRole('link', { name: 'Account', exact: true }));
      await expectOnScreen(page, `${path} Sign out`, page.getByRole('button', { name: 'Sign out' }));
      for (const [what, find] of actions) await expectOnScreen(page, `${path} ${what}`, find(page));
    }
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents())
      .toEqual(['Overview', 'API keys', 'Endpoints', 'Address Watch', 'Webhooks', 'Payments', 'Payouts']);

    // The way to the Account page, by tapping it.
    await page.goto(`${t.baseUrl}/`);
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    await page.getByRole('heading', { name: 'Account', exact: true }).waitFor();
    // A row's Copy works where it now sits.
    await page.goto(`${t.baseUrl}/endpoints`);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.baseUrl });
    await page.locator('#endpoints-table').getByRole('button', { name: /^Copy URL/ }).click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toMatch(/^http:\/\/rpc-eth-mainnet\./);
  });

  it('the stacked rows and the phone header keep axe-core at 0 violations', async () => {
    const { page } = await signedIn({ viewport: PHONE, bypassCSP: true });
    const found: string[] = [];
    for (const path of ['/', '/keys', '/endpoints', '/watch', '/webhook', '/payments', '/payouts', '/members', '/account/two-factor', '/account/audit']) {
      await page.goto(`${t.baseUrl}${path}`);
      // A delivery with its attempts (the list refreshes itself while it is pending).
      if (path === '/webhook') await page.locator('li.delivery table.attempts').first().waitFor();
      for (const v of await axeViolations(page)) found.push(`${path}: ${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    }
    expect(found).toEqual([]);
  });
});

describe('IP allowlists', () => {
  it('an endpoint\'s bad line is named next to the field, in words, and what was typed stays', async () => {
    const { page } = await signedIn();
    const k = await key();
    const made = await signedCall(t.baseUrl, ...k, 'POST', '/v1/endpoints', JSON.stringify({ name: 'allow', network_environment_id: 1 }));
    const id = made.body.endpoint.id as number;
    await page.goto(`${t.baseUrl}/endpoints/${id}`);
    const box = page.getByLabel(/Client IPs allowed/);
    await box.fill('203.0.113.7\n10.0.0.0/8');
    await page.getByRole('button', { name: 'Save allowlist' }).click();
    const error = page.locator('#endpoint-allow-error');
    await error.waitFor();
    expect(await error.textContent()).toBe('Line 2: 10.0.0.0/8 is not an IPv4 or IPv6 address (ranges are not supported)');
    expect(await box.inputValue()).toBe('203.0.113.7\n10.0.0.0/8');
    // Next to the field (it describes it), not a banner at the top of the page.
    expect(await box.getAttribute('aria-invalid')).toBe('true');
    expect(await box.getAttribute('aria-describedby')).toBe('endpoint-allow-error');
    expect(await page.locator('main > .error, main > p.error').count()).toBe(0);
    // A pasted comma-separated list is read too; the saved list shows one per line.
    await box.fill('203.0.113.7, 198.51.100.1\n2001:db8::1');
    await page.getByRole('button', { name: 'Save allowlist' }).click();
    await page.getByText('Allowlist saved.').waitFor();
    expect(await page.getByLabel(/Client IPs allowed/).inputValue()).toBe('203.0.113.7\n198.51.100.1\n2001:db8::1');
    expect((await signedCall(t.baseUrl, ...k, 'GET', `/v1/endpoints/${id}`)).body.endpoint.allowed_ips).toEqual(['203.0.113.7', '198.51.100.1', '2001:db8::1']);
  });

  it('keys take one per line too, with the same message by the field, on create and on edit', async () => {
    const { page } = await signedIn();
    await page.goto(`${t.baseUrl}/keys`);
    const create = page.locator('form[action="/keys"]');
    await create.getByLabel('Name').fill('lined');
    // One per line, as the endpoint's box; the third line holds two, pasted with a comma.
    await create.getByLabel(/Allowed IPs/).fill('203.0.113.7\n\n198.51.100.1, 10.0.0.300');
    await create.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#new-key-allow-error').waitFor();
    expect(await page.locator('#new-key-allow-error').textContent()).toBe('Line 3: 10.0.0.300 is not an IPv4 or IPv6 address');
    expect(await create.getByLabel('Name').inputValue()).toBe('lined');
    expect(await create.getByLabel(/Allowed IPs/).inputValue()).toBe('203.0.113.7\n\n198.51.100.1, 10.0.0.300');
    expect(await page.locator('main > .error, main > p.error').count()).toBe(0);
    expect(await create.locator('textarea').count()).toBe(1);

    await create.getByLabel(/Allowed IPs/).fill('203.0.113.7\n198.51.100.1');
    await create.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#new-key').waitFor();
    const prefix = (await page.locator('#new-key .copy-value').first().textContent())!.slice(0, 8);
    const row = page.locator(`tr[data-key="${prefix}"]`);
    expect(await row.locator('summary').textContent()).toContain('203.0.113.7, 198.51.100.1');

    await row.locator('summary').click();
    await row.getByLabel(/Allowed client IPs/).fill('203.0.113.7\nfe80::1/64');
    await row.getByRole('button', { name: 'Save allowlist' }).click();
    const edited = page.locator(`tr[data-key="${prefix}"]`);
    await edited.locator('.field-error').waitFor();
    expect(await edited.locator('.field-error').textContent()).toBe('Line 2: fe80::1/64 is not an IPv4 or IPv6 address (ranges are not supported)');
    expect(await edited.getByLabel(/Allowed client IPs/).inputValue()).toBe('203.0.113.7\nfe80::1/64');
    // Nothing was saved.
    expect(await edited.locator('summary').textContent()).toContain('203.0.113.7, 198.51.100.1');
  });
});

/** Every uPlot made on the page, caught as cabinet.js makes it (uPlot draws on a canvas). */
function catchPlots(page: Page) {
  return page.addInitScript(() => {
    const w = globalThis as unknown as { uPlot?: unknown; plots: unknown[] };
    w.plots = [];
    let real: unknown;
    Object.defineProperty(w, 'uPlot', {
      configurable: true,
      get: () => real,
      set(U: new (...a: unknown[]) => unknown) {
        const Caught = function (...a: unknown[]) { const u = new U(...a); w.plots.push(u); return u; };
        real = Object.assign(Caught, U);
      },
    });
  });
}

interface ChartState {
  xValues: string[]; xSplits: number[]; ySplits: number[]; crSplits: number[];
  xMin: number; xMax: number; first: number; last: number; legend: string;
}

function chartState(page: Page): Promise<ChartState> {
  return page.evaluate(() => {
    const w = globalThis as any;
    const u = w.plots.at(-1);
    const xs = u.data[0] as number[];
    return {
      xValues: u.axes[0]._values, xSplits: u.axes[0]._splits, ySplits: u.axes[1]._splits, crSplits: u.axes[2]._splits,
      xMin: u.scales.x.min, xMax: u.scales.x.max, first: xs[0]!, last: xs.at(-1)!,
      legend: (w.document.querySelector('#usage .u-legend').innerText as string).replace(/\s+/g, ' ').trim(),
    };
  });
}

describe('the usage chart', () => {
  it('one label per day, whole bars at both ends, whole-number ticks, and a legend with totals', async () => {
    const { page } = await signedIn();
    await catchPlots(page);
    const k = await key();
    const made = await signedCall(t.baseUrl, ...k, 'POST', '/v1/endpoints', JSON.stringify({ name: 'chart', network_environment_id: 1 }));
    const uuid = (made.body.endpoint.url as string).split('/').pop()!;
    const id = made.body.endpoint.id as number;

    // No calls yet: the axis counts 0 and 1, never 0.2 requests.
    await page.goto(`${t.baseUrl}/endpoints/${id}?days=7`);
    await page.locator('#usage canvas').first().waitFor();
    const empty = await chartState(page);
    expect(empty.ySplits.length).toBeGreaterThan(1);
    for (const v of [...empty.ySplits, ...empty.crSplits]) expect(Number.isInteger(v), `tick ${v}`).toBe(true);
    expect(empty.legend).not.toMatch(/--|Time/);
    expect(empty.legend).toMatch(/Day\s*last 7 days.*Requests\s*0 in all.*Credits\s*0 in all/);

    for (let i = 0; i < 3; i++) expect(await rpc(uuid)).toBe(200);
    await expect.poll(async () => {
      await page.goto(`${t.baseUrl}/endpoints/${id}?days=7`);
      return page.locator('#usage-totals').textContent();
    }, { timeout: 10_000 }).toContain('3 requests · 30 credits');
    await page.locator('#usage canvas').first().waitFor();
    const seven = await chartState(page);
    // Seven days, each labelled once at most, on day boundaries.
    expect(new Set(seven.xValues).size).toBe(seven.xValues.length);
    expect(seven.xValues.length).toBeGreaterThanOrEqual(4);
    for (const s of seven.xSplits) expect(s % 86400).toBe(0);
    // Half a day of room past the first and the last day: both bars whole.
    expect(seven.first - seven.xMin).toBeGreaterThanOrEqual(43200);
    expect(seven.xMax - seven.last).toBeGreaterThanOrEqual(43200);
    for (const v of [...seven.ySplits, ...seven.crSplits]) expect(Number.isInteger(v), `tick ${v}`).toBe(true);
    expect(seven.legend).toMatch(/Requests\s*3 in all.*Credits\s*30 in all/);
    // Hovering a day reads that day.
    const over = page.locator('#usage .u-over');
    const size = (await over.boundingBox())!;
    await over.hover({ position: { x: size.width - 5, y: size.height / 2 } });
    await expect.poll(async () => (await chartState(page)).legend).toMatch(new RegExp(`Day\\s*${new Date(seven.last * 1000).toISOString().slice(0, 10)}.*Requests\\s*3(?!\\d)`));

    for (const days of [30, 90]) {
      await page.goto(`${t.baseUrl}/endpoints/${id}?days=${days}`);
      await page.locator('#usage canvas').first().waitFor();
      const s = await chartState(page);
      expect(new Set(s.xValues).size, `${days} days`).toBe(s.xValues.length);
      expect(s.xMax - s.last).toBeGreaterThanOrEqual(43200);
    }
  });
});

describe('the webhook form', () => {
  // Ethereum: 86,400 / 12 s = 7,200 blocks × 20 credits (eth_getBlockByNumber at the default
  // price); Polygon: 86,400 / 2 s = 43,200 blocks × 5 credits.
  const ALL = 'Estimated: about 360,000 credits a day (50,400 blocks a day on 2 networks, each block billed).';

  it('states what blocks cost a day before saving, without script', async () => {
    const ctx = await browser.browser.newContext({ javaScriptEnabled: false });
    const page = await ctx.newPage();
    openPages.push(page);
    await page.goto(`${t.baseUrl}/login`);
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.goto(`${t.baseUrl}/webhook`);
    // The API's default: blocks on, every network.
    expect(await page.getByRole('checkbox', { name: /^Blocks/ }).isChecked()).toBe(true);
    expect(await page.locator('#block-estimate').textContent()).toBe(ALL);
    // Each network's share, to choose from without script.
    expect(await page.locator('#block-estimates li').allTextContents())
      .toEqual(['Ethereum mainnet: about 144,000 credits (7,200 blocks)', 'Polygon mainnet: about 216,000 credits (43,200 blocks)']);
    await ctx.close();
  });

  it('updates the estimate live as the box and the networks change; saving keeps the API default', async () => {
    const { page } = await signedIn();
    await page.goto(`${t.baseUrl}/webhook`);
    const estimate = page.locator('#block-estimate');
    expect(await estimate.textContent()).toBe(ALL);
    const blocks = page.getByRole('checkbox', { name: /^Blocks/ });
    await blocks.uncheck();
    await expect.poll(() => estimate.textContent()).toBe('Blocks off: no credits for blocks.');
    await blocks.check();
    await expect.poll(() => estimate.textContent()).toBe(ALL);
    await page.locator('select[name=block_networks]').selectOption('polygon');
    await expect.poll(() => estimate.textContent()).toBe('Estimated: about 216,000 credits a day (43,200 blocks a day on 1 network, each block billed).');
    await page.locator('select[name=block_networks]').selectOption([]);
    await expect.poll(() => estimate.textContent()).toBe(ALL);

    // Saved with the defaults, the API's default stands: blocks on every network.
    await page.getByLabel('URL').fill('http://127.0.0.1:9/hook');
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByText('Webhook saved.').waitFor();
    const { body } = await signedCall(t.baseUrl, ...(await key()), 'GET', '/v1/address-watch/webhook');
    expect(body.events).toMatchObject({ block: true, block_networks: [] });
    expect(await page.locator('#block-estimate').textContent()).toBe(ALL);
  });
});

describe('the pages themselves', () => {
  it('caused no script errors and no CSP violations', () => {
    expect(problems).toEqual([]);
  });
});

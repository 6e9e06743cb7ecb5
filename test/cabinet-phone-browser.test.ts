import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { setLogin } from '../src/cabinet/index.js';
import { listEndpointRows } from '../src/store/endpoints.js';
import { launchBrowser, screenshotAll, type TestBrowser, watchPageProblems } from './helpers/browser.js';
import { FakeEvm } from './helpers/fake-evm.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

// The cabinet on a 390 px phone, as a newcomer met it (issue 36): the overview's top methods,
// the Address Watch events, an order's page and a failed call in the request log. Each page
// with real data, in Chromium with the CSP enforced, axe-core's every rule (best practice too).

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const EMAIL = 'phone@example.com';
const PASSWORD = 'correct horse battery staple';
/** Real method names of the longest kind, as a dapp calls them. */
const METHODS = ['eth_getTransactionByBlockNumberAndIndex', 'eth_getUncleCountByBlockNumber', 'eth_maxPriorityFeePerGas', 'eth_getTransactionReceipt'];
const json = (o: unknown) => JSON.stringify(o);

let t: TestService;
let m: Merchant;
let eth: FakeEvm;
let browser: TestBrowser;
let page: Page;
let base: string;
let uuid: string;
let endpointId: number;
const problems: string[] = [];

beforeAll(async () => {
  eth = await new FakeEvm().start();
  // eth_call reverts: a JSON-RPC error in an HTTP 200 answer, as nodes send it.
  eth.respond = (s, res) => {
    const body = JSON.parse(s.body) as { id?: unknown; method?: string };
    if (Array.isArray(body) || body.method !== 'eth_call') return false;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(json({ jsonrpc: '2.0', id: body.id, error: { code: 3, message: 'execution reverted' } }));
    return true;
  };
  t = await startTestService({
    networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [eth.url] }] }],
    plans: [{ id: 1, slug: 'pro', name: 'Pro', included_credits: 1_000_000, rps_limit: 1000, endpoints_limit: 5, webhook_address_slots: 50, network_limit: null }],
  }, { cabinet: { signIn: { perIpPerMinute: 1000, perEmailPerMinute: 1000 } } });
  base = t.baseUrl;
  m = await t.merchant({ plan: 'pro' });
  await setLogin(t.store, m.userId, { email: EMAIL, password: PASSWORD });
  const made = await m.call('POST', '/v1/endpoints', json({ name: 'phone', network_environment_id: 1 }));
  expect(made.status, json(made.body)).toBe(200);
  const [row] = await listEndpointRows(t.store, m.userId);
  uuid = row!.uuid;
  endpointId = row!.id;
  browser = await launchBrowser();
  page = await (await browser.context({ viewport: { width: 390, height: 844 } })).newPage();
  watchPageProblems(page, problems);
  await page.goto(`${base}/login`);
  await page.getByLabel('E-mail').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await eth?.stop();
});

beforeEach((c) => {
  c.onTestFailed(async () => {
    const files = await screenshotAll([page], 'cabinet-phone', c.task.name);
    console.error(`screenshots: ${files.join(', ')}`);
  });
});

async function rpc(method: string): Promise<number> {
  const res = await request(`${t.gatewayUrl}/${uuid}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: json({ jsonrpc: '2.0', id: 1, method, params: [] }) });
  await res.body.dump();
  return res.statusCode;
}

/** axe-core's every rule, run through DevTools so the page keeps its CSP. */
async function axeAll(): Promise<string[]> {
  if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate(AXE_SOURCE);
  const r = await page.evaluate('axe.run(document)') as { violations: Array<{ id: string; help: string; nodes: Array<{ target: string[] }> }> };
  return r.violations.map((v) => `${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

const sideways = () => page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth') as Promise<number>;

describe('the cabinet on a 390 px phone', () => {
  it('the overview\'s top-methods table fits the screen: no page scrolls sideways', async () => {
    for (const method of METHODS) expect(await rpc(method)).toBe(200);
    await expect.poll(async () => {
      await page.goto(`${base}/?days=7`);
      return page.locator('table.methods tbody tr').count();
    }, { timeout: 15_000 }).toBe(METHODS.length);
    const table = (await page.locator('table.methods').boundingBox())!;
    expect(table.x).toBeGreaterThanOrEqual(0);
    expect(table.x + table.width, 'the table\'s right edge').toBeLessThanOrEqual(390);
    expect(await sideways()).toBeLessThanOrEqual(0);
    // Every method name is there to read, whole.
    expect((await page.locator('table.methods tbody code').allInnerTexts()).map((s) => s.replace(/\s+/g, '')).sort()).toEqual([...METHODS].sort());
    expect(await axeAll()).toEqual([]);
  });

  it('the Address Watch events table scrolls by keyboard (axe scrollable-region-focusable)', async () => {
    const now = new Date().toISOString();
    for (let i = 0; i < 3; i++) {
      await t.store.db.insertInto('watch_events').values({
        account_id: m.userId, watch_id: 'w_phone', network_environment_id: 1, network: 'eth', type: 'payment', block_height: 19_000_000 + i, block_hash: `0x${'cd'.repeat(32)}`,
        body: json({ watch_id: 'w_phone', network: 'eth', address: '0x52908400098527886E0F7030069857D2E4169EE7', tx_hash: `0x${String(i).repeat(64)}`, block_height: 19_000_000 + i, type: 'payment', direction: 'in', amount: '1250000000000000000' }),
        removed: 0, created_at: now,
      }).execute();
    }
    await page.goto(`${base}/watch`);
    await page.locator('#events-table').waitFor();
    const wrap = page.locator('.table-wrap:has(#events-table)');
    // It is wider than the phone (so it scrolls), and a keyboard reaches it and scrolls it.
    expect(await wrap.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
    await wrap.focus();
    expect(await wrap.evaluate((el) => el.matches(':focus') && el.getAttribute('tabindex') === '0')).toBe(true);
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => wrap.evaluate((el) => el.scrollLeft)).toBeGreaterThan(0);
    expect(await sideways()).toBeLessThanOrEqual(0);
    expect(await axeAll()).toEqual([]);
  });

  it('an order\'s page with a transfer: every landmark has a name of its own (axe landmark-unique)', async () => {
    const r = await m.call('POST', '/v1/payments', json({ network_slug: 'eth', order_id: 'P-1', amount: '0.25', address: '0x3f1e9d0e3bd0b5fe3c1b0bb76e1a4c5a0b6a2e01' }));
    expect(r.status, json(r.body)).toBe(200);
    const order = await t.store.db.selectFrom('payment_orders').selectAll().where('payment_id', '=', r.body.payment.payment_id).executeTakeFirstOrThrow();
    await t.store.db.insertInto('payment_funding').values({
      order_pk: order.id, event_id: 2_000_000, tx_hash: `0x${'ab'.repeat(32)}`, from_address: '0x00000000000000000000000000000000000000f1', amount_raw: '250000000000000000',
      block_height: 4242, counted: 1, late: 0, removed: 0, created_at: new Date().toISOString(),
    }).execute();
    await page.goto(`${base}/payments/${order.payment_id}`);
    await page.locator('#funding-table').waitFor();
    const names = await page.evaluate(`[...document.querySelectorAll('[role=region], section[aria-labelledby], section[aria-label]')].map((el) =>
      el.getAttribute('aria-label') ?? document.getElementById(el.getAttribute('aria-labelledby'))?.textContent.trim())`) as string[];
    expect(names.filter((n, i) => names.indexOf(n) !== i), `regions: ${names.join(' | ')}`).toEqual([]);
    expect(await sideways()).toBeLessThanOrEqual(0);
    expect(await axeAll()).toEqual([]);
  });

  it('a failed call in the request log is not shown as a green 200 in the columns a phone shows', async () => {
    expect(await rpc('eth_call')).toBe(200);
    expect(await rpc('eth_blockNumber')).toBe(200);
    const rows = page.locator('#log-table tbody tr');
    await expect.poll(async () => {
      await page.goto(`${base}/endpoints/${endpointId}/logs?method=eth_call`);
      return rows.count();
    }, { timeout: 10_000 }).toBe(1);
    const status = rows.first().locator('td').nth(2);
    const box = (await status.boundingBox())!;
    expect(box.x + box.width, 'the status cell is on screen without scrolling').toBeLessThanOrEqual(390);
    expect(await status.locator('.badge').getAttribute('class')).not.toMatch(/\bok\b/);
    expect(await status.locator('.badge').getAttribute('class')).toMatch(/\bbad\b/);
    expect((await status.innerText()).trim()).toMatch(/^200\b.*error/i);
    // A call that worked keeps its green 200.
    await page.goto(`${base}/endpoints/${endpointId}/logs?method=eth_blockNumber`);
    expect(await rows.first().locator('td').nth(2).locator('.badge.ok').innerText()).toBe('200');
    expect(await axeAll()).toEqual([]);
    expect(problems).toEqual([]);
  });
});

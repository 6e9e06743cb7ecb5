import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { request } from 'undici';
import { launchBrowser, screenshotAll, type TestBrowser, watchPageProblems } from './helpers/browser.js';
import { cli } from './helpers/cli.js';
import { FakeEvm } from './helpers/fake-evm.js';
import { startTestService, type TestService } from './helpers/service.js';
import { listEndpointRows } from '../src/store/endpoints.js';

// The request-log page in a real Chromium after real calls through the gateway: the calls with
// their fields, the errors and method filters, paging, a phone-sized screen, axe-core on each state.

let t: TestService;
let eth: FakeEvm;
let browser: TestBrowser;
let page: Page;
let base: string;
let userId: number;
const pageProblems: string[] = [];
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const EMAIL = 'logs@example.com';
const PASSWORD = 'correct horse battery staple';

beforeAll(async () => {
  eth = await new FakeEvm().start();
  eth.respond = (s, res) => {
    const body = JSON.parse(s.body) as { id?: unknown; method?: string };
    if (Array.isArray(body) || body.method !== 'eth_call') return false;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: 3, message: 'execution reverted' } }));
    return true;
  };
  t = await startTestService({
    networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [eth.url] }], credits: { default: 20, methods: { eth_blockNumber: 10 } } }],
    plans: [{ id: 1, slug: 'pro', name: 'Pro', included_credits: 1_000_000, rps_limit: 1000, endpoints_limit: 5, network_limit: null }],
  }, { cabinet: { signIn: { perIpPerMinute: 1000, perEmailPerMinute: 1000 } } });
  base = t.baseUrl;
  const made = await cli(['admin', 'accounts', 'create', '--plan', 'pro', '--email', EMAIL, '--data-dir', t.dataDir, '--json'], { stdin: `${PASSWORD}\n` });
  expect(made.code, made.stderr).toBe(0);
  userId = JSON.parse(made.stdout).user_id;
  browser = await launchBrowser();
  page = await (await browser.context()).newPage();
  watchPageProblems(page, pageProblems);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await eth?.stop();
});

beforeEach((c) => {
  c.onTestFailed(async () => {
    const files = await screenshotAll([page], 'cabinet-request-logs', c.task.name);
    console.error(`screenshots: ${files.join(', ')}`);
  });
});

/** axe-core on the page as served, CSP and all (evaluated through DevTools, as the two-factor suite does). */
async function noViolations(state: string) {
  if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })`) as { violations: Array<{ id: string; help: string; nodes: Array<{ target: string[] }> }> };
  expect(result.violations.map((v) => `${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), state).toEqual([]);
}

async function rpc(uuid: string, body: string) {
  const res = await request(`${t.gatewayUrl}/${uuid}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  await res.body.dump();
  return res.statusCode;
}

const rows = () => page.locator('#log-table tbody tr');

describe('request logs in the cabinet', () => {
  let endpointId: number;

  it('shows the calls made through the gateway, newest first, from the endpoint page', async () => {
    await page.goto(`${base}/login`);
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.goto(`${base}/endpoints`);
    await page.getByLabel('Name').fill('main');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.getByRole('heading', { name: 'main' }).waitFor();
    const [row] = await listEndpointRows(t.store, userId);
    endpointId = row!.id;

    await page.getByRole('link', { name: 'Request logs' }).click();
    await page.getByRole('heading', { name: 'Request logs' }).waitFor();
    await page.getByText('No calls yet.').waitFor();
    await noViolations('request logs, empty');

    expect(await rpc(row!.uuid, '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}')).toBe(200);
    expect(await rpc(row!.uuid, '{"jsonrpc":"2.0","id":2,"method":"eth_call","params":[{"to":"0x0000000000000000000000000000000000000001"},"latest"]}')).toBe(200);
    expect(await rpc(row!.uuid, '{"jsonrpc":"2.0","id":3,"method":"eth_blockNumber","params":[]}')).toBe(200);
    expect(await rpc(row!.uuid, 'not json')).toBe(400);
    // A call enters the log when its answer is finished: a moment after the client has it.
    await expect.poll(async () => {
      await page.getByRole('link', { name: 'Refresh' }).click();
      await page.getByRole('heading', { name: 'Calls' }).waitFor();
      return rows().count();
    }, { timeout: 10_000 }).toBe(4);
    const cells = async (i: number) => (await rows().nth(i).locator('td').allInnerTexts()).map((s) => s.trim());
    const [parse, blockNumber, revert] = [await cells(0), await cells(1), await cells(2)];
    // Time, method, status, JSON-RPC error, latency, credits, client, cache.
    expect(parse.slice(1, 4)).toEqual(['none', '400', '-32700']);
    expect([blockNumber[1], blockNumber[2], blockNumber[3], blockNumber[5], blockNumber[6]]).toEqual(['eth_blockNumber', '200', 'none', '10', '127.0.0.1']);
    expect(blockNumber[4]).toMatch(/^[\d.]+ ms$/);
    // To the millisecond (the date only for another day's calls).
    expect(blockNumber[0]).toMatch(/^(\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d\.\d{3}$/);
    // A JSON-RPC error failed the call, whatever the HTTP status: never a green 200.
    expect([revert[1], revert[2], revert[3], revert[5]]).toEqual(['eth_call', '200 error', '3', '20']);
    await noViolations('request logs with calls');
    expect(pageProblems).toEqual([]);
  });

  it('filters errors and a method, and clears the filter', async () => {
    await page.getByLabel('Which calls').selectOption('error');
    await page.getByRole('button', { name: 'Show' }).click();
    await expect.poll(() => rows().count()).toBe(2);
    expect(page.url()).toContain('status=error');
    expect(await page.getByLabel('Which calls').inputValue()).toBe('error');
    await noViolations('errors only');
    await page.getByLabel('Which calls').selectOption('all');
    await page.getByLabel('Method').fill('eth_blockNumber');
    await page.getByRole('button', { name: 'Show' }).click();
    await expect.poll(() => rows().count()).toBe(2);
    expect(await rows().locator('td:nth-child(2)').allInnerTexts()).toEqual(['eth_blockNumber', 'eth_blockNumber']);
    await page.getByLabel('Method').fill('eth_nothing');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByText('No calls match.').waitFor();
    await page.getByRole('link', { name: 'Clear filter' }).click();
    await expect.poll(() => rows().count()).toBe(4);
  });

  it('pages back past 100 calls', async () => {
    const [row] = await listEndpointRows(t.store, userId);
    for (let i = 0; i < 110; i++) await rpc(row!.uuid, `{"jsonrpc":"2.0","id":${i},"method":"eth_blockNumber","params":[]}`);
    await expect.poll(async () => {
      await page.goto(`${base}/endpoints/${endpointId}/logs`);
      return page.getByRole('link', { name: 'Older calls' }).count();
    }, { timeout: 10_000 }).toBe(1);
    expect(await rows().count()).toBe(100);
    await page.getByRole('link', { name: 'Older calls' }).click();
    // 114 calls in all (each worker keeps 200 a endpoint): the 14 oldest on the second page, the first call last.
    await expect.poll(() => rows().count()).toBe(14);
    expect(await rows().last().locator('td:nth-child(2)').innerText()).toBe('eth_blockNumber');
  });

  it('works on a phone-sized screen: the filter in view, the table scrolls inside its card', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/endpoints/${endpointId}/logs?status=error`);
    const box = (await page.getByRole('button', { name: 'Show' }).boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    expect(box.y + box.height).toBeLessThanOrEqual(844);
    const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await noViolations('request logs at 390 px');
    expect(pageProblems).toEqual([]);
  });
});

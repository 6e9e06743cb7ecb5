import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { BrowserContext, Page } from 'playwright-core';
import { join } from 'node:path';
import { axeViolations, launchBrowser, screenshotAll, TEST_OUTPUT, type TestBrowser, watchPageProblems } from './helpers/browser.js';
import { cli } from './helpers/cli.js';
import { FakeEvm } from './helpers/fake-evm.js';
import { signatureValid, startReceiver, type Receiver } from './helpers/receiver.js';
import { signedCall, startTestService, type TestService } from './helpers/service.js';
import { transition } from '../src/payments/transition.js';

// The cabinet in a real Chromium against a real service: every flow of issue 13.

let t: TestService;
let eth: FakeEvm;
let receiver: Receiver;
let browser: TestBrowser;
let ctx: BrowserContext;
let page: Page;
let base: string;
let userA: number;
const openPages: Page[] = [];
/** Script errors and CSP violations seen by the main page: the cabinet must cause none. */
const pageProblems: string[] = [];
const PASSWORD = 'correct horse battery staple';

beforeAll(async () => {
  eth = await new FakeEvm().start();
  receiver = await startReceiver();
  t = await startTestService({
    networks: [
      { id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [eth.url] }],
        credits: { default: 20, methods: { eth_blockNumber: 10 } } },
    ],
    plans: [{ id: 1, slug: 'pro', name: 'Pro', included_credits: 1_000_000, rps_limit: 1000, endpoints_limit: 5, webhook_address_slots: 50, network_limit: null }],
    webhooks: { allow_private_urls: true },
  }, { watch: { delivery: { pollMs: 100 } } });
  base = t.baseUrl;
  // Account A the way an operator makes it: the admin command, password on stdin.
  const made = await cli(['admin', 'accounts', 'create', '--plan', 'pro', '--email', 'Merchant@Example.com', '--data-dir', t.dataDir, '--json'], { stdin: `${PASSWORD}\n` });
  expect(made.code, made.stderr).toBe(0);
  userA = JSON.parse(made.stdout).user_id;
  browser = await launchBrowser();
  ctx = await browser.context();
  page = await ctx.newPage();
  openPages.push(page);
  watchPageProblems(page, pageProblems);
});

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await receiver?.close();
  await eth?.stop();
});

beforeEach((c) => {
  c.onTestFailed(async () => {
    const files = await screenshotAll(openPages, 'cabinet', c.task.name);
    console.error(`screenshots: ${files.join(', ')}`);
  });
});

async function signIn(p: Page, email: string, password: string) {
  await p.goto(`${base}/login`);
  await p.getByLabel('E-mail').fill(email);
  await p.getByLabel('Password').fill(password);
  await p.getByRole('button', { name: 'Sign in' }).click();
}

async function rpc(uuid: string, method = 'eth_blockNumber') {
  const res = await request(`${t.gatewayUrl}/${uuid}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }),
  });
  return { status: res.statusCode, body: await res.body.json() as { error?: { message: string } } };
}

describe('sign-in', () => {
  it('refuses a wrong password, then signs in and shows the plan', async () => {
    await page.goto(`${base}/`);
    await expect.poll(() => new URL(page.url()).pathname).toBe('/login');
    await signIn(page, 'merchant@example.com', 'wrong password!!');
    await page.getByText('Wrong e-mail or password.').waitFor();
    await signIn(page, 'merchant@example.com', PASSWORD);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await page.locator('.page-head').textContent()).toContain('Pro');
    // The cookie: HttpOnly, SameSite=Lax, never readable by the page's scripts.
    const cookie = (await ctx.cookies()).find((c) => c.name === 'rpcctl_session')!;
    expect(cookie.httpOnly).toBe(true);
    expect(cookie.sameSite).toBe('Lax');
    expect(await page.evaluate('document.cookie')).not.toContain('rpcctl_session');
  });

  it('a one-time link from rpcctl admin login-link signs in once', async () => {
    const made = await cli(['admin', 'login-link', '--account', String(userA), '--base-url', base, '--data-dir', t.dataDir, '--json']);
    expect(made.code, made.stderr).toBe(0);
    const { url } = JSON.parse(made.stdout) as { url: string };
    const other = await (await browser.context()).newPage();
    openPages.push(other);
    await other.goto(url);
    // Opening it only asks; a mail scanner's prefetch cannot use it up.
    await other.getByRole('button', { name: 'Continue' }).click();
    await other.getByRole('heading', { name: 'Overview' }).waitFor();
    const again = await (await browser.context()).newPage();
    openPages.push(again);
    const res = await again.goto(url);
    expect(res?.status()).toBe(410);
    await again.getByText('expired or was used already').waitFor();
  });
});

describe('API keys', () => {
  let prefix = '';
  let apiKey = '';
  let secret = '';

  it('shows the secret once, then only the prefix', async () => {
    await page.goto(`${base}/keys`);
    await page.getByLabel('Name').fill('backend');
    await page.getByRole('button', { name: 'Create key' }).click();
    secret = (await page.locator('#new-secret').textContent())!;
    expect(secret).toMatch(/^sk_/);
    apiKey = (await page.locator('#new-key .copy-value').first().textContent())!;
    prefix = apiKey.slice(0, 8);
    // Copy puts the value on the clipboard (loopback is a secure context).
    await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await page.getByRole('button', { name: 'Copy secret' }).click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);

    await page.goto(`${base}/keys`);
    const html = await page.content();
    expect(html).not.toContain(secret);
    expect(html).not.toContain(apiKey);
    expect(await page.locator(`tr[data-key="${prefix}"] .prefix`).textContent()).toBe(`${prefix}…`);
    expect(await page.locator(`tr[data-key="${prefix}"]`).textContent()).toContain('never');
  });

  it('records last use, edits the allowlist, and revokes after confirmation', async () => {
    const ok = await signedCall(base, apiKey, secret, 'GET', '/v1/account');
    expect(ok.status).toBe(200);
    await page.goto(`${base}/keys`);
    const row = page.locator(`tr[data-key="${prefix}"]`);
    expect(await row.locator('td').nth(3).textContent()).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/);

    await row.locator('summary').click();
    await row.getByLabel(/Allowed client IPs/).fill('203.0.113.7');
    await row.getByRole('button', { name: 'Save allowlist' }).click();
    await page.getByText('saved').waitFor();
    expect(await page.locator(`tr[data-key="${prefix}"]`).textContent()).toContain('203.0.113.7');
    await expect.poll(async () => (await signedCall(base, apiKey, secret, 'GET', '/v1/account')).status, { timeout: 5000 }).toBe(403);

    await page.locator(`tr[data-key="${prefix}"]`).getByRole('link', { name: 'Revoke' }).click();
    await page.getByRole('heading', { name: `Revoke key ${prefix}…?` }).waitFor();
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText(`Key ${prefix}… revoked.`).waitFor();
    expect(await page.locator(`tr[data-key="${prefix}"]`).count()).toBe(0);
    await expect.poll(async () => (await signedCall(base, apiKey, secret, 'GET', '/v1/account')).status, { timeout: 5000 }).toBe(401);
  });
});

describe('endpoints', () => {
  let uuid = '';
  let endpointPath = '';

  it('creates an endpoint, calls it through the gateway, and shows the call in its usage', async () => {
    await page.goto(`${base}/endpoints`);
    await page.getByLabel('Name').fill('main');
    await page.getByLabel('Network').selectOption('eth:mainnet');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.getByText('Endpoint main created.').waitFor();
    endpointPath = new URL(page.url()).pathname;
    const url = (await page.locator('#endpoint-url').textContent())!;
    uuid = url.slice(url.lastIndexOf('/') + 1);
    expect(url).toMatch(/^http:\/\/rpc-eth-mainnet\./);

    expect((await rpc(uuid)).status).toBe(200);
    await expect.poll(async () => {
      await page.goto(`${base}${endpointPath}?days=7`);
      return page.locator('#usage-totals').textContent();
    }, { timeout: 10_000 }).toContain('1 requests · 10 credits');
    expect(await page.locator('table.methods').textContent()).toContain('eth_blockNumber');
    // The chart is drawn (uPlot from our own files, under the CSP), and the period switch
    // swaps the usage card in place (htmx) and keeps the URL in step.
    await page.locator('#usage canvas').first().waitFor();
    await page.getByRole('link', { name: '90 days' }).click();
    await page.getByText('in the last 90 days').waitFor();
    await expect.poll(() => new URL(page.url()).searchParams.get('days')).toBe('90');
    await page.locator('#usage canvas').first().waitFor();
  });

  it('pause makes the gateway refuse; resume serves again', async () => {
    await page.goto(`${base}${endpointPath}`);
    await page.getByRole('button', { name: 'Pause endpoint' }).click();
    await page.getByText('Endpoint paused.').waitFor();
    const refused = await rpc(uuid);
    expect(refused.status).toBe(403);
    expect(refused.body.error?.message).toBe('endpoint paused');
    await page.getByRole('button', { name: 'Resume endpoint' }).click();
    await page.getByText('Endpoint resumed.').waitFor();
    expect((await rpc(uuid)).status).toBe(200);
  });

  it('a bad allowlist entry is refused by the API\'s rule, named by its line', async () => {
    await page.goto(`${base}${endpointPath}`);
    await page.getByLabel(/Client IPs allowed/).fill('not-an-ip');
    await page.getByRole('button', { name: 'Save allowlist' }).click();
    await page.getByText('Line 1: not-an-ip is not an IPv4 or IPv6 address').waitFor();
  });

  it('another account\'s endpoint id in the URL is 404', async () => {
    const other = await t.merchant({ plan: 'pro' });
    const theirs = await other.call('POST', '/v1/endpoints', JSON.stringify({ name: 'theirs', network_environment_id: 1 }));
    const res = await page.goto(`${base}/endpoints/${theirs.body.endpoint.id}`);
    expect(res?.status()).toBe(404);
    expect(await page.content()).not.toContain('theirs');
    await page.goto(`${base}/endpoints`);
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    // A real form post from the signed-in page, token and all: still not theirs to change.
    const pause = await page.evaluate(async ([id, token]) => (await fetch(`/endpoints/${id}/status`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ status: 'paused', _csrf: token! }),
    })).status, [String(theirs.body.endpoint.id), csrf]);
    expect(pause).toBe(404);
    expect((await other.call('GET', `/v1/endpoints/${theirs.body.endpoint.id}`)).body.endpoint.status).toBe('active');
  });
});

describe('Address Watch and webhooks', () => {
  it('adds and removes a watched address', async () => {
    await page.goto(`${base}/watch`);
    await page.getByRole('textbox', { name: 'Address' }).fill('0x52908400098527886E0F7030069857D2E4169EE7');
    await page.getByRole('button', { name: 'Watch', exact: true }).click();
    await page.getByText('Watching 0x5290').waitFor();
    expect(await page.locator('#watch-table').textContent()).toContain('0x52908400098527886E0F7030069857D2E4169EE7');
    await page.getByRole('button', { name: /^Remove 0x5290/ }).click();
    await page.getByText('Address removed').waitFor();
    expect(await page.locator('#watch-table').count()).toBe(0);
  });

  it('Test delivers a signed webhook to the receiver; it shows in the attempts; Redeliver sends it again', async () => {
    await page.goto(`${base}/webhook`);
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByText('Webhook saved.').waitFor();

    await page.getByRole('button', { name: 'Reveal secret' }).click();
    const whsec = (await page.locator('#signing-secret').textContent())!;
    expect(whsec).toMatch(/^whsec_/);

    await page.getByLabel('Event').selectOption('payment');
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByText('Queued test delivery').waitFor();
    await receiver.waitFor((all) => all.length >= 1);
    const first = receiver.received[0]!;
    expect(signatureValid(whsec, first)).toBe(true);
    expect(JSON.parse(first.body)).toMatchObject({ type: 'payment', test: true });
    expect(first.headers['x-webhook-attempt']).toBe('1');

    // The list refreshes by itself (htmx) until the attempt is recorded.
    const delivery = page.locator('li.delivery').first();
    await delivery.getByText('delivered').waitFor();
    expect(await delivery.locator('table.attempts').textContent()).toMatch(/HTTP 200[\s\S]*\d+ ms[\s\S]*ok/);

    await delivery.getByRole('button', { name: 'Redeliver' }).click();
    await receiver.waitFor((all) => all.length >= 2);
    const second = receiver.received[1]!;
    expect(second.headers['x-webhook-id']).toBe(first.headers['x-webhook-id']);
    expect(second.headers['x-webhook-attempt']).toBe('2');
    expect(signatureValid(whsec, second)).toBe(true);
    await expect.poll(() => page.locator('li.delivery').first().locator('table.attempts tbody tr').count(), { timeout: 10_000 }).toBe(2);
    // Tests are never charged: the month holds only the two gateway calls (10 credits each).
    const { body } = await signedCall(base, ...(await freshKey()), 'GET', '/v1/account');
    expect(body.usage.credits_used).toBe(20);
  });
});

describe('payments', () => {
  const ADDRESS = '0x3f1e9d0e3bd0b5fe3c1b0bb76e1a4c5a0b6a2e01';
  let paymentId = '';

  async function createOrder(key: [string, string], body: Record<string, unknown>) {
    const r = await signedCall(base, ...key, 'POST', '/v1/payments', JSON.stringify({ network_slug: 'eth', ...body }));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.payment as { payment_id: string; order_id: string };
  }

  it('a created order shows in the list; its page shows status, amount in units and the lifecycle timeline with the AML result', async () => {
    const key = await freshKey();
    const pending = await createOrder(key, { order_id: 'A-1', amount: '0.5', address: '0x52908400098527886E0F7030069857D2E4169EE7' });
    const order = await createOrder(key, {
      order_id: 'A-1042', amount: '0.25', address: ADDRESS, metadata: { note: '<script>alert(1)</script>' },
    });
    paymentId = order.payment_id;
    await page.goto(`${base}/payments`);
    await page.getByRole('heading', { name: 'Payments' }).waitFor();
    const row = page.locator(`tr[data-payment="${paymentId}"]`);
    expect(await row.textContent()).toMatch(/A-1042[\s\S]*Pending[\s\S]*0\.25\s*ETH/);
    // The status filter is the API's: a status with no orders lists none, "pending" lists both.
    await page.getByRole('link', { name: 'Paid', exact: true }).click();
    await page.getByText('No Paid orders.').waitFor();
    await page.getByRole('link', { name: 'Pending', exact: true }).click();
    await expect.poll(() => page.locator('#payments-table tbody tr').count()).toBe(2);
    expect(await page.locator(`tr[data-payment="${pending.payment_id}"]`).count()).toBe(1);

    // The transitions the engine writes when the money arrives and is screened (the same
    // domain function, each with its webhook), so the page shows a real path and real times.
    const tx = `0x${'ab'.repeat(32)}`;
    const aml = {
      provider: 'sanctions-list', score: 0, risk_level: 'low' as const, details: [],
      report_url: 'https://sanctionssearch.ofac.treas.gov/', checked_at: new Date().toISOString(),
    };
    const ctxs = { store: t.store, config: t.service.config };
    const row0 = await t.store.db.selectFrom('payment_orders').selectAll().where('payment_id', '=', paymentId).executeTakeFirstOrThrow();
    await t.store.db.insertInto('payment_funding').values({
      order_pk: row0.id, event_id: 1_000_000, tx_hash: tx, from_address: '0x00000000000000000000000000000000000000f1', amount_raw: '250000000000000000',
      block_height: 4242, counted: 1, late: 0, removed: 0, created_at: new Date().toISOString(),
    }).execute();
    await t.store.db.transaction().execute(async (trx) => {
      let o = await transition(trx, ctxs, row0, { status: 'seen', txHash: tx });
      o = await transition(trx, ctxs, o, { status: 'aml_check', txHash: tx, receivedRaw: 250_000_000_000_000_000n });
      await transition(trx, ctxs, o, { status: 'paid', txHash: tx, aml, overpaid: false });
    });

    await page.goto(`${base}/payments`);
    await page.locator(`tr[data-payment="${paymentId}"] a`).first().click();
    await page.getByRole('heading', { name: 'Order A-1042' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/payments/${paymentId}`);
    expect(await page.locator('#payment-status').textContent()).toBe('Paid');
    expect((await page.locator('#payment-amount').textContent())!.replace(/\s+/g, ' ')).toBe('0.25 ETH');
    expect((await page.locator('#payment-received').textContent())!.replace(/\s+/g, ' ')).toBe('0.25 ETH');
    const steps = page.locator('#timeline > li');
    expect(await steps.count()).toBe(4);
    const texts = await steps.allTextContents();
    expect(texts.map((x) => x.trim().split(/\s+/)[0])).toEqual(['Pending', 'Seen', 'AML', 'Paid']);
    for (const x of texts) expect(x).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(texts[1]).toContain(tx);
    expect(await page.locator('#aml').textContent()).toMatch(/low risk[\s\S]*score 0 \/ 100[\s\S]*sanctions-list/);
    expect(await page.locator('#aml-report').getAttribute('href')).toBe(aml.report_url);
    expect(await page.locator('#funding-table').textContent()).toMatch(/0\.25\s*ETH[\s\S]*4,242/);
    // Metadata is shown as text, never run.
    expect(await page.locator('#metadata').textContent()).toContain('<script>alert(1)</script>');
    expect(await page.locator('main script').count()).toBe(0);

    // Retention prunes old deliveries: the step keeps its status and says its time is gone.
    await t.store.db.deleteFrom('webhook_deliveries').where('webhook_id', '=', `${paymentId}_2`).execute();
    await page.reload();
    const pruned = await page.locator('#timeline > li').allTextContents();
    expect(pruned).toHaveLength(4);
    expect(pruned[2]).toMatch(/AML check\s+time no longer kept/);
    expect(pruned[3]).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
  });

  it('cancels a pending order through the API handler', async () => {
    const key = await freshKey();
    const order = await createOrder(key, { order_id: 'A-cancel', amount: '1', address: '0x00000000000000000000000000000000000000c1' });
    await page.goto(`${base}/payments/${order.payment_id}`);
    await page.getByText('Cancel this order…').click();
    await page.getByRole('button', { name: 'Cancel order' }).click();
    await page.getByText('Order A-cancel canceled.').waitFor();
    expect(await page.locator('#payment-status').textContent()).toBe('Failed');
    expect(await page.locator('main .page-head').textContent()).toContain('canceled by you');
    expect((await page.locator('#timeline > li').allTextContents()).map((x) => x.trim().split(/\s+/)[0])).toEqual(['Pending', 'Failed']);
    expect(await page.getByRole('button', { name: 'Cancel order' }).count()).toBe(0);
  });

  it('another account\'s payment id in the URL is 404, and cannot be canceled', async () => {
    const other = await t.merchant({ plan: 'pro' });
    const theirs = await other.call('POST', '/v1/payments', JSON.stringify({ network_slug: 'eth', order_id: 'theirs-77', amount: '3', address: '0x00000000000000000000000000000000000000b2' }));
    expect(theirs.status, JSON.stringify(theirs.body)).toBe(200);
    const id = theirs.body.payment.payment_id as string;
    const res = await page.goto(`${base}/payments/${id}`);
    expect(res?.status()).toBe(404);
    expect(await page.content()).not.toContain('theirs-77');
    const bad = await page.goto(`${base}/payments/not-a-payment-id`);
    expect(bad?.status()).toBe(400);
    await page.goto(`${base}/payments`);
    expect(await page.content()).not.toContain('theirs-77');
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    const cancel = await page.evaluate(async ([pid, token]) => (await fetch(`/payments/${pid}/cancel`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: token! }),
    })).status, [id, csrf]);
    expect(cancel).toBe(404);
    expect((await other.call('GET', `/v1/payments/${id}`)).body.payment.status).toBe('pending');
  });

  it('settings: the API refuses a bad tolerance with its message; each xpub shows its first derived address', async () => {
    const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
    const ZPUB = 'zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs';
    // BIP32 test vector 1's master private key.
    const TPRV = 'xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi';
    await page.goto(`${base}/payments`);
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Payment settings' }).waitFor();
    await page.getByLabel(/Underpayment tolerance/).fill('half a percent');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('underpaid_tolerance_bps: must be an integer (basis points)').waitFor();
    // What was typed stays in the form.
    expect(await page.getByLabel(/Underpayment tolerance/).inputValue()).toBe('half a percent');
    await page.getByLabel(/Extended public key \(EVM\)/).fill(XPUB);
    await page.getByLabel(/Underpayment tolerance/).fill('50');
    // A private key for the Tron field: the API's message names the field; nothing is saved.
    await page.getByLabel(/Extended public key \(Tron\)/).fill(TPRV);
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText(/xpubs\.tron: is an extended PRIVATE key/).waitFor();
    await page.getByLabel(/Extended public key \(Tron\)/).fill('');
    // BIP84's zpub of "abandon ... about": its first address is the BIP's vector.
    await page.getByLabel(/Extended public key \(Bitcoin-style chains\)/).fill(ZPUB);
    await page.getByLabel(/Fail orders screened/).selectOption('severe');
    await page.getByLabel(/Complete orders paid/).check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Payment settings saved.').waitFor();
    const { body } = await signedCall(base, ...(await freshKey()), 'GET', '/v1/payments/settings');
    expect(body).toMatchObject({ xpubs: { evm: XPUB, utxo: ZPUB }, underpaid_tolerance_bps: 50, aml_fail_at: 'severe', accept_late: true });
    expect(body.xpubs.tron).toBeUndefined();
    expect(await page.locator('#first-address').textContent()).toContain(body.derived.evm.first_address);
    expect(await page.locator('#first-address-utxo').textContent()).toContain('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
  });

  it('pages of 25 keep the status filter; a status the API does not know is its 400', async () => {
    const key = await freshKey();
    for (let i = 0; i < 25; i++) {
      await createOrder(key, { order_id: `bulk-${i}`, amount: '0.01', address: `0x${(0xe000 + i).toString(16).padStart(40, '0')}` });
    }
    await page.goto(`${base}/payments?status=pending`);
    expect(await page.locator('#payments-table tbody tr').count()).toBe(25);
    await page.getByText('Page 1 of 2').waitFor();
    await page.getByRole('link', { name: 'Next →' }).click();
    await page.getByText('Page 2 of 2').waitFor();
    expect(new URL(page.url()).searchParams.get('status')).toBe('pending');
    // 25 bulk orders and A-1 are pending: the 26th, the oldest, is alone on page 2.
    expect(await page.locator('#payments-table tbody tr').allTextContents()).toEqual([expect.stringContaining('A-1')]);
    const bad = await page.goto(`${base}/payments?status=bogus`);
    expect(bad?.status()).toBe(400);
    expect(await page.content()).toContain('status: must be one of pending, seen');
  });
});

async function freshKey(): Promise<[string, string]> {
  const made = await cli(['admin', 'keys', 'create', '--account', String(userA), '--data-dir', t.dataDir, '--json']);
  const k = JSON.parse(made.stdout) as { api_key: string; secret: string };
  return [k.api_key, k.secret];
}

describe('CSRF', () => {
  let evil: Server;
  let evilUrl = '';

  beforeAll(async () => {
    // Another site (another origin: localhost vs 127.0.0.1, another port) that posts a form to the cabinet.
    evil = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<form id="f" method="post" action="${base}/keys"><input name="name" value="evil"></form><script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    evilUrl = `http://localhost:${(evil.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((r) => evil.close(() => r())));

  it('a cross-site POST without the token is 403 and changes nothing', async () => {
    const before = await keyCount();
    const p = await ctx.newPage();
    openPages.push(p);
    const answered = p.waitForResponse((r) => r.url() === `${base}/keys` && r.request().method() === 'POST');
    await p.goto(evilUrl);
    expect((await answered).status()).toBe(403);
    expect(await keyCount()).toBe(before);
  });

  it('a same-site POST without the token is 403 too', async () => {
    await page.goto(`${base}/keys`);
    const before = await keyCount();
    const status = await page.evaluate(async () => (await fetch('/keys', {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=no-token',
    })).status);
    expect(status).toBe(403);
    expect(await keyCount()).toBe(before);
  });

  async function keyCount() {
    const row = await t.store.db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', userA).executeTakeFirst();
    return Number(row?.n ?? 0);
  }
});

describe('accessibility', () => {
  it('every page passes axe-core\'s WCAG 2.1 A/AA rules, in light and dark, on a desktop and a phone', async () => {
    const found: string[] = [];
    for (const [colorScheme, viewport] of [['light', { width: 1280, height: 900 }], ['dark', { width: 390, height: 844 }]] as const) {
      const c = await browser.context({ colorScheme, viewport, bypassCSP: true });
      const p = await c.newPage();
      openPages.push(p);
      await p.goto(`${base}/login`);
      for (const v of await axeViolations(p)) found.push(`${colorScheme} /login: ${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      await signIn(p, 'merchant@example.com', PASSWORD);
      await p.getByRole('heading', { name: 'Overview' }).waitFor();
      const endpointId = (await t.store.db.selectFrom('endpoints').select('id').where('account_id', '=', userA).executeTakeFirst())?.id
        ?? (await signedCall(base, ...(await freshKey()), 'POST', '/v1/endpoints', JSON.stringify({ name: 'a11y', network_environment_id: 1 }))).body.endpoint.id;
      const paymentId = (await t.store.db.selectFrom('payment_orders').select('payment_id').where('account_id', '=', userA).where('order_id', '=', 'A-1042').executeTakeFirst())?.payment_id;
      const paymentPages = ['/payments', '/payments/settings', ...(paymentId ? [`/payments/${paymentId}`] : [])];
      for (const path of ['/', '/keys', '/endpoints', `/endpoints/${endpointId}`, '/watch', '/webhook', '/account', ...paymentPages]) {
        await p.goto(`${base}${path}`);
        // RPCCTL_SCREENSHOTS=1: every page in both schemes, to look at.
        if (process.env.RPCCTL_SCREENSHOTS) await p.screenshot({ path: join(TEST_OUTPUT, 'cabinet', `page-${colorScheme}${path.replace(/[^a-z0-9]+/gi, '-')}.png`), fullPage: true });
        for (const v of await axeViolations(p)) found.push(`${colorScheme} ${path}: ${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      }
      await c.close();
    }
    expect(found).toEqual([]);
  }, 120_000);
});

describe('sign-out and expiry', () => {
  it('sign-out ends the session: the old cookie no longer works', async () => {
    await page.goto(`${base}/`);
    const cookie = (await ctx.cookies()).find((c) => c.name === 'rpcctl_session')!;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe('/login');
    // Replaying the old cookie from elsewhere gets the sign-in page, not the account.
    const replay = await request(`${base}/`, { headers: { cookie: `rpcctl_session=${cookie.value}` } });
    expect(replay.statusCode).toBe(303);
    expect(replay.headers.location).toMatch(/^\/login/);
    await replay.body.dump();
  });

  it('an idle session expires', async () => {
    await signIn(page, 'merchant@example.com', PASSWORD);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await t.store.db.updateTable('cabinet_sessions').set({ last_seen_at: Date.now() - 3 * 3600_000 }).where('account_id', '=', userA).execute();
    await page.goto(`${base}/keys`);
    await page.getByText('Your session has ended. Sign in again.').waitFor();
  });
});

describe('account settings', () => {
  it('signs out the other sessions, then changes the password (which ends this one too)', async () => {
    await signIn(page, 'merchant@example.com', PASSWORD);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const elsewhere = await (await browser.context()).newPage();
    openPages.push(elsewhere);
    await signIn(elsewhere, 'merchant@example.com', PASSWORD);
    await elsewhere.getByRole('heading', { name: 'Overview' }).waitFor();

    await page.getByRole('link', { name: 'merchant@example.com' }).click();
    await page.getByRole('heading', { name: 'Account', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Sign out everywhere else' }).click();
    await page.getByText(/Signed out \d+ other sessions?\./).waitFor();
    await elsewhere.reload();
    await expect.poll(() => new URL(elsewhere.url()).pathname).toBe('/login');

    await page.getByLabel('Current password').fill('not the password');
    await page.locator('input[name=password]').fill('a brand new password');
    await page.getByLabel('New password again').fill('a brand new password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('The current password is wrong.').waitFor();

    await page.getByLabel('Current password').fill(PASSWORD);
    await page.locator('input[name=password]').fill('a brand new password');
    await page.getByLabel('New password again').fill('a brand new password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Password changed. Sign in with the new one.').waitFor();
    await signIn(page, 'merchant@example.com', PASSWORD);
    await page.getByText('Wrong e-mail or password.').waitFor();
    await signIn(page, 'merchant@example.com', 'a brand new password');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  });
});

describe('the pages themselves', () => {
  it('caused no script errors and no CSP violations in the whole run', () => {
    expect(pageProblems).toEqual([]);
  });
});

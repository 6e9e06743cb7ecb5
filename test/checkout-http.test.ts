import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transition } from '../src/payments/orders.js';
import { startFakeEvmChain, type FakeEvmChain } from './helpers/fake-evm.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

// The checkout page over plain HTTP: what it shows, what it never shows, its limit and headers.
// The browser suite (checkout-browser.test.ts) has the page live on anvil.

const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
const TOKEN = '0x1111111111111111111111111111111111111111';
const RPM = 6;
const json = (o: unknown) => JSON.stringify(o);
let chain: FakeEvmChain;
let t: TestService;
let m: Merchant;
/** Each test's page loads come from an address of its own (the listener trusts loopback's X-Forwarded-For). */
let nextIp = 1;
const freshIp = () => `198.51.100.${nextIp++}`;

beforeAll(async () => {
  chain = await startFakeEvmChain();
  chain.mine();
  t = await startTestService({
    networks: [{
      slug: 'fake', name: 'Fake', family: 'evm', environments: [{ slug: 'local', upstreams: [chain.url] }],
      tokens: [{ symbol: 'USDX', address: TOKEN, decimals: 6 }],
    }, {
      // A node that never answers: no chain id to put in a URI.
      slug: 'dead', name: 'Dead', family: 'evm', environments: [{ slug: 'mainnet', upstreams: ['http://127.0.0.1:9'] }],
    }],
    api: { trusted_proxies: ['127.0.0.1'] },
    payments: { checkout: { rpm_per_ip: RPM } },
  });
  m = await t.merchant({ plan: 'pro' });
  expect((await m.call('PUT', '/v1/payments/settings', json({ xpubs: { evm: XPUB }, display_name: 'Corner Shop' }))).status).toBe(200);
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await chain?.close();
});

async function create(body: Record<string, unknown>) {
  const r = await m.call('POST', '/v1/payments', json({ network_slug: 'fake', ...body }));
  expect(r.status, json(r.body)).toBe(200);
  return r.body.payment as Record<string, any>;
}

async function get(path: string, ip = freshIp()) {
  const r = await request(`${t.baseUrl}${path}`, { headers: { 'x-forwarded-for': ip } });
  return { status: r.statusCode, headers: r.headers, text: await r.body.text() };
}

describe('checkout page over HTTP', () => {
  it('every payment object has checkout_url on the API listener; the id carries 96 random bits', async () => {
    const p = await create({ order_id: 'url-1', amount: '1.25' });
    expect(p.checkout_url).toBe(`${t.baseUrl}/pay/${p.payment_id}`);
    // pay_ + 16 base64url characters: 12 random bytes.
    expect(p.payment_id).toMatch(/^pay_[A-Za-z0-9_-]{16}$/);
    const listed = (await m.call('GET', '/v1/payments?order_id=url-1')).body.payments[0];
    expect(listed.checkout_url).toBe(p.checkout_url);
  });

  it('behind a proxy: checkout_url is under api.public_url; a public_url with a path is refused at start', async () => {
    const proxied = await startTestService({
      networks: [{ slug: 'fake', name: 'Fake', family: 'evm', environments: [{ slug: 'local', upstreams: [chain.url] }] }],
      api: { public_url: 'https://pay.example.com/' },
    });
    try {
      const shop = await proxied.merchant({ plan: 'pro' });
      const r = await shop.call('POST', '/v1/payments', json({ network_slug: 'fake', order_id: 'proxied-1', amount: '1', address: '0x52908400098527886E0F7030069857D2E4169EE7' }));
      expect(r.status, json(r.body)).toBe(200);
      expect(r.body.payment.checkout_url).toBe(`https://pay.example.com/pay/${r.body.payment.payment_id}`);
    } finally {
      await proxied.stop();
    }
    await expect(startTestService({ api: { public_url: 'https://pay.example.com/shop' } })).rejects.toThrow(/api\.public_url: must be http\(s\):\/\/host\[:port\] with no path/);
  });

  it('serves the page without sign-in: merchant, amount, network, address, EIP-681 QR; strict CSP, no inline script', async () => {
    const p = await create({ order_id: 'page-1', amount: '0.5' });
    const r = await get(`/pay/${p.payment_id}`);
    expect(r.status).toBe(200);
    expect(r.headers['content-security-policy']).toMatch(/script-src 'self';/);
    expect(r.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    expect(r.headers['x-frame-options']).toBe('DENY');
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.text).toContain('Corner Shop');
    expect(r.text).toContain('0.5 ETH');
    expect(r.text).toContain(p.address);
    expect(r.text).toContain('Fake (local)');
    expect(r.text).toContain(`data-uri="ethereum:${p.address}@123456?value=500000000000000000"`);
    expect(r.text).toMatch(/<svg role="img"[^>]*viewBox/);
    // Every script is a file from 'self'; the page refreshes itself without JavaScript.
    expect([...r.text.matchAll(/<script\b[^>]*>/g)].map((s) => s[0])).toEqual([expect.stringMatching(/^<script src="\/static\/checkout\.[0-9a-f]+\.js" defer>$/)]);
    expect(r.text).toContain('<noscript><meta http-equiv="refresh" content="15"></noscript>');
    const js = await get(r.text.match(/src="(\/static\/checkout\.[0-9a-f]+\.js)"/)![1]!);
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toMatch(/javascript/);
  });

  it('an ERC-20 order: the QR is an EIP-681 transfer call on the token', async () => {
    const p = await create({ order_id: 'token-1', amount: '12.5', asset: 'USDX' });
    const r = await get(`/pay/${p.payment_id}`);
    expect(r.text).toContain(`data-uri="ethereum:${TOKEN}@123456/transfer?address=${p.address}&amp;uint256=12500000"`);
    expect(r.text).toContain('12.5 USDX');
  });

  it('without the node\'s chain id the QR holds the plain address (never a URI without the chain); names are escaped', async () => {
    const p = (await m.call('POST', '/v1/payments', json({ network_slug: 'dead', order_id: 'dead-1', amount: '1' }))).body.payment;
    const r = await get(`/pay/${p.payment_id}`);
    expect(r.status).toBe(200);
    expect(r.text).toContain(`data-uri="${p.address}"`);
    expect(r.text).toContain('QR code of the address (enter 1 ETH in your wallet)');
    expect(r.text).toContain('<dd id="network">Dead</dd>');
    await m.call('PUT', '/v1/payments/settings', json({ display_name: '<script>alert(1)</script> & Co' }));
    const named = await get(`/pay/${p.payment_id}`);
    expect(named.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co');
    expect(named.text).not.toContain('<script>alert');
    await m.call('PUT', '/v1/payments/settings', json({ display_name: 'Corner Shop' }));
  });

  it('the status poll: the status and amounts, nothing of the account, the reason or the screening', async () => {
    const p = await create({ order_id: 'status-1', amount: '2' });
    const r = await get(`/pay/${p.payment_id}/status`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/application\/json/);
    const body = JSON.parse(r.text);
    expect(body).toEqual({ ok: true, status: 'pending', amount: '2', amount_received: '0', amount_due: '2', expires_at: p.expires_at, version: expect.any(String) });
    expect((await get('/pay/pay_AAAAAAAAAAAAAAAAAAAAAA/status')).status).toBe(404);
  });

  it('an unknown or malformed id is a 404 page that names nothing', async () => {
    for (const id of ['pay_AAAAAAAAAAAAAAAA', 'pay_x', 'nope', 'pay_AAAAAAAAAAAAAAAA%27%3E']) {
      const r = await get(`/pay/${id}`);
      expect(r.status, id).toBe(404);
      expect(r.text).toContain('Payment not found');
      expect(r.headers['content-security-policy']).toMatch(/default-src 'self'/);
    }
  });

  it('failed with AML details: a neutral message, never the reason, the screening, the account or other orders', async () => {
    const other = await create({ order_id: 'other-secret-order', amount: '3' });
    const p = await create({ order_id: 'failed-1', amount: '1' });
    const row = (await t.store.db.selectFrom('payment_orders').selectAll().where('payment_id', '=', p.payment_id).executeTakeFirstOrThrow());
    await t.store.db.transaction().execute((trx) => transition(trx, { store: t.store, config: t.service.config }, row, {
      status: 'failed', txHash: '0xfeedface', reason: 'aml_rejected', close: true,
      aml: { provider: 'chainalysis', score: 97, risk_level: 'severe', details: [{ category: 'sanctions', address: '0xbad0000000000000000000000000000000000bad', source: 'OFAC SDN' }], report_url: 'https://reports.example/r/1', checked_at: new Date().toISOString() },
    }));
    const r = await get(`/pay/${p.payment_id}`);
    expect(r.status).toBe(200);
    expect(r.text).toContain('This payment could not be completed');
    for (const secret of ['aml', 'AML', 'sanction', 'OFAC', 'chainalysis', 'severe', '0xbad0', 'reports.example', 'rejected', '0xfeedface',
      other.order_id, other.payment_id, other.address, m.apiKey, XPUB, 'canceled', 'account']) {
      expect(r.text, secret).not.toContain(secret);
    }
    // And no QR or address to pay to any more.
    expect(r.text).not.toContain(p.address);
    const s = JSON.parse((await get(`/pay/${p.payment_id}/status`)).text);
    expect(Object.keys(s).sort()).toEqual(['amount', 'amount_due', 'amount_received', 'expires_at', 'ok', 'status', 'version']);
    expect(s.status).toBe('failed');
  });

  it('the page and the poll count against their own per-client limit: 429 with retry-after, other clients unaffected', async () => {
    const p = await create({ order_id: 'limit-1', amount: '1' });
    const ip = freshIp();
    for (let i = 0; i < RPM; i++) {
      const r = await get(i % 2 ? `/pay/${p.payment_id}` : `/pay/${p.payment_id}/status`, ip);
      expect(r.status, `request ${i + 1}`).toBe(200);
    }
    const over = await get(`/pay/${p.payment_id}/status`, ip);
    expect(over.status).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(over.text)).toEqual({ ok: false, error: 'Rate limit exceeded' });
    const page = await get(`/pay/${p.payment_id}`, ip);
    expect(page.status).toBe(429);
    expect(page.text).toContain('Too many requests');
    expect((await get(`/pay/${p.payment_id}/status`)).status).toBe(200);
  });

  it('settings: display_name and redirect_url through the API, each refused with a 400 naming it', async () => {
    const fresh = await t.merchant({ plan: 'pro' });
    const initial = (await fresh.call('GET', '/v1/payments/settings')).body;
    expect(initial).toMatchObject({ display_name: null, redirect_url: null });
    const put = await fresh.call('PUT', '/v1/payments/settings', json({ display_name: '  Café Ünïcode ', redirect_url: 'https://shop.example/thanks?from=pay' }));
    expect(put.status, json(put.body)).toBe(200);
    expect(put.body).toMatchObject({ display_name: 'Café Ünïcode', redirect_url: 'https://shop.example/thanks?from=pay' });
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ redirect_url: 'http://shop.example/thanks' }, /^redirect_url: must be an https URL \(http is allowed only under rpcctl serve --dev\); got http$/],
      [{ redirect_url: 'javascript:alert(1)' }, /^redirect_url: must be an https URL/],
      [{ redirect_url: 'shop.example/thanks' }, /^redirect_url: must be an absolute URL/],
      [{ redirect_url: 'https://user:pw@shop.example/' }, /^redirect_url: must not carry a user name or password/],
      [{ redirect_url: 5 }, /redirect_url: must be a string/],
      [{ display_name: 'x'.repeat(81) }, /display_name: must be at most 80 characters/],
      [{ display_name: 'two\nlines' }, /display_name: must not contain control characters/],
    ];
    for (const [body, msg] of bad) {
      const r = await fresh.call('PUT', '/v1/payments/settings', json(body));
      expect(r.status, json(body)).toBe(400);
      expect(r.body.error, json(body)).toMatch(msg);
    }
    // Unchanged by the refusals; "" removes both.
    expect((await fresh.call('GET', '/v1/payments/settings')).body).toMatchObject({ display_name: 'Café Ünïcode', redirect_url: 'https://shop.example/thanks?from=pay' });
    const cleared = await fresh.call('PUT', '/v1/payments/settings', json({ display_name: '', redirect_url: '' }));
    expect(cleared.body).toMatchObject({ display_name: null, redirect_url: null });
  });

  it('the paid page links back to redirect_url with the order id added to its query', async () => {
    await m.call('PUT', '/v1/payments/settings', json({ redirect_url: 'https://shop.example/thanks?from=pay' }));
    const p = await create({ order_id: 'paid&done', amount: '1' });
    const row = (await t.store.db.selectFrom('payment_orders').selectAll().where('payment_id', '=', p.payment_id).executeTakeFirstOrThrow());
    await t.store.db.transaction().execute((trx) => transition(trx, { store: t.store, config: t.service.config }, row, {
      status: 'paid', txHash: '0x01', receivedRaw: 10n ** 18n, close: true,
    }));
    const r = await get(`/pay/${p.payment_id}`);
    expect(r.text).toContain('href="https://shop.example/thanks?from=pay&amp;order_id=paid%26done"');
    expect(r.text).toContain('Return to Corner Shop');
    // A finished order's page does not refresh itself.
    expect(r.text).not.toContain('http-equiv="refresh"');
    await m.call('PUT', '/v1/payments/settings', json({ redirect_url: '' }));
  });
});

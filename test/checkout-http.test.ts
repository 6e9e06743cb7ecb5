import { connect } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transition } from '../src/payments/transition.js';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';
import { parseURL, type TransferRequestURL } from '@solana/pay';

const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const SOLANA_WALLET = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

// The checkout page over plain HTTP: what it shows, what it never shows, its limit and headers.
// The browser suite (checkout-browser.test.ts) has the page live on anvil.

const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
const TOKEN = '0x1111111111111111111111111111111111111111';
const RPM = 6;
const SENDER = '0x2222222222222222222222222222222222222222';
const json = (o: unknown) => JSON.stringify(o);
let chain: FakeEvm;
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
    }, {
      // The Solana Pay URI needs nothing of the node.
      slug: 'solana', name: 'Solana', family: 'solana', environments: [{ slug: 'mainnet', upstreams: ['http://127.0.0.1:9'] }],
      tokens: [{ symbol: 'USDC', address: USDC_MINT, decimals: 6 }],
    }],
    api: { trusted_proxies: ['127.0.0.1'] },
    payments: { checkout: { rpm_per_ip: RPM }, rates: { provider: 'static', static: { 'ETH/EUR': '3000' } } },
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

async function get(path: string, ip = freshIp(), headers: Record<string, string> = {}) {
  const r = await request(`${t.baseUrl}${path}`, { headers: { 'x-forwarded-for': ip, ...headers } });
  return { status: r.statusCode, headers: r.headers, text: await r.body.text() };
}

describe('checkout page over HTTP', () => {
  it('a Solana order: the QR and "Open in wallet" carry the Solana Pay transfer request with the order\'s reference', async () => {
    expect((await m.call('PUT', '/v1/payments/settings', json({ wallets: { solana: SOLANA_WALLET } }))).status).toBe(200);
    const p = (await m.call('POST', '/v1/payments', json({ network_slug: 'solana', order_id: 'sol-http-1', asset: USDC_MINT, amount: '12.5' }))).body.payment;
    expect([p.address, typeof p.reference]).toEqual([SOLANA_WALLET, 'string']);
    const r = await get(`/pay/${p.payment_id}`);
    expect(r.status).toBe(200);
    const uri = `solana:${SOLANA_WALLET}?amount=12.5&spl-token=${USDC_MINT}&reference=${p.reference}&label=Corner%20Shop&message=Order%20sol-http-1`;
    expect(r.text).toContain(`data-uri="${uri.replace(/&/g, '&amp;')}"`);
    expect(r.text).toContain(`id="open-wallet" href="${uri.replace(/&/g, '&amp;')}"`);
    const fields = parseURL(uri) as TransferRequestURL;
    expect([fields.recipient, fields.amount, fields.splToken, fields.reference, fields.label, fields.message])
      .toEqual([SOLANA_WALLET, 12.5, USDC_MINT, [p.reference], 'Corner Shop', 'Order sol-http-1']);
    const sol = (await m.call('POST', '/v1/payments', json({ network_slug: 'solana', order_id: 'sol-http-2', amount: '0.5' }))).body.payment;
    expect((await get(`/pay/${sol.payment_id}`)).text).toContain(`data-uri="solana:${SOLANA_WALLET}?amount=0.5&amp;reference=${sol.reference}&amp;label=Corner%20Shop&amp;message=Order%20sol-http-2"`);
  });

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

  it('a fiat-priced order (19.99 EUR): the price beside an amount rounded up to 6 decimals; QR and wallet link ask for that amount', async () => {
    const p = await create({ order_id: 'fiat-1', price_amount: '19.99', price_currency: 'EUR' });
    // The order keeps the exact amount the rate gave.
    expect(p.amount).toBe('0.006663333333333334');
    const r = await get(`/pay/${p.payment_id}`);
    expect(r.status).toBe(200);
    expect(r.text).toContain('<span class="figure" id="heading-amount">0.006664</span> ETH</h1>');
    expect(r.text).toContain('<p class="price" id="price">Price: €19.99</p>');
    expect(r.text).toContain('<code id="amount" class="copy-value">0.006664</code>');
    expect(r.text).not.toContain('0.006663333333333334');
    const uri = `ethereum:${p.address}@123456?value=6664000000000000`;
    expect(r.text).toContain(`data-uri="${uri}"`);
    expect(r.text).toContain(`<a class="button" id="open-wallet" href="${uri}">Open in wallet</a>`);
    expect(r.text).toContain('<title>Corner Shop: pay 0.006664 ETH</title>');
    // An order priced in the asset is shown to the last digit the merchant set.
    const exact = await create({ order_id: 'exact-1', amount: '0.012345678901234567' });
    expect((await get(`/pay/${exact.payment_id}`)).text).toContain('<span class="figure" id="heading-amount">0.012345678901234567</span> ETH</h1>');
  });

  it('an ERC-20 order links the EIP-681 transfer its QR holds; a plain-address QR gets no wallet link', async () => {
    const p = await create({ order_id: 'token-link-1', amount: '12.5', asset: 'USDX' });
    const r = await get(`/pay/${p.payment_id}`);
    const uri = `ethereum:${TOKEN}@123456/transfer?address=${p.address}&amp;uint256=12500000`;
    expect(r.text).toContain(`data-uri="${uri}"`);
    expect(r.text).toContain(`id="open-wallet" href="${uri}"`);
    const dead = (await m.call('POST', '/v1/payments', json({ network_slug: 'dead', order_id: 'dead-link-1', amount: '1' }))).body.payment;
    expect((await get(`/pay/${dead.payment_id}`)).text).not.toContain('open-wallet');
  });

  it('the language from Accept-Language or ?lang=, with a switch of links to every language', async () => {
    const p = await create({ order_id: 'lang-1', amount: '0.5' });
    const de = await get(`/pay/${p.payment_id}`, freshIp(), { 'accept-language': 'de-CH,de;q=0.9,en;q=0.5' });
    expect(de.text).toContain('<html lang="de">');
    expect(de.headers['content-language']).toBe('de');
    expect(de.headers.vary).toMatch(/accept-language/i);
    expect(de.text).toContain('Zahlung ausstehend');
    expect(de.text).toContain('<title>Corner Shop: 0.5 ETH bezahlen</title>');
    expect(de.text).toContain('aria-label="Adresse kopieren"');
    expect(de.text).not.toContain('Awaiting payment');
    const zh = await get(`/pay/${p.payment_id}?lang=zh`, freshIp(), { 'accept-language': 'de' });
    expect(zh.text).toContain('<html lang="zh-CN">');
    expect(zh.text).toContain('等待付款');
    // The switch: a link per language, the current one marked; the no-script refresh keeps it.
    for (const code of ['en', 'de', 'es', 'fr', 'pt', 'ru', 'zh', 'tr']) expect(zh.text).toContain(`href="/pay/${p.payment_id}?lang=${code}"`);
    expect(zh.text).toMatch(/<a href="[^"]+\?lang=zh" lang="zh-CN" hreflang="zh-CN" aria-current="true">中文<\/a>/);
    expect(zh.text).toContain(`<a href="/pay/${p.payment_id}?lang=zh">刷新状态</a>`);
    const en = await get(`/pay/${p.payment_id}`, freshIp(), { 'accept-language': 'ja, ko;q=0.5' });
    expect(en.text).toContain('Awaiting payment');
    const missing = await get('/pay/pay_AAAAAAAAAAAAAAAA', freshIp(), { 'accept-language': 'tr' });
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('Ödeme bulunamadı');
  });

  it('pending and expired pages lead back to the shop when redirect_url is set', async () => {
    await m.call('PUT', '/v1/payments/settings', json({ redirect_url: 'https://shop.example/cart' }));
    try {
      const p = await create({ order_id: 'back-1', amount: '1' });
      const pending = await get(`/pay/${p.payment_id}`);
      expect(pending.text).toContain('<a id="back" href="https://shop.example/cart?order_id=back-1" rel="noreferrer">Back to Corner Shop</a>');
      const row = (await t.store.db.selectFrom('payment_orders').selectAll().where('payment_id', '=', p.payment_id).executeTakeFirstOrThrow());
      await t.store.db.transaction().execute((trx) => transition(trx, { store: t.store, config: t.service.config }, row, { status: 'expired', txHash: null, close: true }));
      const expired = await get(`/pay/${p.payment_id}`);
      expect(expired.text).toContain('Expired');
      expect(expired.text).toContain('<a id="back" href="https://shop.example/cart?order_id=back-1" rel="noreferrer">Back to Corner Shop</a>');
      const es = await get(`/pay/${p.payment_id}?lang=es`);
      expect(es.text).toContain('>Volver a Corner Shop</a>');
    } finally {
      await m.call('PUT', '/v1/payments/settings', json({ redirect_url: '' }));
    }
  });
  it('a fiat-priced order paid as the page asks, the first part off the display step and then the shown rest: paid, not overpaid; a step over is', async () => {
    const p = await create({ order_id: 'fiat-topup-1', price_amount: '19.99', price_currency: 'EUR' });
    const exact = 6_663_333_333_333_334n;
    expect(p.amount).toBe('0.006663333333333334');
    const api = async () => (await m.call('GET', `/v1/payments/${p.payment_id}`)).body.payment as Record<string, any>;
    const until = async (status: string) => {
      const deadline = Date.now() + 20_000;
      while ((await api()).status !== status && Date.now() < deadline) {
        chain.mine();
        await new Promise((r) => setTimeout(r, 50));
      }
      expect((await api()).status).toBe(status);
    };
    // A wallet or an exchange that takes its fee off sends an amount off the display step.
    const first = 3_000_000_000_000_001n;
    chain.mine([{ from: SENDER, to: p.address, wei: first }]);
    await until('underpaid');
    const page = await get(`/pay/${p.payment_id}`);
    // Still due exactly 0.003663333333333333; asked for it rounded up to 6 decimals.
    expect(page.text).toContain('<code id="amount" class="copy-value">0.003664</code>');
    expect(page.text).toContain(`data-uri="ethereum:${p.address}@123456?value=3664000000000000"`);
    chain.mine([{ from: SENDER, to: p.address, wei: 3_664_000_000_000_000n }]);
    await until('paid');
    const paid = await api();
    // What the page asked for, in two parts: not an overpayment (less than one display step over the exact amount).
    expect(paid).toMatchObject({ status: 'paid', amount_received: '0.006664000000000001', overpaid: false });
    // One display step over the exact amount is.
    const q = await create({ order_id: 'fiat-over-1', price_amount: '19.99', price_currency: 'EUR' });
    chain.mine([{ from: SENDER, to: q.address, wei: exact + 1_000_000_000_000n }]);
    const deadline = Date.now() + 20_000;
    while ((await m.call('GET', `/v1/payments/${q.payment_id}`)).body.payment.status !== 'paid' && Date.now() < deadline) {
      chain.mine();
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await m.call('GET', `/v1/payments/${q.payment_id}`)).body.payment).toMatchObject({ status: 'paid', overpaid: true });
  });
  it('hostile Accept-Language and ?lang=: never a 500, no header from the request, no file read, no prototype touched', async () => {
    const p = await create({ order_id: 'hostile-lang-1', amount: '0.5' });
    const LOCALES = ['en', 'de', 'es', 'fr', 'pt', 'ru', 'tr', 'zh-CN'];
    const page = async (path: string, headers: Record<string, string> = {}) => {
      const r = await get(path, freshIp(), headers);
      expect(r.status, `${path} ${JSON.stringify(headers).slice(0, 80)}`).toBe(200);
      const locale = r.headers['content-language'] as string;
      expect(LOCALES).toContain(locale);
      expect(r.text).toContain(`<html lang="${locale}">`);
      expect(r.headers.vary).toMatch(/accept-language/i);
      return { ...r, locale };
    };
    const path = `/pay/${p.payment_id}`;
    // q-values out of range or malformed never outrank a well-formed one; q=0 is "not this one".
    expect((await page(path, { 'accept-language': 'de;q=1e999, fr;q=0.9' })).locale).toMatch(/^(de|fr)$/);
    expect((await page(path, { 'accept-language': 'de;q=0, ru;q=0.1' })).locale).toBe('ru');
    expect((await page(path, { 'accept-language': 'de;q=-1, tr;q=NaN, es;q=Infinity, *' })).locale).toMatch(/^(de|tr|es|en)$/);
    // Huge and many entries: only the head is read, and quickly.
    expect((await page(path, { 'accept-language': `${'xx-YY;q=0.5,'.repeat(1200)}de` })).locale).toBe('en');
    expect((await page(path, { 'accept-language': `fr,${'a,'.repeat(5000)}` })).locale).toBe('fr');
    expect((await page(path, { 'accept-language': ',,,;;;=,q=,;q' })).locale).toBe('en');
    for (const lang of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '../../../../etc/passwd', '..%2F..%2Fen', 'en/../de', '%00', 'de%0d%0ax-injected:%201', 'ｄｅ', 'İ', '🇩🇪', 'zh-CN', 'x'.repeat(4000)]) {
      const r = await page(`${path}?lang=${lang.includes('%') ? lang : encodeURIComponent(lang)}`, { 'accept-language': 'es' });
      expect(r.locale, lang).toBe('es');
      expect(r.headers['x-injected']).toBeUndefined();
      expect(r.text).not.toContain('root:');
      // The switch's links are ours: the request's lang never comes back in the page.
      expect([...r.text.matchAll(/\?lang=([^"&]*)/g)].map((x) => x[1]).every((c) => ['en', 'de', 'es', 'fr', 'pt', 'ru', 'zh', 'tr'].includes(c!)), lang).toBe(true);
    }
    expect((await page(`${path}?lang=DE`)).locale).toBe('de');
    expect((await page(`${path}?lang=fr&lang=de`)).locale).toBe('fr');
    expect(({} as Record<string, unknown>).language_name).toBeUndefined();
    // Raw bytes a client library would refuse to send: not-ASCII in the value, a bare CR, a folded line.
    const raw = (header: Buffer) => new Promise<string>((resolve, reject) => {
      const { port } = new URL(t.baseUrl);
      const socket = connect(Number(port), '127.0.0.1');
      let out = '';
      socket.on('data', (d) => { out += d.toString('latin1'); });
      socket.on('end', () => resolve(out));
      socket.on('error', reject);
      socket.write(Buffer.concat([Buffer.from(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${freshIp()}\r\nConnection: close\r\n`), header, Buffer.from('\r\n\r\n')]));
    });
    for (const header of [Buffer.from('Accept-Language: \xff\xfe\xe9t\xe9, de', 'latin1'), Buffer.from('Accept-Language: d\u00e9, fr;q=0.5'), Buffer.from('Accept-Language: de\rX-Injected: 1'), Buffer.from('Accept-Language: de,\r\n fr')]) {
      const answer = await raw(header);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
      expect([200, 400], header.toString('latin1')).toContain(status);
      expect(answer.toLowerCase()).not.toContain('x-injected');
    }
  });
  it('a price with more than 20 decimals is written to its last digit, never as €0.00', async () => {
    const p = await create({ order_id: 'fiat-tiny-1', price_amount: '0.000000000000000000001', price_currency: 'EUR' });
    expect(p.amount).toBe('0.000000000000000001');
    const r = await get(`/pay/${p.payment_id}`);
    expect(r.text).toContain('<p class="price" id="price">Price: €0.000000000000000000001</p>');
    // One wei owed: asked for one display step, never less than the order.
    expect(r.text).toContain(`data-uri="ethereum:${p.address}@123456?value=1000000000000"`);
  });

  it('the merchant\'s name in every language is text: placeholders in it are not filled, markup is escaped', async () => {
    await m.call('PUT', '/v1/payments/settings', json({ display_name: '{amount}{merchant}"><img src=x onerror=alert(1)>&', redirect_url: 'https://shop.example/cart' }));
    try {
      const p = await create({ order_id: 'x"><b>&?a=1#frag', price_amount: '5', price_currency: 'EUR' });
      for (const lang of ['en', 'de', 'es', 'fr', 'pt', 'ru', 'tr', 'zh']) {
        const r = await get(`/pay/${p.payment_id}?lang=${lang}`);
        expect(r.status).toBe(200);
        expect(r.text, lang).not.toContain('<img');
        expect(r.text, lang).not.toContain('<b>');
        expect(r.text, lang).toContain('{amount}{merchant}&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&amp;');
        // The way back is the configured page with the order id as one encoded parameter.
        expect(r.text, lang).toContain('href="https://shop.example/cart?order_id=x%22%3E%3Cb%3E%26%3Fa%3D1%23frag"');
      }
    } finally {
      await m.call('PUT', '/v1/payments/settings', json({ display_name: 'Corner Shop', redirect_url: '' }));
    }
  });
});

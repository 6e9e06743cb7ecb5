import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LANGUAGES } from '../src/payments/hosted-page.js';
import { startRefundLinkWorld, type RefundLinkWorld } from './helpers/refund-link.js';

// The refund link's hosted page over plain HTTP (issue 34): the address form, a wrong network's
// address refused in the page with what was typed, escaped; once; then the refund's state as the
// merchant's wallet pays it. The browser suite (refund-link-browser.test.ts) has it in Chromium.

const CUSTOMER = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const MERCHANT = 'Corner <b>Shop</b> & "Co"';
let w: RefundLinkWorld;
let nextIp = 1;
const freshIp = () => `198.51.100.${nextIp++}`;

beforeAll(async () => {
  w = await startRefundLinkWorld({ displayName: MERCHANT });
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

async function get(url: string, acceptLanguage?: string) {
  const r = await request(url, { headers: { 'x-forwarded-for': freshIp(), ...(acceptLanguage ? { 'accept-language': acceptLanguage } : {}) } });
  return { status: r.statusCode, headers: r.headers, text: await r.body.text() };
}

async function post(url: string, address: string) {
  const r = await request(url, {
    method: 'POST', body: new URLSearchParams({ address }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': freshIp() },
  });
  return { status: r.statusCode, headers: r.headers, text: await r.body.text() };
}

describe('refund link page over HTTP', () => {
  it('shows the form with the amount and network, under the strict CSP, the merchant name escaped', async () => {
    const { url } = await w.refundLink('http-look', '1', '0.25');
    const page = await get(url);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(String(page.headers['content-security-policy'])).toMatch(/default-src 'self'; script-src 'self'.*form-action 'self'/);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.text).toContain('<title>Corner &lt;b&gt;Shop&lt;/b&gt; &amp; &quot;Co&quot;: refund of 0.25 ETH</title>');
    expect(page.text).not.toContain('<b>Shop</b>');
    expect(page.text).toContain('<p class="state pending" id="state">Waiting for your address</p>');
    expect(page.text).toMatch(/<form class="refund-form" method="post" action="\/refund\/[A-Za-z0-9_-]{32}\?lang=en"/);
    expect(page.text).toContain('<label for="refund-address">Your ETH address on Anvil (local)</label>');
    expect(page.text).toContain('<span class="figure" id="heading-amount">0.25</span> ETH');
    expect(page.text).toContain('<span id="order-id">http-look</span>');
    expect(page.text).not.toMatch(/<script|style=|\son[a-z]+=/);
  });

  it('a Tron address on an EVM order is refused in the page, the typed value kept and escaped; nothing stored', async () => {
    const { url, paymentId, refundId } = await w.refundLink('http-wrong', '1', '0.5');
    const wrong = await post(url, 'TLsV52sRDL79HXGGm9yzwKibb6BeruhUzy');
    expect(wrong.status).toBe(400);
    expect(wrong.text).toMatch(/<p class="field-error" id="address-error" role="alert">Not a valid Anvil \(local\) address: /);
    expect(wrong.text).toContain('value="TLsV52sRDL79HXGGm9yzwKibb6BeruhUzy"');
    expect(wrong.text).toContain('aria-invalid="true" aria-describedby="address-error address-note"');
    const hostile = await post(url, '"><script>alert(1)</script>');
    expect(hostile.status).toBe(400);
    expect(hostile.text).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(hostile.text).not.toContain('<script>alert');
    const empty = await post(url, '   ');
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('role="alert">Enter your address</p>');
    const list = (await w.m.call('GET', `/v1/payments/${paymentId}/refunds`)).body.refunds;
    expect(list.find((x: any) => x.refund_id === refundId)).toMatchObject({ status: 'awaiting_address', address: null });
  });

  it('an address given once: 303 back to the page, then awaiting payment → sent → completed as the merchant pays; a second try 409', async () => {
    const { url, paymentId, refundId } = await w.refundLink('http-once', '1', '0.3');
    const ok = await post(url, CUSTOMER);
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe(new URL(url).pathname);
    const waiting = await get(url);
    expect(waiting.text).toContain('<p class="state pending" id="state">Awaiting payment</p>');
    expect(waiting.text).toContain(`<code id="address" class="copy-value">${CUSTOMER}</code>`);
    expect(waiting.text).toContain('<noscript><meta http-equiv="refresh" content="20"></noscript>');
    expect(waiting.text).not.toContain('<form');
    const again = await post(url, CUSTOMER);
    expect(again.status).toBe(409);
    expect(again.text).toContain('role="alert">This refund link was already used: an address was given</p>');
    await w.pay(CUSTOMER, 300_000_000_000_000_000n);
    // The scanner reads a block once the next is on it (two confirmations on this network).
    await w.anvil.test.mine({ blocks: 1 });
    await w.waitForRefund(paymentId, refundId, 'sent');
    const sent = await get(url);
    expect(sent.text).toContain('<p class="state seen" id="state">Sent: confirming</p>');
    expect(sent.text).toMatch(/<code id="tx-hash" class="copy-value">0x[0-9a-f]{64}<\/code>/);
    // anvil's `finalized` block is 64 under its head: the refund's block is final after that.
    await w.anvil.test.mine({ blocks: 70 });
    await w.waitForRefund(paymentId, refundId, 'completed');
    const done = await get(url);
    expect(done.text).toContain('<p class="state ok" id="state">Completed</p>');
    expect(done.text).toContain('0.3 ETH was refunded to your address.');
    expect(done.text).not.toContain('http-equiv="refresh"');
  });

  it('in every language of the checkout, by Accept-Language or ?lang=; a refusal and a used link said in it, the answer in the form\'s language', async () => {
    const { url } = await w.refundLink('http-langs', '1', '0.2');
    const path = new URL(url).pathname;
    for (const l of LANGUAGES) {
      const page = await get(url, `${l.locale};q=0.9, xx;q=1`);
      expect(page.headers['content-language'], l.code).toBe(l.locale);
      expect(page.headers.vary, l.code).toBe('Accept-Language');
      expect(page.text, l.code).toContain(`<html lang="${l.locale}">`);
      expect(page.text, l.code).toContain(`<p class="state pending" id="state">${l.messages.refund_waiting}</p>`);
      expect(page.text, l.code).toContain(`action="${path}?lang=${l.code}"`);
      const wrong = await post(`${url}?lang=${l.code}`, 'TLsV52sRDL79HXGGm9yzwKibb6BeruhUzy');
      expect(wrong.status, l.code).toBe(400);
      expect(wrong.headers['content-language'], l.code).toBe(l.locale);
      const refusal = l.messages.refund_error_address.replace('{network}', 'Anvil (local)');
      expect(wrong.text, l.code).toContain(`role="alert">${refusal}</p>`);
    }
    // The given address answers with the page in the form's language; a second try is told, in it, that the link was used.
    const ok = await post(`${url}?lang=tr`, CUSTOMER);
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe(`${path}?lang=tr`);
    expect((await get(`${url}?lang=tr`, 'de')).text).toContain('<p class="state pending" id="state">Ödeme bekleniyor</p>');
    const again = await post(`${url}?lang=fr`, CUSTOMER);
    expect(again.status).toBe(409);
    expect(again.text).toContain('role="alert">Ce lien de remboursement a déjà été utilisé : une adresse a été donnée</p>');
    // Neither ?lang= nor Accept-Language names one of ours: English, as the checkout.
    expect((await get(`${url}?lang=xx`, 'ja')).text).toContain('<html lang="en">');
  });

  it('an unknown or malformed token: 404 page', async () => {
    const base = new URL((await w.refundLink('http-404', '1', '0.1')).url).origin;
    for (const token of ['AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'short', '..%2F..%2Fetc']) {
      const r = await get(`${base}/refund/${token}`);
      expect(r.status, token).toBe(404);
      expect(r.text).toContain('<h1>Refund not found</h1>');
    }
    expect((await get(`${base}/refund/short`, 'ru')).text).toContain('<h1>Возврат не найден</h1>');
  });
});

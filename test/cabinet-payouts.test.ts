import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setLogin } from '../src/cabinet/index.js';
import { cabinetForms, csrfOf } from './helpers/cabinet-forms.js';
import { startRefundLinkWorld, type RefundLinkWorld } from './helpers/refund-link.js';

// The cabinet's refunds and payouts (issue 34) over HTTP as a browser without script uses them:
// the order page's refund button and history, the payouts page's CSV upload (a bad line named),
// one payout with each line's QR, cancel; every outside value escaped.

const CUSTOMER = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const PASSWORD = 'correct horse battery staple';
let w: RefundLinkWorld;
let cookie: string;
let csrf: string;
const forms = cabinetForms(() => w.t.baseUrl);

beforeAll(async () => {
  w = await startRefundLinkWorld({ displayName: 'Corner Shop' });
  await setLogin(w.t.store, w.m.userId, { email: 'owner@example.com', password: PASSWORD });
  const login = await forms.post('/login', { email: 'owner@example.com', password: PASSWORD });
  expect(login.status).toBe(303);
  cookie = String(login.headers['set-cookie']).split(';')[0]!;
  csrf = csrfOf((await forms.get('/payouts', cookie)).text);
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

describe('cabinet: refunds on the order page', () => {
  it('a refund button on a paid order; without an address the link is shown once; the history lists it', async () => {
    const { paymentId } = await w.refundLink('cab-1', '1', '0.01');
    const order = await forms.get(`/payments/${paymentId}`, cookie);
    expect(order.text).toContain(`<a class="button" id="refunds-link" href="/payments/${paymentId}/refunds">Refund…</a>`);
    const page = await forms.get(`/payments/${paymentId}/refunds`, cookie);
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="refund-button"');
    const tooMuch = await forms.post(`/payments/${paymentId}/refunds`, { _csrf: csrf, amount: '9' }, cookie);
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.text).toMatch(/role="alert">amount: 9 ETH is more than order/);
    const linked = await forms.post(`/payments/${paymentId}/refunds`, { _csrf: csrf, amount: '0.2' }, cookie);
    expect(linked.status).toBe(200);
    expect(linked.text).toMatch(new RegExp(`<p class="notice" id="refund-link">Send this link to your customer \\(shown once\\): <code>${w.t.baseUrl}/refund/[A-Za-z0-9_-]{32}</code>`));
    const given = await forms.post(`/payments/${paymentId}/refunds`, { _csrf: csrf, amount: '0.3', address: CUSTOMER }, cookie);
    expect(given.status).toBe(303);
    expect(String(given.headers.location)).toMatch(/^\/payouts\/rf_/);
    const refund = await forms.get(String(given.headers.location), cookie);
    expect(refund.text).toContain(`<code class="address">${CUSTOMER}</code>`);
    expect(refund.text).toMatch(/<svg role="img" aria-label="QR code: Line 1"/);
    const history = await forms.get(`/payments/${paymentId}/refunds`, cookie);
    // A header row and three refunds (the first made by the helper, through a link).
    expect(history.text.match(/<tr>/g)?.length).toBe(4);
    expect(history.text).toContain('refund link sent');
  });
});

describe('cabinet: the payouts page', () => {
  it('CSV upload: a bad line named, what was typed kept; a good one created with its QR codes; cancel', async () => {
    const bad = `network,address,amount,reference\nanvil,${CUSTOMER},0.1,<b>x</b>\nanvil,0x123,0.2,y\n`;
    const refused = await forms.post('/payouts', { _csrf: csrf, csv: bad }, cookie);
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/role="alert">CSV line 3: address: /);
    expect(refused.text).toContain('&lt;b&gt;x&lt;/b&gt;');
    expect(refused.text).not.toContain('<b>x</b>');
    const unparsable = await forms.post('/payouts', { _csrf: csrf, csv: 'network,address,amount\nanvil,x,abc\n' }, cookie);
    expect(unparsable.status).toBe(400);
    expect(unparsable.text).toContain('CSV: line 2: amount: must be a positive decimal');
    const ok = await forms.post('/payouts', { _csrf: csrf, csv: `network,address,amount,reference\nanvil,${CUSTOMER},0.1,a\nanvil,${CUSTOMER},0.2,b\n` }, cookie);
    expect(ok.status).toBe(303);
    const path = String(ok.headers.location);
    expect(path).toMatch(/^\/payouts\/po_/);
    const page = await forms.get(path, cookie);
    expect(page.text.match(/<svg role="img"/g)?.length).toBe(2);
    expect(page.text).toContain(`href="ethereum:${CUSTOMER}@31337?value=100000000000000000"`);
    expect(page.text).not.toContain('id="psbt-download"');
    expect((await forms.get('/payouts', cookie)).text).toContain(`href="${path}"`);
    const canceled = await forms.post(`${path}/cancel`, { _csrf: csrf }, cookie);
    expect(canceled.status).toBe(303);
    expect((await forms.get(path, cookie)).text).toMatch(/id="payout-status"><span class="badge[^"]*">canceled</);
    const psbt = await forms.get(`${path}/psbt`, cookie);
    expect(psbt.status).toBeGreaterThanOrEqual(400);
    expect(psbt.status).toBeLessThan(500);
  });
});

import type { CabinetSection, PageContext } from '../cabinet/index.js';
import { attempt, badge, csrfField, errorBox, html, pageHeader, raw, time, type Html } from '../cabinet/index.js';
import { canBuildUnsignedTransactions } from '../chains/payouts.js';
import type { Store } from '../store/index.js';
import { CsvError, parsePayoutCsv, totalsOf } from './csv.js';
import type { Payout, PayoutLineEntry, Refund } from '../wire/payouts.js';

/*
 * The payouts' cabinet section, over the Public API's own routes (ctx.api): the payouts page
 * with a batch upload (CSV, as `rpcctl payouts create --file` reads it), one payout with each
 * line's payment request as a QR code and, on UTXO networks, its PSBT to download; approve and
 * cancel for the roles the API allows; and an order's refunds (the order page links here).
 */

const enc = encodeURIComponent;
const tone = (s: string) => (s === 'completed' ? 'ok' : s === 'canceled' ? 'neutral' : s === 'sent' ? 'ok' : 'warn');
const statusBadge = (s: string) => badge(s.replace(/_/g, ' '), tone(s));
const CSV_HEADER = 'network,asset,address,amount,currency,reference';

async function renderList(ctx: PageContext, opts: { error?: string; csv?: string; status?: number } = {}) {
  const list = await ctx.api<{ payouts: Payout[] }>('GET', '/v1/payouts', { query: { per_page: '50' } });
  ctx.page({
    title: 'Payouts', nav: 'payouts', status: opts.status,
    body: html`${pageHeader('Payouts', 'Money going out: approved, paid from your own wallet, tracked to final')}
${errorBox(opts.error)}
${ctx.can('developer') ? html`<section class="card" aria-labelledby="upload-title">
  <h2 id="upload-title">New payout from CSV</h2>
  <form method="post" action="/payouts">${csrfField(ctx)}
    <label>CSV lines (header <code>${CSV_HEADER}</code>; up to 1,000 lines)
      <textarea name="csv" id="payout-csv" rows="8" spellcheck="false" required>${opts.csv ?? `${CSV_HEADER}\n`}</textarea></label>
    <p class="muted small">An empty asset is the network's coin; a currency (USD) makes the amount a fiat sum at today's rate. ${ctx.can('owner') ? '' : 'As a developer you prepare it: an owner approves it.'}</p>
    <button type="submit" class="primary">Create payout</button>
  </form>
</section>` : ''}
<section class="card" aria-labelledby="payouts-title">
  <div class="card-head"><h2 id="payouts-title">Payouts</h2></div>
  ${list.payouts.length === 0
    ? html`<p class="empty">No payouts yet.</p>`
    : html`<div class="table-wrap"><table id="payouts-table" class="cards">
  <thead><tr><th scope="col">Payout</th><th scope="col">Status</th><th scope="col">Approval</th><th scope="col" class="num">Lines</th><th scope="col">Created</th></tr></thead>
  <tbody>${list.payouts.map((p) => html`<tr data-payout="${p.payout_id}">
    <td data-label="Payout"><a href="/payouts/${enc(p.payout_id)}"><code>${p.payout_id}</code></a></td>
    <td data-label="Status">${statusBadge(p.status)}</td>
    <td data-label="Approval">${p.approval.replace(/_/g, ' ')}</td>
    <td data-label="Lines" class="num">${String(p.line_count)}</td>
    <td data-label="Created">${time(p.created_at)}</td>
  </tr>`)}</tbody></table></div>`}
</section>`,
  });
}

function lineCard(l: PayoutLineEntry | Refund, label: string): Html {
  // The SVG is the qrcode library's output for the URI the service built: markup we made.
  const qr = l.payment_request?.qr_svg ? raw(l.payment_request.qr_svg.replace('<svg ', `<svg role="img" aria-label="QR code: ${label}" focusable="false" `)) : '';
  return html`<section class="card payout-line" aria-label="${label}">
  <h3>${label} ${statusBadge(l.status)}</h3>
  <dl class="kv">
    <dt>Amount</dt><dd><strong>${l.amount}</strong> ${l.asset_symbol}${l.price_amount ? html` <span class="muted">(${l.price_amount} ${l.price_currency} at ${l.rate})</span>` : ''}</dd>
    <dt>Network</dt><dd>${l.network}</dd>
    <dt>Address</dt><dd>${l.address ? html`<code class="address">${l.address}</code>` : html`<span class="muted">waiting for the customer</span>`}</dd>
    ${l.reference ? html`<dt>Reference</dt><dd>${l.reference}</dd>` : ''}
    ${l.tx_hash ? html`<dt>Transaction</dt><dd><code class="hash">${l.tx_hash}</code></dd>` : ''}
    ${l.payment_request ? html`<dt>Pay with</dt><dd><a href="${l.payment_request.uri}" class="payment-uri"><code class="small">${l.payment_request.uri}</code></a></dd>` : ''}
  </dl>
  ${qr ? html`<figure class="qr-small">${qr}</figure>` : ''}
</section>`;
}

/** Whether rpcctl builds the network's unsigned transaction (a PSBT), so the page offers its download. */
function buildsPsbt(store: Store, network: string): boolean {
  const family = store.catalog.environmentBySlug(network)?.network.family;
  return family !== undefined && canBuildUnsignedTransactions(family);
}

function actions(ctx: PageContext, store: Store, p: Payout): Html {
  const id = enc(p.payout_id);
  const open = p.lines.some((l) => ['awaiting_approval', 'awaiting_address', 'awaiting_payment'].includes(l.status));
  const psbt = p.approval !== 'awaiting' && p.lines.some((l) => l.status === 'awaiting_payment' && buildsPsbt(store, l.network));
  return html`<div class="actions">
  ${p.approval === 'awaiting' && ctx.can('owner') ? html`<form method="post" action="/payouts/${id}/approve">${csrfField(ctx)}<button type="submit" class="primary" id="approve">Approve</button></form>` : ''}
  ${psbt ? html`<a class="button" id="psbt-download" href="/payouts/${id}/psbt" download="${p.payout_id}.psbt">Download PSBT</a>` : ''}
  ${open && (ctx.can('owner') || (ctx.can('developer') && p.approval === 'awaiting')) ? html`<form method="post" action="/payouts/${id}/cancel">${csrfField(ctx)}<button type="submit" class="danger" id="cancel">Cancel unpaid lines</button></form>` : ''}
</div>`;
}

async function renderOne(ctx: PageContext, store: Store, opts: { error?: string; status?: number } = {}) {
  const { payout: p } = await ctx.api<{ payout: Payout }>('GET', `/v1/payouts/${enc(ctx.params.payout_id!)}`);
  ctx.page({
    title: `Payout ${p.payout_id}`, nav: 'payouts', status: opts.status,
    body: html`<nav class="crumbs" aria-label="Breadcrumb"><a href="/payouts">Payouts</a> / <span aria-current="page">${p.payout_id}</span></nav>
${pageHeader(`Payout ${p.payout_id}`, html`<span id="payout-status">${statusBadge(p.status)}</span> · ${p.approval.replace(/_/g, ' ')}${p.approved_by ? html` by ${p.approved_by}` : ''} · created by ${p.created_by} ${time(p.created_at)}`)}
${errorBox(opts.error)}
${p.approval === 'awaiting' ? html`<p class="notice">Waiting for ${ctx.can('owner') ? 'an owner other than its maker' : 'an owner'} to approve: no payment request is shown before.</p>` : ''}
${actions(ctx, store, p)}
${p.lines.length === 0 ? '' : html`<div class="grid two">${p.lines.map((l) => lineCard(l, `Line ${l.line}`))}</div>`}
${p.line_count > p.lines.length ? html`<p class="muted">${String(p.line_count)} lines.</p>` : ''}`,
  });
}

async function renderRefunds(ctx: PageContext, opts: { error?: string; status?: number; link?: string } = {}) {
  const pid = ctx.params.payment_id!;
  const [{ payment }, { refunds }] = await Promise.all([
    ctx.api<{ payment: { payment_id: string; order_id: string; amount_received: string; asset_symbol: string; status: string; price_currency: string | null } }>('GET', `/v1/payments/${enc(pid)}`),
    ctx.api<{ refunds: Refund[] }>('GET', `/v1/payments/${enc(pid)}/refunds`),
  ]);
  ctx.page({
    title: `Refunds of order ${payment.order_id}`, nav: 'payments', status: opts.status,
    body: html`<nav class="crumbs" aria-label="Breadcrumb"><a href="/payments">Payments</a> / <a href="/payments/${enc(pid)}">${payment.order_id}</a> / <span aria-current="page">Refunds</span></nav>
${pageHeader(`Refunds of order ${payment.order_id}`, html`received ${payment.amount_received} ${payment.asset_symbol}`)}
${errorBox(opts.error)}
${opts.link ? html`<p class="notice" id="refund-link">Send this link to your customer (shown once): <code>${opts.link}</code></p>` : ''}
${ctx.can('developer') ? html`<section class="card" aria-labelledby="refund-title"><h2 id="refund-title">Refund</h2>
  <form method="post" action="/payments/${enc(pid)}/refunds">${csrfField(ctx)}
    <label>Amount (full, overpaid, or a number in ${payment.asset_symbol}) <input name="amount" value="full" required spellcheck="false"></label>
    <label>Customer's address (empty: a refund link for the customer) <input name="address" spellcheck="false" autocomplete="off"></label>
    <button type="submit" class="primary" id="refund-button">Refund</button>
  </form></section>` : ''}
<section class="card" aria-labelledby="history-title"><h2 id="history-title">Refund history</h2>
${refunds.length === 0 ? html`<p class="empty">No refunds yet.</p>` : html`<div class="table-wrap"><table id="refunds-table" class="cards">
  <thead><tr><th scope="col">Refund</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col">Address</th><th scope="col">Created</th></tr></thead>
  <tbody>${refunds.map((r) => html`<tr>
    <td data-label="Refund"><a href="/payouts/${enc(r.refund_id)}"><code>${r.refund_id}</code></a></td>
    <td data-label="Status">${statusBadge(r.status)}</td>
    <td data-label="Amount" class="num">${r.amount} ${r.asset_symbol}</td>
    <td data-label="Address">${r.address ? html`<code class="address">${r.address}</code>` : html`<span class="muted">${r.refund_link?.claimed === false ? 'refund link sent' : '—'}</span>`}</td>
    <td data-label="Created">${time(r.created_at)}</td>
  </tr>`)}</tbody></table></div>`}
</section>`,
  });
}

/** A refund or payout id shown as a payout page: `rf_` ids open the same page. */
async function act(ctx: PageContext, store: Store, what: 'approve' | 'cancel') {
  const id = ctx.params.payout_id!;
  const result = await attempt(() => ctx.api<{ payout: Payout }>('POST', `/v1/payouts/${enc(id)}/${what}`));
  if (!result.ok) return renderOne(ctx, store, { error: result.error, status: result.status });
  ctx.redirect(`/payouts/${enc(id)}`, what === 'approve' ? `${id} approved: its payment requests are shown.` : `${id}: unpaid lines canceled.`);
}

export function payoutsSection(store: Store): Omit<CabinetSection, 'open'> {
  return {
    nav: { id: 'payouts', href: '/payouts', label: 'Payouts' },
    routes: [
      { method: 'GET', path: '/payouts', handler: (ctx) => renderList(ctx) },
      {
        method: 'POST', path: '/payouts', audit: 'api',
        async handler(ctx) {
          const csv = ctx.form.get('csv') ?? '';
          let lines;
          try {
            lines = parsePayoutCsv(csv).lines;
          } catch (err) {
            if (err instanceof CsvError) return renderList(ctx, { error: `CSV: ${err.message}`, csv, status: 400 });
            throw err;
          }
          const result = await attempt(() => ctx.api<{ payout: Payout }>('POST', '/v1/payouts', { body: { lines } }));
          if (!result.ok) return renderList(ctx, { error: result.error.replace(/^lines\[(\d+)\]\./, (_m, i: string) => `CSV line ${Number(i) + 2}: `), csv, status: result.status });
          const sums = totalsOf(lines).map((t) => `${t.total} ${t.unit} on ${t.network}`).join(', ');
          ctx.redirect(`/payouts/${enc(result.value.payout.payout_id)}`, `Payout of ${lines.length} line${lines.length === 1 ? '' : 's'} created: ${sums}.`);
        },
      },
      { method: 'GET', path: '/payouts/{payout_id}', handler: (ctx) => renderOne(ctx, store) },
      { method: 'POST', path: '/payouts/{payout_id}/approve', audit: 'api', role: 'owner', handler: (ctx) => act(ctx, store, 'approve') },
      { method: 'POST', path: '/payouts/{payout_id}/cancel', audit: 'api', handler: (ctx) => act(ctx, store, 'cancel') },
      {
        method: 'GET', path: '/payouts/{payout_id}/psbt',
        async handler(ctx) {
          const id = ctx.params.payout_id!;
          const result = await attempt(() => ctx.api<{ psbt: string }>('GET', `/v1/payouts/${enc(id)}/psbt`));
          if (!result.ok) return renderOne(ctx, store, { error: result.error, status: result.status });
          // Binary BIP174, as wallets (Sparrow, Electrum, a hardware wallet's app) open a .psbt file.
          const bytes = Buffer.from(result.value.psbt, 'base64');
          ctx.res.writeHead(200, {
            'content-type': 'application/octet-stream', 'content-length': bytes.length, 'cache-control': 'no-store',
            'content-disposition': `attachment; filename="${id.replace(/[^A-Za-z0-9_-]/g, '')}.psbt"`, 'x-content-type-options': 'nosniff',
          });
          ctx.res.end(bytes);
        },
      },
      { method: 'GET', path: '/payments/{payment_id}/refunds', handler: (ctx) => renderRefunds(ctx) },
      {
        method: 'POST', path: '/payments/{payment_id}/refunds', audit: 'api',
        async handler(ctx) {
          const pid = ctx.params.payment_id!;
          const amount = (ctx.form.get('amount') ?? '').trim() || 'full';
          const address = (ctx.form.get('address') ?? '').trim();
          const result = await attempt(() => ctx.api<{ refund: Refund }>('POST', `/v1/payments/${enc(pid)}/refunds`, { body: { amount, ...(address ? { address } : {}) } }));
          if (!result.ok) return renderRefunds(ctx, { error: result.error, status: result.status });
          const r = result.value.refund;
          // The link is shown once (only its hash is kept): on this page's answer, not after a redirect.
          if (r.refund_link?.url) return renderRefunds(ctx, { link: r.refund_link.url });
          ctx.redirect(`/payouts/${enc(r.refund_id)}`, `Refund ${r.refund_id} of ${r.amount} ${r.asset_symbol} created.`);
        },
      },
    ],
  };
}

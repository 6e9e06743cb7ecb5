import type { CabinetSection, PageContext } from '../cabinet/index.js';
import { attempt, badge, copyable, csrfField, errorBox, html, num, pageHeader, time, type Html } from '../cabinet/index.js';
import { fromBaseUnits } from './amounts.js';
import type { PaymentObject } from './present.js';
import { orderFunding, orderTimeline, type TimelineStep } from './timeline.js';
import { settingsRoutes } from './cabinet-settings.js';

/**
 * The cabinet's Payments pages: orders with their status, amounts, the timeline of transitions
 * and the AML result. Every read and the cancel go through the Public API's own handlers
 * (ctx.api), so filters, paging limits, ids and messages are the API's.
 */

const PER_PAGE = 25;

const STATUSES: Array<[string, string]> = [
  ['pending', 'Pending'], ['seen', 'Seen'], ['underpaid', 'Underpaid'], ['aml_check', 'AML check'],
  ['paid', 'Paid'], ['failed', 'Failed'], ['expired', 'Expired'],
];
const LABEL = new Map(STATUSES);

type Tone = 'ok' | 'warn' | 'bad' | 'neutral';
const TONE: Record<string, Tone> = {
  pending: 'neutral', seen: 'neutral', aml_check: 'warn', underpaid: 'warn', paid: 'ok', failed: 'bad', expired: 'bad',
};

export const statusBadge = (s: string) => badge(LABEL.get(s) ?? s, TONE[s] ?? 'neutral');

const REASONS: Record<string, string> = {
  canceled: 'canceled by you',
  aml_rejected: 'the AML screening rejected a sender',
  partial: 'only part of the amount arrived in time',
  late: 'paid after the deadline and late payments are not accepted',
  reorg: 'a funding transaction left the chain (reorg)',
};

const RISK_TONE: Record<string, Tone> = { low: 'ok', medium: 'warn', high: 'bad', severe: 'bad', unknown: 'neutral' };

const amount = (value: string, p: PaymentObject) => html`<span class="amount">${value}</span> <span class="muted">${p.asset_symbol}</span>`;

interface PaymentList {
  payments: PaymentObject[];
  page: number;
  per_page: number;
  total: number;
}

function listUrl(status: string | undefined, page = 1): string {
  const q = new URLSearchParams();
  if (status) q.set('status', status);
  if (page > 1) q.set('page', String(page));
  const s = q.toString();
  return s ? `/payments?${s}` : '/payments';
}

async function renderList(ctx: PageContext) {
  const status = ctx.url.searchParams.get('status') || undefined;
  const page = ctx.url.searchParams.get('page') || '1';
  // The API validates both (an unknown status or a bad page is its 400, with its message).
  const list = await ctx.api<PaymentList>('GET', '/v1/payments', {
    query: { page, per_page: String(PER_PAGE), ...(status ? { status } : {}) },
  });
  const pages = Math.max(1, Math.ceil(list.total / PER_PAGE));
  ctx.page({
    title: 'Payments', nav: 'payments',
    body: html`${pageHeader('Payments', `${num(list.total)} ${status ? `${LABEL.get(status) ?? status} ` : ''}order${list.total === 1 ? '' : 's'}`, html`<a class="button" href="/payments/settings">Settings</a>`)}
<section class="card" aria-labelledby="orders-title">
  <div class="card-head"><h2 id="orders-title">Orders</h2>
  <nav class="segmented scroll" aria-label="Filter by status">
    <a href="/payments"${!status ? html` aria-current="true"` : ''}>All</a>
    ${STATUSES.map(([s, label]) => html`<a href="${listUrl(s)}"${s === status ? html` aria-current="true"` : ''}>${label}</a>`)}
  </nav></div>
  ${list.payments.length === 0
    ? html`<p class="empty">${status ? `No ${LABEL.get(status) ?? status} orders.` : html`No payment orders yet. Create one from your server with <code>POST /v1/payments</code> or <code>rpcctl payments create</code>.`}</p>`
    : html`<div class="table-wrap"><table id="payments-table" class="cards">
  <thead><tr><th scope="col">Order</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Received</th><th scope="col">Network</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col"><span class="sr-only">Checkout page</span></th></tr></thead>
  <tbody>${list.payments.map((p) => html`<tr data-payment="${p.payment_id}">
    <td data-label="Order"><a href="/payments/${encodeURIComponent(p.payment_id)}">${p.order_id}</a><br><code class="small muted">${p.payment_id}</code></td>
    <td data-label="Status">${statusBadge(p.status)}${p.late ? html` ${badge('late', 'warn')}` : ''}</td>
    <td data-label="Amount" class="num">${amount(p.amount, p)}</td>
    <td data-label="Received" class="num">${p.amount_received_raw === '0' ? html`<span class="muted">—</span>` : amount(p.amount_received, p)}</td>
    <td data-label="Network">${p.network}</td>
    <td data-label="Created">${time(p.created_at)}</td>
    <td data-label="Expires">${time(p.expires_at)}</td>
    <td class="actions"><a href="${p.checkout_url}" target="_blank" rel="noopener" aria-label="Checkout page of order ${p.order_id} (opens in a new tab)">Checkout ↗</a></td>
  </tr>`)}</tbody></table></div>
  ${pages > 1 ? html`<nav class="pager" aria-label="Pages of orders">
    ${list.page > 1 ? html`<a href="${listUrl(status, list.page - 1)}" rel="prev">← Previous</a>` : html`<span></span>`}
    <span class="muted">Page ${list.page} of ${pages}</span>
    ${list.page < pages ? html`<a href="${listUrl(status, list.page + 1)}" rel="next">Next →</a>` : html`<span></span>`}
  </nav>` : ''}`}
</section>`,
  });
}

function webhookNote(step: TimelineStep): Html | string {
  const w = step.webhook;
  if (!w) return '';
  if (w.status === 'delivered') return html`<span class="muted small">webhook delivered</span>`;
  if (w.status === 'pending') return html`<span class="muted small">webhook ${w.attempts ? `retrying (${w.attempts} attempt${w.attempts === 1 ? '' : 's'})` : 'queued'}</span>`;
  return html`<span class="muted small">webhook ${w.status}${w.lastError ? `: ${w.lastError}` : ''}</span>`;
}

function timeline(steps: TimelineStep[]): Html {
  return html`<ol class="timeline" id="timeline">${steps.map((s, i) => html`<li class="tl-${TONE[s.status] ?? 'neutral'}${i === steps.length - 1 ? ' current' : ''}">
  <div class="tl-head">${statusBadge(s.status)}${s.late ? html` ${badge('late', 'warn')}` : ''} ${s.at ? time(s.at) : html`<span class="muted small">time no longer kept (webhook log pruned)</span>`}</div>
  ${s.sequence === 0 ? html`<p class="muted small">Order created</p>` : ''}
  ${s.txHash && (s.status === 'seen' || s.txHash !== steps[i - 1]?.txHash) ? html`<p class="small">Transaction <code class="hash" title="${s.txHash}">${s.txHash}</code></p>` : ''}
  ${s.reason ? html`<p class="small">Reason: ${REASONS[s.reason] ?? s.reason}</p>` : ''}
  ${webhookNote(s)}
</li>`)}</ol>`;
}

function amlCard(p: PaymentObject): Html {
  const a = p.aml;
  if (!a) {
    return html`<section class="card" aria-labelledby="aml-title" id="aml"><h2 id="aml-title">AML screening</h2>
  <p class="muted">${p.status === 'aml_check' ? 'Screening the senders now. The order moves to paid or failed when the result is in.'
    : p.status === 'failed' && p.reason === 'canceled' ? 'Not screened: the order was canceled.'
    : 'Not screened yet: the senders are screened once the full amount has arrived.'}</p></section>`;
  }
  return html`<section class="card" aria-labelledby="aml-title" id="aml"><h2 id="aml-title">AML screening</h2>
  <dl class="kv">
    <dt>Result</dt><dd>${badge(`${a.risk_level} risk`, RISK_TONE[a.risk_level] ?? 'neutral')} <span class="muted">score ${a.score} / 100</span></dd>
    <dt>Provider</dt><dd>${a.provider}</dd>
    <dt>Checked</dt><dd>${time(a.checked_at)}</dd>
    <dt>Report</dt><dd>${a.report_url && /^https?:\/\//i.test(a.report_url)
      ? html`<a href="${a.report_url}" rel="noopener noreferrer" target="_blank" id="aml-report">Open the report ↗</a>`
      : html`<span class="muted">none from this provider</span>`}</dd>
  </dl>
  ${a.details.length ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Risk indicators"><table class="aml-details">
    <thead><tr><th scope="col">Category</th><th scope="col">Address</th><th scope="col">Source</th></tr></thead>
    <tbody>${a.details.map((d) => html`<tr><td>${d.category}</td><td><code class="address">${d.address}</code></td><td>${d.source}</td></tr>`)}</tbody>
  </table></div>` : html`<p class="muted small">No risk indicators found for the senders.</p>`}
</section>`;
}

async function renderOne(ctx: PageContext, opts: { error?: string; status?: number } = {}) {
  // The API checks the id's form and that the order is this account's (404 otherwise).
  const { payment: p } = await ctx.api<{ payment: PaymentObject }>('GET', `/v1/payments/${encodeURIComponent(ctx.params.payment_id!)}`);
  const [steps, funding] = await Promise.all([
    orderTimeline(ctx.core.store.db, ctx.account.id, p),
    orderFunding(ctx.core.store.db, ctx.account.id, p.payment_id),
  ]);
  const reason = p.reason ? REASONS[p.reason] ?? p.reason : undefined;
  ctx.page({
    title: `Order ${p.order_id}`, nav: 'payments', status: opts.status,
    body: html`<nav class="crumbs" aria-label="Breadcrumb"><a href="/payments">Payments</a> / <span aria-current="page">${p.order_id}</span></nav>
${pageHeader(`Order ${p.order_id}`, html`<span id="payment-status">${statusBadge(p.status)}</span>${p.late ? html` ${badge('late', 'warn')}` : ''}${p.overpaid ? html` ${badge('overpaid', 'warn')}` : ''}${reason ? html` · ${reason}` : ''} · created ${time(p.created_at)}`)}
${errorBox(opts.error)}
<div class="grid stats">
  <section class="card stat"><h2>Amount</h2><p class="big" id="payment-amount">${p.amount} <span class="unit">${p.asset_symbol}</span></p><p class="muted small">${p.amount_raw} base units</p></section>
  <section class="card stat"><h2>Received</h2><p class="big" id="payment-received">${p.amount_received} <span class="unit">${p.asset_symbol}</span></p><p class="muted small">${p.tx_hashes.length} funding transaction${p.tx_hashes.length === 1 ? '' : 's'}</p></section>
  <section class="card stat"><h2>Deadline</h2><p class="big when">${time(p.expires_at)}</p><p class="muted small">${p.confirmations} confirmation${p.confirmations === 1 ? '' : 's'} required on ${p.network}</p></section>
</div>
<div class="grid two">
<section class="card" aria-labelledby="timeline-title">
  <h2 id="timeline-title">Timeline</h2>
  ${timeline(steps)}
  ${p.status === 'pending' ? html`<details class="confirm"><summary>Cancel this order…</summary>
    <p class="small">Nothing has arrived yet. Canceling ends the order as failed (reason canceled) and frees its address; your server gets the webhook.</p>
    <form method="post" action="/payments/${encodeURIComponent(p.payment_id)}/cancel">${csrfField(ctx)}<button type="submit" class="danger">Cancel order</button></form>
  </details>` : ''}${p.amount_received !== '0' ? html`<p><a class="button" id="refunds-link" href="/payments/${encodeURIComponent(p.payment_id)}/refunds">Refund…</a> <span class="muted small">and the refund history</span></p>` : ''}
</section>
<div class="stack-cards">
${amlCard(p)}
<section class="card" aria-labelledby="details-title">
  <h2 id="details-title">Details</h2>
  <dl class="kv payment-details">
    <dt>Payment id</dt><dd>${copyable(p.payment_id, 'payment id', { id: 'payment-id' })}</dd>
    <dt>Pay to</dt><dd>${copyable(p.address, 'address')}</dd>
    <dt>Checkout page</dt><dd>${copyable(p.checkout_url, 'checkout page link')} <a href="${p.checkout_url}" target="_blank" rel="noopener" id="checkout-link">Open ↗</a></dd>
    <dt>Network</dt><dd>${p.network}</dd>
    <dt>Asset</dt><dd>${p.asset_symbol}${p.asset !== 'native' && p.asset !== p.asset_symbol ? html` <code class="small address">${p.asset}</code>` : ''} <span class="muted">(${p.decimals} decimals)</span></dd>
    ${p.derivation_index !== null ? html`<dt>Derived</dt><dd>child ${num(p.derivation_index)} of your xpub</dd>` : ''}
    <dt>Webhook</dt><dd>${p.webhook_url ? html`<code class="small">${p.webhook_url}</code>` : html`<span class="muted">the Address Watch webhook (<a href="/webhook">settings</a>)</span>`}</dd>
    ${p.metadata !== null ? html`<dt>Metadata</dt><dd><pre id="metadata"><code>${JSON.stringify(p.metadata, null, 2)}</code></pre></dd>` : ''}
  </dl>
</section>
</div>
</div>
<section class="card" aria-labelledby="funding-title">
  <h2 id="funding-title">Transfers to the address</h2>
  ${funding.length === 0 ? html`<p class="empty">No transfer confirmed yet.</p>` : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Transfers table, scrolls sideways">
  <table id="funding-table">
  <thead><tr><th scope="col">Transaction</th><th scope="col">From</th><th scope="col" class="num">Amount</th><th scope="col">Block</th><th scope="col">Recorded</th><th scope="col"><span class="sr-only">Notes</span></th></tr></thead>
  <tbody>${funding.map((f) => html`<tr>
    <td><code class="hash" title="${f.txHash}">${f.txHash.slice(0, 18)}…</code></td>
    <td>${f.from ? html`<code class="address">${f.from}</code>` : html`<span class="muted">—</span>`}</td>
    <td class="num">${f.counted ? amount(fromBaseUnits(f.amountRaw, p.decimals), p) : html`<span class="muted">${f.amountRaw} base units</span>`}</td>
    <td>${num(f.blockHeight)}</td>
    <td>${time(f.at)}</td>
    <td>${f.removed ? badge('reorged', 'bad') : !f.counted ? badge('other asset', 'neutral') : f.late ? badge('late', 'warn') : ''}</td>
  </tr>`)}</tbody></table></div>`}
</section>`,
  });
}


export const paymentsSection: CabinetSection = {
  nav: { id: 'payments', href: '/payments', label: 'Payments' },
  routes: [
    { method: 'GET', path: '/payments', handler: renderList },
    // Before /payments/{payment_id}: the first match wins.
    ...settingsRoutes,
    { method: 'GET', path: '/payments/{payment_id}', handler: (ctx) => renderOne(ctx) },
    {
      method: 'POST', path: '/payments/{payment_id}/cancel', audit: 'api',
      async handler(ctx) {
        const id = ctx.params.payment_id!;
        const result = await attempt(() => ctx.api<{ payment: PaymentObject }>('POST', `/v1/payments/${encodeURIComponent(id)}/cancel`));
        if (!result.ok) return renderOne(ctx, { error: result.error, status: 409 });
        ctx.redirect(`/payments/${encodeURIComponent(id)}`, `Order ${result.value.payment.order_id} canceled.`);
      },
    },
  ],
};

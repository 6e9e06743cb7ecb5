import type { WebhookDelivery, WebhookEventFilters } from '../wire/webhooks.js';
import { envIdentifier, getAccount, webhookSecretOf, type Catalog } from '../store/index.js';
import type { CabinetSection, PageContext } from '../cabinet/index.js';
import { attempt, badge, copyable, csrfField, errorBox, html, num, pageHeader, time, watchNetworks, type Html } from '../cabinet/index.js';
import { blockWebhooksPerDay } from '../pricing/credits.js';

/**
 * The cabinet's Webhooks page: the endpoint and its filters, the signing secret, test sends and
 * the recent deliveries with their attempts, all through the Public API's own handlers (ctx.api).
 */

interface WebhookView {
  url: string | null;
  enabled: boolean;
  events: WebhookEventFilters;
  egress_ips: string[];
}

const KINDS = [
  { key: 'payment', label: 'Payments', hint: 'funds arriving at a watched address' },
  { key: 'payout', label: 'Payouts', hint: 'funds leaving a watched address' },
  { key: 'block', label: 'Blocks', hint: 'every new block of the chosen networks' },
] as const;

const statusTone = (s: string) => (s === 'delivered' ? 'ok' : s === 'pending' ? 'warn' : s === 'failed' ? 'bad' : 'neutral');

function deliveriesList(ctx: PageContext, deliveries: WebhookDelivery[]): Html {
  // Polls while something is still on its way, so a Test press shows its result by itself.
  const live = deliveries.some((d) => d.status === 'pending');
  return html`<div id="deliveries" hx-get="/webhook/deliveries" hx-trigger="${live ? 'every 1s, refresh-deliveries from:body' : 'refresh-deliveries from:body'}" hx-swap="outerHTML">
  ${deliveries.length === 0 ? html`<p class="empty">No deliveries yet. Press Send test to try your receiver.</p>` : html`<ul class="deliveries">
  ${deliveries.map((d) => html`<li class="delivery" data-delivery="${d.delivery_id}">
    <div class="delivery-head">
      ${badge(d.status, statusTone(d.status))}
      <strong>${d.type}</strong> <span class="muted">${d.network}</span>${d.test ? html` ${badge('test', 'neutral')}` : ''}
      <code class="muted small" title="X-Webhook-Id">${d.webhook_id}</code>
      <span class="spacer"></span>
      ${time(d.created_at)}
      ${d.status !== 'cancelled' || d.last_error !== 'the block left the chain (reorg)' ? html`<form method="post" action="/webhook/deliveries/${d.delivery_id}/redeliver" hx-post="/webhook/deliveries/${d.delivery_id}/redeliver" hx-target="#deliveries" hx-swap="outerHTML">
        ${csrfField(ctx)}<button type="submit" class="small"${d.status === 'pending' ? html` disabled` : ''}>Redeliver</button></form>` : ''}
    </div>
    ${d.attempts.length === 0 ? html`<p class="muted small">${d.status === 'pending' ? 'Queued…' : d.last_error ?? 'Not attempted.'}</p>` : html`<table class="attempts cards">
      <thead><tr><th scope="col">#</th><th scope="col">Sent</th><th scope="col">Result</th><th scope="col" class="num">Duration</th><th scope="col">Response</th></tr></thead>
      <tbody>${d.attempts.map((a) => html`<tr>
        <td data-label="Attempt">${a.attempt}</td><td data-label="Sent">${time(a.started_at)}</td>
        <td data-label="Result">${a.status_code !== null ? badge(`HTTP ${a.status_code}`, a.status_code >= 200 && a.status_code < 300 ? 'ok' : 'bad') : badge('no answer', 'bad')}${a.error ? html` <span class="small">${a.error}</span>` : ''}</td>
        <td data-label="Duration" class="num">${a.duration_ms} ms</td>
        <td data-label="Response">${a.response_excerpt ? html`<code class="excerpt">${a.response_excerpt}</code>` : html`<span class="muted">—</span>`}</td>
      </tr>`)}</tbody></table>`}
    ${d.status === 'pending' && d.next_retry_at && d.attempts.length > 0 ? html`<p class="muted small">Next attempt ${time(d.next_retry_at)}</p>` : ''}
  </li>`)}
  </ul>`}
</div>`;
}

interface NetworkOption {
  id: string;
  label: string;
  /** Block webhooks a day on it and their credits (estimates), for the Blocks filter. */
  perDay?: { blocks: number; credits: number };
}

function networkPicker(name: string, selected: string[], options: NetworkOption[], label: string): Html {
  return html`<label class="small">${label}
    <select name="${name}" multiple size="4">${options.map((n) => html`<option value="${n.id}"${selected.includes(n.id) ? html` selected` : ''}${n.perDay ? html` data-blocks="${n.perDay.blocks}" data-credits="${n.perDay.credits}"` : ''}>${n.label}</option>`)}</select>
  </label>`;
}

/** Every network's block webhooks a day, estimated from its block time and block price. */
function blockOptions(catalog: Catalog): NetworkOption[] {
  const perDay = new Map(catalog.networks.flatMap((n) => n.environments.map((e) => [envIdentifier(e), blockWebhooksPerDay(n)] as const)));
  return watchNetworks(catalog).map((o) => ({ ...o, perDay: perDay.get(o.id) }));
}

/**
 * What the Blocks box costs a day as set: block webhooks are billed on every block of every
 * chosen network (none chosen: all of them), which the API's default turns on. cabinet.js says
 * the same live as the box and the networks change; this is the text without script.
 */
function blockEstimate(on: boolean, selected: string[], options: NetworkOption[]): string {
  if (!on) return 'Blocks off: no credits for blocks.';
  const chosen = selected.length ? options.filter((o) => selected.includes(o.id)) : options;
  const blocks = chosen.reduce((t, o) => t + (o.perDay?.blocks ?? 0), 0);
  const credits = chosen.reduce((t, o) => t + (o.perDay?.credits ?? 0), 0);
  return `Estimated: about ${num(credits)} credits a day (${num(blocks)} blocks a day on ${chosen.length} network${chosen.length === 1 ? '' : 's'}, each block billed).`;
}

async function render(ctx: PageContext, opts: { error?: string; status?: number; secret?: string; testResult?: string } = {}) {
  const [hook, { deliveries }] = await Promise.all([
    ctx.api<WebhookView>('GET', '/v1/address-watch/webhook'),
    ctx.api<{ deliveries: WebhookDelivery[] }>('GET', '/v1/address-watch/deliveries', { query: { limit: '20' } }),
  ]);
  const networks = watchNetworks(ctx.core.store.catalog);
  const blocks = blockOptions(ctx.core.store.catalog);
  const f = hook.events;
  ctx.page({
    title: 'Webhooks', nav: 'webhook', status: opts.status,
    body: html`${pageHeader('Webhooks', 'Address Watch events are POSTed to your URL, signed with your signing secret, and retried for a day on failure.')}
${errorBox(opts.error)}
<div class="grid two">
<section class="card" aria-labelledby="hook-title">
  <h2 id="hook-title">Endpoint</h2>
  <form method="post" action="/webhook" class="stack">
    ${csrfField(ctx)}
    <label>URL <input type="url" name="url" required maxlength="2048" value="${hook.url ?? ''}" placeholder="https://example.com/hooks/rpcctl"></label>
    <label class="check"><input type="checkbox" name="enabled" value="1"${hook.enabled || hook.url === null ? html` checked` : ''}> Enabled</label>
    <fieldset>
      <legend>Send these events</legend>
      <p class="muted small">No network selected means every network.</p>
      ${KINDS.map((k) => html`<div class="filter">
        <label class="check"><input type="checkbox" name="${k.key}" value="1"${f[k.key] ? html` checked` : ''}> ${k.label} <span class="muted small">— ${k.hint}</span></label>
        ${k.key === 'block' ? html`${networkPicker('block_networks', f.block_networks, blocks, 'Blocks: only on')}
        <p class="estimate" id="block-estimate" data-block-estimate aria-live="polite">${blockEstimate(f.block, f.block_networks, blocks)}</p>
        <details class="small"><summary>Block credits a day by network</summary>
          <ul id="block-estimates">${blocks.map((o) => html`<li>${o.label}: about ${num(o.perDay?.credits ?? 0)} credits (${num(o.perDay?.blocks ?? 0)} blocks)</li>`)}</ul>
        </details>`
          : networkPicker(`${k.key}_networks`, f[`${k.key}_networks`], networks, `${k.label}: only on`)}
      </div>`)}
    </fieldset>
    <button type="submit" class="primary">Save webhook</button>
  </form>
  ${hook.egress_ips.length ? html`<p class="muted small">Deliveries come from ${hook.egress_ips.join(', ')}.</p>` : ''}
</section>
<div class="stack-cards">
<section class="card" aria-labelledby="secret-title">
  <h2 id="secret-title">Signing secret</h2>
  <p class="muted small">Verify <code>X-Signature</code>: HMAC-SHA256 of <code>{X-Timestamp}.{body}</code> with this secret, hex.</p>
  ${opts.secret ? copyable(opts.secret, 'signing secret', { secret: true, id: 'signing-secret' }) : html`<form method="post" action="/webhook/secret">${csrfField(ctx)}<button type="submit">Reveal secret</button></form>`}
</section>
<section class="card" aria-labelledby="test-title">
  <h2 id="test-title">Send a test</h2>
  <p class="muted small">A sample event, marked <code>"test": true</code>, goes through the real queue. Tests are never charged.</p>
  <form method="post" action="/webhook/test" class="row-form" hx-post="/webhook/test" hx-target="#test-result" hx-swap="innerHTML">
    ${csrfField(ctx)}
    <label>Event <select name="type">${['payment', 'payout', 'block'].map((t) => html`<option>${t}</option>`)}</select></label>
    <label>Network <select name="network">${networks.map((n) => html`<option value="${n.id}">${n.label}</option>`)}</select></label>
    <button type="submit"${hook.url === null ? html` disabled title="Save a webhook URL first"` : ''}>Send test</button>
  </form>
  <div id="test-result" role="status">${opts.testResult ?? ''}</div>
</section>
</div>
</div>
<section class="card" aria-labelledby="deliveries-title">
  <div class="card-head"><h2 id="deliveries-title">Recent deliveries</h2><a class="button small" href="/webhook" hx-get="/webhook/deliveries" hx-target="#deliveries" hx-swap="outerHTML">Refresh</a></div>
  ${deliveriesList(ctx, deliveries)}
</section>`,
  });
}

async function deliveriesFragment(ctx: PageContext) {
  const { deliveries } = await ctx.api<{ deliveries: WebhookDelivery[] }>('GET', '/v1/address-watch/deliveries', { query: { limit: '20' } });
  ctx.fragment(deliveriesList(ctx, deliveries));
}

export const webhooksSection: CabinetSection = {
  nav: { id: 'webhook', href: '/webhook', label: 'Webhooks' },
  routes: [
    { method: 'GET', path: '/webhook', handler: (ctx) => render(ctx) },
    { method: 'GET', path: '/webhook/deliveries', handler: deliveriesFragment },
    {
      method: 'POST', path: '/webhook', audit: 'api',
      async handler(ctx) {
        const f = ctx.form;
        const events: Partial<WebhookEventFilters> = {};
        for (const k of KINDS) {
          events[k.key] = f.get(k.key) === '1';
          events[`${k.key}_networks`] = f.getAll(`${k.key}_networks`);
        }
        const result = await attempt(() => ctx.api('PUT', '/v1/address-watch/webhook', { body: { url: (f.get('url') ?? '').trim(), enabled: f.get('enabled') === '1', events } }));
        if (!result.ok) return render(ctx, { error: result.error, status: 400 });
        ctx.redirect('/webhook', 'Webhook saved.');
      },
    },
    {
      method: 'POST', path: '/webhook/secret', audit: 'none',
      async handler(ctx) {
        const account = await getAccount(ctx.core.store, ctx.account.id);
        await render(ctx, { secret: webhookSecretOf(ctx.core.store, account!) });
      },
    },
    {
      method: 'POST', path: '/webhook/test', audit: 'api',
      async handler(ctx) {
        const result = await attempt(() => ctx.api<{ webhook_id: string }>('POST', '/v1/address-watch/webhook/test', { body: { type: ctx.form.get('type'), network: ctx.form.get('network') } }));
        const message = result.ok ? html`<p class="ok">Queued test delivery <code>${result.value.webhook_id}</code>. It appears below in a moment.</p>` : html`<p class="error" role="alert">${result.error}</p>`;
        if (ctx.req.headers['hx-request']) {
          // The deliveries list refreshes itself to show the new one.
          ctx.res.setHeader('hx-trigger', 'refresh-deliveries');
          return ctx.fragment(message);
        }
        if (!result.ok) return render(ctx, { error: result.error, status: 400 });
        ctx.redirect('/webhook', `Queued test delivery ${result.value.webhook_id}.`);
      },
    },
    {
      method: 'POST', path: '/webhook/deliveries/{id}/redeliver', audit: 'api',
      async handler(ctx) {
        const id = ctx.params.id!;
        const result = await attempt(() => ctx.api('POST', `/v1/address-watch/deliveries/${encodeURIComponent(id)}/redeliver`));
        if (ctx.req.headers['hx-request']) return deliveriesFragment(ctx);
        if (!result.ok) return render(ctx, { error: result.error, status: 400 });
        ctx.redirect('/webhook', 'Delivery queued again.');
      },
    },
  ],
};

import type { CabinetSection, PageContext } from '../cabinet/index.js';
import { attempt, badge, csrfField, errorBox, html, num, pageHeader, time, watchNetworks } from '../cabinet/index.js';
import { recentEvents } from './events.js';

/**
 * The cabinet's Address Watch page: slots, the watched addresses and the event feed. Writes go
 * through the Public API's own handlers (ctx.api); the feed is read here, newest first.
 */

interface WatchList {
  addresses: Array<{ watch_id: string; network_slug: string; address: string; created_at: string }>;
  page: number;
  per_page: number;
  total: number;
}

interface Slots {
  slots_total: number;
  slots_used: number;
  slots_free: number;
  webhook_configured: boolean;
  webhook_enabled: boolean;
}

const PER_PAGE = 25;

const typeTone = (t: string) => (t === 'payment' ? 'ok' : t === 'payout' ? 'warn' : 'neutral');

async function render(ctx: PageContext, opts: { error?: string; status?: number; address?: string; network?: string } = {}) {
  const page = Math.max(1, Math.min(1_000_000, Number(ctx.url.searchParams.get('page')) || 1));
  const before = ctx.url.searchParams.get('before');
  const [slots, list, feed] = await Promise.all([
    ctx.api<Slots>('GET', '/v1/address-watch/account'),
    ctx.api<WatchList>('GET', '/v1/address-watch/addresses', { query: { page: String(page), per_page: String(PER_PAGE) } }),
    recentEvents(ctx.core.store, { accountId: ctx.account.id, limit: 25, before: before && /^\d{1,15}$/.test(before) ? Number(before) : undefined }),
  ]);
  const pages = Math.max(1, Math.ceil(list.total / PER_PAGE));
  const networks = watchNetworks(ctx.core.store.catalog);
  ctx.page({
    title: 'Address Watch', nav: 'watch', status: opts.status,
    body: html`${pageHeader('Address Watch', `${num(slots.slots_used)} of ${num(slots.slots_total)} address slots used`)}
${slots.slots_total === 0 ? html`<p class="notice">Your plan has no Address Watch slots. Upgrade to watch addresses.</p>` : ''}
${!slots.webhook_configured ? html`<p class="notice">No webhook yet: events are recorded in the feed below. <a href="/webhook">Set up a webhook</a> to have them sent to you.</p>` : ''}
<section class="card" aria-labelledby="add-title">
  <h2 id="add-title">Watch an address</h2>
  ${errorBox(opts.error)}
  <form method="post" action="/watch/addresses" class="row-form">
    ${csrfField(ctx)}
    <label>Network <select name="network_slug">${networks.map((n) => html`<option value="${n.id}"${n.id === opts.network ? html` selected` : ''}>${n.label}</option>`)}</select></label>
    <label class="grow">Address <input name="address" required maxlength="128" value="${opts.address ?? ''}" placeholder="0x…, G…, bc1…, T…, or a Solana public key" autocomplete="off" spellcheck="false"></label>
    <button type="submit" class="primary"${slots.slots_free === 0 ? html` disabled` : ''}>Watch</button>
  </form>
</section>
<section class="card" aria-labelledby="watched-title">
  <h2 id="watched-title">Watched addresses <span class="muted">(${num(list.total)})</span></h2>
  ${list.addresses.length === 0 ? html`<p class="empty">Nothing watched yet.</p>` : html`<div class="table-wrap"><table id="watch-table" class="cards">
  <thead><tr><th scope="col">Address</th><th scope="col">Network</th><th scope="col">Watch id</th><th scope="col">Since</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
  <tbody>${list.addresses.map((w) => html`<tr>
    <td data-label="Address"><code class="address">${w.address}</code></td><td data-label="Network">${w.network_slug}</td><td data-label="Watch id"><code>${w.watch_id}</code></td><td data-label="Since">${time(w.created_at)}</td>
    <td class="actions"><form method="post" action="/watch/addresses/${w.watch_id}/delete">${csrfField(ctx)}<button type="submit" class="small danger" aria-label="Remove ${w.address}">Remove</button></form></td>
  </tr>`)}</tbody></table></div>
  ${pages > 1 ? html`<nav class="pager" aria-label="Pages of watched addresses">
    ${page > 1 ? html`<a href="/watch?page=${page - 1}" rel="prev">← Previous</a>` : html`<span></span>`}
    <span class="muted">Page ${page} of ${pages}</span>
    ${page < pages ? html`<a href="/watch?page=${page + 1}" rel="next">Next →</a>` : html`<span></span>`}
  </nav>` : ''}`}
</section>
<section class="card" aria-labelledby="events-title">
  <h2 id="events-title">Events</h2>
  ${feed.events.length === 0 ? html`<p class="empty">No events yet. Payments to and from watched addresses appear here.</p>` : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Events table, scrolls sideways"><table id="events-table">
  <thead><tr><th scope="col">Type</th><th scope="col">Network</th><th scope="col">Address</th><th scope="col" class="num">Amount <span class="muted small">(base units)</span></th><th scope="col">Block</th><th scope="col">Transaction</th><th scope="col">Seen</th></tr></thead>
  <tbody>${feed.events.map((e) => html`<tr>
    <td>${badge(String(e.type), typeTone(String(e.type)))}</td>
    <td>${String(e.network)}</td>
    <td>${e.address ? html`<code class="address">${String(e.address)}</code>` : html`<span class="muted">—</span>`}</td>
    <td class="num">${e.amount !== undefined && e.amount !== null ? html`${String(e.amount)}${e.token ? html` <span class="muted">${typeof e.token === 'object' ? String((e.token as { symbol?: string }).symbol ?? 'token') : String(e.token)}</span>` : ''}` : ''}</td>
    <td>${num(Number(e.block_height))}</td>
    <td>${e.tx_hash ? html`<code class="hash" title="${String(e.tx_hash)}">${String(e.tx_hash).slice(0, 14)}…</code>` : ''}</td>
    <td>${time(String(e.created_at))}</td>
  </tr>`)}</tbody></table></div>
  ${feed.next_before ? html`<nav class="pager"><span></span><a href="/watch?before=${feed.next_before}">Older events →</a></nav>` : ''}`}
</section>`,
  });
}

export const watchSection: CabinetSection = {
  nav: { id: 'watch', href: '/watch', label: 'Address Watch' },
  routes: [
    { method: 'GET', path: '/watch', handler: (ctx) => render(ctx) },
    {
      method: 'POST', path: '/watch/addresses', audit: 'api',
      async handler(ctx) {
        const address = (ctx.form.get('address') ?? '').trim();
        const network = ctx.form.get('network_slug') ?? '';
        const result = await attempt(() => ctx.api<{ watch_id: string; created: boolean }>('POST', '/v1/address-watch/addresses', { body: { network_slug: network, address } }));
        if (!result.ok) return render(ctx, { error: result.error, status: 400, address, network });
        ctx.redirect('/watch', result.value.created ? `Watching ${address} on ${network}.` : `${address} on ${network} was already watched.`);
      },
    },
    {
      method: 'POST', path: '/watch/addresses/{watch_id}/delete', audit: 'api',
      async handler(ctx) {
        await ctx.api('DELETE', '/v1/address-watch/addresses', { body: { watch_id: ctx.params.watch_id } });
        ctx.redirect('/watch', 'Address removed; its events stay in the feed.');
      },
    },
  ],
};

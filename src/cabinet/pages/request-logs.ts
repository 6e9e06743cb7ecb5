import { HttpError } from '../../api/http.js';
import type { Endpoint, RequestLogEntry, RequestLogPage } from '../../wire/account.js';
import type { PageContext, PageRoute } from '../context.js';
import { html } from '../html.js';
import { exampleCall, exampleMethod } from './networks.js';
import { badge, num, pageHeader } from './ui.js';

const PAGE = 100;

/**
 * An endpoint's request log: its recent gateway calls, newest first, filtered by status and
 * method, paged back with `before`. The gateway keeps them in memory (docs/gateway.md).
 */
async function render(ctx: PageContext): Promise<void> {
  const id = ctx.params.id!;
  if (!/^[1-9]\d{0,15}$/.test(id)) throw new HttpError(404, 'Not found');
  const status = ctx.url.searchParams.get('status') === 'error' ? 'error' : 'all';
  const method = (ctx.url.searchParams.get('method') ?? '').trim().slice(0, 200);
  const before = ctx.url.searchParams.get('before') ?? '';
  const query: Record<string, string> = { limit: String(PAGE), status };
  if (method) query.method = method;
  // A `before` that is not a call id (edited by hand) starts from the newest again.
  if (/^[0-9a-z]{1,12}-[0-9a-z]{1,12}-\d{1,3}$/.test(before)) query.before = before;
  const [{ endpoint: e }, log] = await Promise.all([
    ctx.api<{ endpoint: Endpoint }>('GET', `/v1/endpoints/${id}`),
    ctx.api<RequestLogPage>('GET', `/v1/endpoints/${id}/logs`, { query }),
  ]);
  const filterQuery = (extra: Record<string, string>) => new URLSearchParams({ ...(status === 'error' ? { status } : {}), ...(method ? { method } : {}), ...extra }).toString();
  const older = log.next_before ? `/endpoints/${e.id}/logs?${filterQuery({ before: log.next_before })}` : undefined;
  const filtered = status === 'error' || method !== '';
  const example = exampleCall(ctx.core.store.catalog, e.network_id);
  ctx.page({
    title: `${e.name}: request logs`, nav: 'endpoints',
    body: html`<nav class="crumbs" aria-label="Breadcrumb"><a href="/endpoints">Endpoints</a> / <a href="/endpoints/${e.id}">${e.name}</a> / <span aria-current="page">Request logs</span></nav>
${pageHeader('Request logs', html`${e.name} · ${e.network_name} ${e.env_slug} · the most recent calls, newest first`)}
<section class="card" aria-labelledby="log-filter-title">
  <h2 id="log-filter-title">Filter</h2>
  <form method="get" action="/endpoints/${e.id}/logs" class="row-form" id="log-filter">
    <label>Which calls
      <select name="status">
        <option value="all"${status === 'all' ? html` selected` : ''}>All calls</option>
        <option value="error"${status === 'error' ? html` selected` : ''}>Errors only</option>
      </select>
    </label>
    <label>Method <input name="method" value="${method}" maxlength="200" placeholder="${example ? `e.g. ${exampleMethod(example)}` : ''}" autocomplete="off"></label>
    <button type="submit" class="primary">Show</button>
    ${filtered ? html`<a href="/endpoints/${e.id}/logs">Clear filter</a>` : ''}
  </form>
</section>
<section class="card" aria-labelledby="log-title">
  <div class="card-head"><h2 id="log-title">Calls</h2><a href="/endpoints/${e.id}/logs?${filterQuery({})}">Refresh</a></div>
  ${log.kept_per_worker === 0 ? html`<p class="empty">Request logs are off on this service.</p>`
    : log.calls.length === 0 ? html`<p class="empty">${filtered || before ? 'No calls match.' : 'No calls yet. Calls to this endpoint show here a moment after they are answered.'}</p>`
    : callsTable(log.calls)}
  ${older ? html`<p><a href="${older}" rel="next">Older calls</a></p>` : ''}
  <p class="muted small">The gateway keeps the last ${num(log.kept_per_worker)} calls of each endpoint in each of its worker threads, in memory: they are not stored, and a restart clears them. With several instances, each shows the calls it answered. A batch is one row.</p>
</section>`,
  });
}

/** To the millisecond (calls come many a second), the date only when it is not today's (UTC). */
function callTime(iso: string, today: string) {
  const day = iso.slice(0, 10);
  return html`<time datetime="${iso}" title="${iso}">${day === today ? '' : `${day} `}${iso.slice(11, 23)}</time>`;
}

/**
 * The call's outcome where a phone sees it (the JSON-RPC error column is off to the right
 * there): an answer with a JSON-RPC error failed, whatever its HTTP status.
 */
function statusCell(c: RequestLogEntry) {
  if (c.rpc_code !== null && c.status < 400) return badge(`${c.status} error`, 'bad');
  return badge(String(c.status), c.status >= 400 ? 'bad' : c.status >= 300 ? 'warn' : 'ok');
}

function callsTable(calls: RequestLogEntry[]) {
  const today = new Date().toISOString().slice(0, 10);
  // Focusable: on a narrow screen the table scrolls sideways inside its card, by keyboard too.
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Calls, scrolls sideways"><table id="log-table">
  <thead><tr><th scope="col">Time (UTC)</th><th scope="col">Method</th><th scope="col">Status</th><th scope="col">JSON-RPC error</th><th scope="col" class="num">Latency</th><th scope="col" class="num">Credits</th><th scope="col">Client</th><th scope="col">Cache</th></tr></thead>
  <tbody>${calls.map((c) => html`<tr>
    <td>${callTime(c.at, today)}</td>
    <td>${c.method === '' ? html`<span class="muted">none</span>` : html`<code>${c.method}</code>`}${c.batch === null ? '' : html` <span class="muted small">batch of ${c.batch}</span>`}</td>
    <td>${statusCell(c)}</td>
    <td>${c.rpc_code === null ? html`<span class="muted">none</span>` : badge(String(c.rpc_code), 'bad')}</td>
    <td class="num">${c.latency_ms} ms</td>
    <td class="num">${num(c.credits)}</td>
    <td>${c.client_ip}</td>
    <td>${c.cached ? 'cached' : html`<span class="muted">no</span>`}</td>
  </tr>`)}</tbody></table></div>`;
}

export const requestLogRoutes: PageRoute[] = [
  { method: 'GET', path: '/endpoints/{id}/logs', handler: render },
];

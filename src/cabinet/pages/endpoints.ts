import { HttpError } from '../../api/http.js';
import type { Endpoint, Usage } from '../../wire/account.js';
import type { PageContext, PageRoute } from '../context.js';
import { html } from '../html.js';
import { attempt, badge, copyable, csrfField, daysPicker, errorBox, methodsTable, num, pageHeader, parseDays, time, usageChart } from './ui.js';
import { allowlistField, allowlistMessage, readAllowlist } from './allowlist.js';
import { exampleCall, exampleCurl } from './networks.js';

interface AvailableNetworks {
  networks: Array<{ id: number; name: string; slug: string; environment_kinds: string[] }>;
  network_limit: number | null;
  allowed_network_slugs: string[];
}

const statusBadge = (s: string) => (s === 'active' ? badge('active', 'ok') : badge(s, 'warn'));

async function renderList(ctx: PageContext, opts: { error?: string; status?: number; name?: string } = {}) {
  const [{ endpoints }, available] = await Promise.all([
    ctx.api<{ endpoints: Endpoint[] }>('GET', '/v1/endpoints'),
    ctx.api<AvailableNetworks>('GET', '/v1/endpoints/available-networks'),
  ]);
  const plan = ctx.core.store.catalog.plan(ctx.account.plan_id);
  const full = plan !== undefined && endpoints.length >= plan.endpoints_limit;
  ctx.page({
    title: 'Endpoints', nav: 'endpoints', status: opts.status,
    body: html`${pageHeader('Endpoints', plan ? `${endpoints.length} of ${plan.endpoints_limit} endpoints on the ${plan.name} plan · ${plan.rps_limit} requests per second each` : undefined)}
<section class="card" aria-labelledby="endpoints-title">
  <h2 id="endpoints-title">Your endpoints</h2>
  ${endpoints.length === 0 ? html`<p class="empty">No endpoints yet. Create one below and send JSON-RPC to its URL.</p>` : html`<div class="table-wrap"><table id="endpoints-table" class="cards">
  <thead><tr><th scope="col">Name</th><th scope="col">Network</th><th scope="col">Status</th><th scope="col">URL</th><th scope="col">Created</th></tr></thead>
  <tbody>${endpoints.map((e) => html`<tr>
    <td data-label="Name"><a href="/endpoints/${e.id}">${e.name}</a></td>
    <td data-label="Network">${e.network_name} <span class="muted">${e.env_slug}</span></td>
    <td data-label="Status">${statusBadge(e.status)}</td>
    <td data-label="URL" class="url-cell">${copyable(e.url, `URL of ${e.name}`)}</td>
    <td data-label="Created">${time(e.created_at)}</td>
  </tr>`)}</tbody></table></div>`}
</section>
<section class="card" aria-labelledby="create-endpoint-title">
  <h2 id="create-endpoint-title">Create an endpoint</h2>
  ${errorBox(opts.error)}
  ${full ? html`<p class="muted">Your plan's endpoint limit is reached. Upgrade the plan to add more.</p>` : ''}
  ${available.networks.length === 0 ? html`<p class="muted">No network is available on your plan.</p>` : html`<form method="post" action="/endpoints" class="row-form">
    ${csrfField(ctx)}
    <label>Name <input name="name" required maxlength="255" value="${opts.name ?? ''}" placeholder="e.g. main"></label>
    <label>Network
      <select name="network" required>
        ${available.networks.map((n) => html`<optgroup label="${n.name}">${n.environment_kinds.map((env) => html`<option value="${n.slug}:${env}">${n.name} ${env}</option>`)}</optgroup>`)}
      </select>
    </label>
    <button type="submit" class="primary"${full ? html` disabled` : ''}>Create endpoint</button>
  </form>
  ${available.allowed_network_slugs.length || available.network_limit !== null ? html`<p class="muted small">Your plan ${available.allowed_network_slugs.length ? html`offers ${available.allowed_network_slugs.join(', ')}` : ''}${available.network_limit !== null ? html` and allows endpoints on ${available.network_limit} network${available.network_limit === 1 ? '' : 's'}` : ''}.</p>` : ''}`}
</section>`,
  });
}

async function renderOne(ctx: PageContext, opts: { error?: string; status?: number; allowlist?: { text: string; error: string } } = {}) {
  const id = ctx.params.id!;
  if (!/^[1-9]\d{0,15}$/.test(id)) throw new HttpError(404, "Not found");
  const days = parseDays(ctx);
  const [{ endpoint: e }, { usage }] = await Promise.all([
    ctx.api<{ endpoint: Endpoint }>('GET', `/v1/endpoints/${id}`),
    ctx.api<{ usage: Usage }>('GET', `/v1/endpoints/${id}/usage`, { query: { days: String(days) } }),
  ]);
  const paused = e.status === 'paused';
  const example = exampleCall(ctx.core.store.catalog, e.network_id);
  ctx.page({
    title: e.name, nav: 'endpoints', status: opts.status,
    body: html`<nav class="crumbs" aria-label="Breadcrumb"><a href="/endpoints">Endpoints</a> / <span aria-current="page">${e.name}</span></nav>
${pageHeader(e.name, html`${e.network_name} ${e.env_slug} · ${statusBadge(e.status)} · created ${time(e.created_at)}`)}
${errorBox(opts.error)}
<section class="card" aria-labelledby="url-title">
  <h2 id="url-title">JSON-RPC URL</h2>
  ${copyable(e.url, 'endpoint URL', { id: 'endpoint-url' })}
  ${example ? html`<details><summary>Try it</summary><pre><code>${exampleCurl(example, e.url)}</code></pre></details>` : ''}
  <dl class="kv compact">
    <dt>Rate limit</dt><dd>${num(e.rps_limit)} requests per second</dd>
    ${e.block_height !== null ? html`<dt>Node</dt><dd>${e.version ?? 'unknown'} · block ${num(e.block_height)}</dd>` : ''}
  </dl>
</section>
<div class="grid two">
<section class="card" aria-labelledby="status-title">
  <h2 id="status-title">Status</h2>
  <p>${paused ? 'Paused: the gateway refuses every call (HTTP 403) and nothing is charged.' : 'Active: calls are served and metered.'}</p>
  <form method="post" action="/endpoints/${e.id}/status">
    ${csrfField(ctx)}
    <input type="hidden" name="status" value="${paused ? 'active' : 'paused'}">
    <button type="submit" class="${paused ? 'primary' : 'warn'}">${paused ? 'Resume endpoint' : 'Pause endpoint'}</button>
  </form>
</section>
<section class="card" aria-labelledby="allow-title">
  <h2 id="allow-title">IP allowlist</h2>
  <form method="post" action="/endpoints/${e.id}/allowlist" class="stack">
    ${csrfField(ctx)}
    ${allowlistField({ id: 'endpoint-allow', label: 'Client IPs allowed to call this endpoint', value: opts.allowlist?.text ?? e.allowed_ips.join('\n'), error: opts.allowlist?.error, rows: 4 })}
    <button type="submit">Save allowlist</button>
  </form>
</section>
</div>
<p><a href="/endpoints/${e.id}/logs" id="request-logs-link">Request logs</a> <span class="muted small">the most recent calls, with errors, latency and client</span></p>
<section class="card" id="usage" aria-labelledby="usage-title">
  <div class="card-head"><h2 id="usage-title">Usage</h2>${daysPicker(`/endpoints/${e.id}`, days, 'usage')}</div>
  <p class="muted" id="usage-totals">${num(usage.total_requests)} requests · ${num(usage.total_credits)} credits in the last ${days} days</p>
  ${usageChart(usage, 'Requests per day')}
  <h3>By method</h3>
  ${methodsTable(usage, 50)}
</section>`,
  });
}

export const endpointRoutes: PageRoute[] = [
  { method: 'GET', path: '/endpoints', handler: (ctx) => renderList(ctx) },
  {
    method: 'POST', path: '/endpoints', audit: 'api',
    async handler(ctx) {
      const [networkSlug, envSlug] = (ctx.form.get('network') ?? '').split(':');
      const name = ctx.form.get('name') ?? '';
      const result = await attempt(() => ctx.api<{ endpoint: Endpoint }>('POST', '/v1/endpoints', {
        body: { name, network_slug: networkSlug || undefined, env_slug: envSlug || undefined },
      }));
      if (!result.ok) return renderList(ctx, { error: result.error, status: result.status, name });
      ctx.redirect(`/endpoints/${result.value.endpoint.id}`, `Endpoint ${result.value.endpoint.name} created.`);
    },
  },
  { method: 'GET', path: '/endpoints/{id}', handler: (ctx) => renderOne(ctx) },
  {
    method: 'POST', path: '/endpoints/{id}/status', audit: 'api',
    async handler(ctx) {
      const result = await attempt(() => ctx.api<{ endpoint: Endpoint }>('PATCH', `/v1/endpoints/${ctx.params.id}/status`, { body: { status: ctx.form.get('status') } }));
      if (!result.ok) return renderOne(ctx, { error: result.error, status: 400 });
      ctx.redirect(`/endpoints/${ctx.params.id}`, result.value.endpoint.status === 'paused' ? 'Endpoint paused.' : 'Endpoint resumed.');
    },
  },
  {
    method: 'POST', path: '/endpoints/{id}/allowlist', audit: 'api',
    async handler(ctx) {
      const typed = readAllowlist(ctx.form.get('allowed_ips'));
      const result = await attempt(() => ctx.api('PATCH', `/v1/endpoints/${ctx.params.id}/allowed-ips`, { body: { allowed_ips: typed.entries } }));
      if (!result.ok) return renderOne(ctx, { status: 400, allowlist: { text: typed.text, error: allowlistMessage(result.error, typed) } });
      ctx.redirect(`/endpoints/${ctx.params.id}`, 'Allowlist saved.');
    },
  },
];

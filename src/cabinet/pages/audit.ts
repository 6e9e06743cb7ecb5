import { auditActions } from '../../store/index.js';
import type { AuditEntry } from '../../wire/account.js';
import type { PageContext, PageRoute } from '../context.js';
import { html, type Html } from '../html.js';
import { badge, pageHeader, time } from './ui.js';

const PER_PAGE = 50;

/** What the list shows of each kind of target, in the filter's words. */
const GROUPS: Record<string, string> = {
  key: 'API keys', endpoint: 'Endpoints', watch: 'Watches', webhook: 'Webhooks', payment: 'Payments', payments: 'Payment settings',
  login: 'Sign-in', two_factor: 'Two-factor', account: 'Account', member: 'Members',
};

interface AuditPage { entries: AuditEntry[]; next_before: string | null; retention_days: number | null }

function listUrl(group: string | undefined, before?: string): string {
  const q = new URLSearchParams();
  if (group) q.set('action', `${group}.`);
  if (before) q.set('before', before);
  const s = q.toString();
  return s ? `/account/audit?${s}` : '/account/audit';
}

function actorCell(e: AuditEntry): Html {
  const kind = e.actor.kind === 'key' ? 'API key' : e.actor.kind === 'admin' ? 'operator' : 'cabinet';
  return html`${e.actor.kind === 'key' ? html`<code class="prefix">${e.actor.label}…</code>` : e.actor.label} <span class="muted small">${kind}</span>`;
}

function changesCell(changes: Record<string, unknown> | null): Html | string {
  if (!changes) return '';
  return html`${Object.entries(changes).map(([k, v]) => html`<div class="small"><span class="muted">${k}:</span> <code>${typeof v === 'string' ? v : JSON.stringify(v)}</code></div>`)}`;
}

/**
 * Newest first, a page back at a time, through the Public API's own list (its paging and its
 * filter); the filter offers the kinds of change the account has entries for. Action and who
 * come first: on a phone the table scrolls, and they are what a reader looks for.
 */
async function render(ctx: PageContext): Promise<void> {
  const action = ctx.url.searchParams.get('action') || undefined;
  const before = ctx.url.searchParams.get('before') || undefined;
  const group = action?.endsWith('.') ? action.slice(0, -1) : undefined;
  const list = await ctx.api<AuditPage>('GET', '/v1/account/audit', {
    query: { limit: String(PER_PAGE), ...(action ? { action } : {}), ...(before ? { before } : {}) },
  });
  const groups = [...new Set((await auditActions(ctx.core.store, ctx.account.id)).map((a) => a.split('.')[0]!))];
  ctx.page({
    title: 'Audit log', nav: 'account',
    body: html`${pageHeader('Audit log', `Every change made in the cabinet, through the API or by the operator${list.retention_days ? `, kept ${list.retention_days} days` : ''}.`)}
<section class="card" aria-labelledby="audit-title">
  <div class="card-head"><h2 id="audit-title">Changes, newest first</h2>
  ${groups.length > 1 ? html`<nav class="segmented scroll" aria-label="Filter by kind of change">
    <a href="/account/audit"${!group ? html` aria-current="true"` : ''}>All</a>
    ${groups.map((g) => html`<a href="${listUrl(g)}"${g === group ? html` aria-current="true"` : ''}>${GROUPS[g] ?? g}</a>`)}
  </nav>` : ''}</div>
  ${list.entries.length === 0 ? html`<p class="empty">${before ? 'No older changes.' : 'No changes recorded yet.'}</p>` : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Audit log entries"><table id="audit-table">
  <thead><tr><th scope="col">Action</th><th scope="col">Who</th><th scope="col">When</th><th scope="col">Target</th><th scope="col">Changes</th><th scope="col">Address</th></tr></thead>
  <tbody>${list.entries.map((e) => html`<tr data-audit="${e.audit_id}">
    <td>${badge(e.action, 'neutral')}</td>
    <td>${actorCell(e)}</td>
    <td>${time(e.created_at)}</td>
    <td>${e.target.type}${e.target.id ? html` <code>${e.target.id}</code>` : ''}</td>
    <td>${changesCell(e.changes)}</td>
    <td>${e.ip ? html`<code>${e.ip}</code>` : html`<span class="muted">—</span>`}</td>
  </tr>`)}</tbody></table></div>`}
  ${before || list.next_before ? html`<nav class="pager" aria-label="Pages of the audit log">
    ${before ? html`<a href="${listUrl(group)}">← Newest</a>` : html`<span></span>`}
    ${list.next_before ? html`<a href="${listUrl(group, list.next_before)}" rel="next">Older →</a>` : html`<span></span>`}
  </nav>` : ''}
</section>`,
  });
}

export const auditRoutes: PageRoute[] = [
  { method: 'GET', path: '/account/audit', handler: render },
];

import { HttpError } from '../../api/http.js';
import type { Usage } from '../../wire/account.js';
import type { PageContext } from '../context.js';
import { html, type Html } from '../html.js';

export const csrfField = (ctx: PageContext) => html`<input type="hidden" name="_csrf" value="${ctx.session.csrfToken}">`;

export const num = (n: number) => n.toLocaleString('en-US');

/** `2026-11-23 16:05 UTC`, with the exact instant for screen readers and hover. */
export function time(iso: string | null | undefined, empty = 'never'): Html {
  if (!iso) return html`<span class="muted">${empty}</span>`;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return html`${iso}`;
  return html`<time datetime="${d.toISOString()}" title="${d.toISOString()}">${d.toISOString().slice(0, 16).replace('T', ' ')} UTC</time>`;
}

export function badge(text: string, tone: 'ok' | 'warn' | 'bad' | 'neutral'): Html {
  return html`<span class="badge ${tone}">${text}</span>`;
}

export function errorBox(message: string | undefined): Html | string {
  return message ? html`<p class="error" role="alert">${message}</p>` : '';
}

export function copyable(value: string, label: string, opts: { secret?: boolean; id?: string } = {}): Html {
  return html`<div class="copy-row${opts.secret ? ' secret' : ''}">
  <code${opts.id ? html` id="${opts.id}"` : ''} class="copy-value" tabindex="0">${value}</code>
  <button type="button" class="small" data-copy="${value}" aria-label="Copy ${label}">Copy</button>
</div>`;
}

/** A bar chart of requests and credits per day, drawn by cabinet.js (uPlot) from the JSON beside it. */
export function usageChart(usage: Usage, label: string): Html {
  const data = { dates: usage.series.map((p) => p.date), requests: usage.series.map((p) => p.requests), credits: usage.series.map((p) => p.credits) };
  // Data in an attribute, not a JSON <script>: htmx drops script tags from swapped content.
  return html`<figure class="chart" data-chart="${JSON.stringify(data)}">
  <figcaption class="sr-only">${label}: ${num(usage.total_requests)} requests and ${num(usage.total_credits)} credits over ${usage.days} days</figcaption>
  <noscript><p class="muted">Charts need JavaScript; the totals are in the table.</p></noscript>
</figure>`;
}

export function daysPicker(base: string, days: number, target: string): Html {
  return html`<div class="segmented" role="group" aria-label="Period">
  ${[7, 30, 90].map((d) => html`<a href="${base}?days=${d}" hx-get="${base}?days=${d}" hx-target="#${target}" hx-select="#${target}" hx-swap="outerHTML" hx-push-url="true"${d === days ? html` aria-current="true"` : ''}>${d} days</a>`)}
</div>`;
}

/**
 * A method name that may wrap where its words meet (`eth_get<wbr>Transaction<wbr>Receipt`) on a
 * phone, and nowhere else; copied, it is the name unchanged.
 */
export function breakable(name: string): Html {
  return html`${name.split(/(?<=[a-z0-9_])(?=[A-Z])|(?<=_)/).map((part, i) => (i === 0 ? part : html`<wbr>${part}`))}`;
}

export function methodsTable(usage: Usage, limit = 10): Html {
  const top = usage.methods.slice(0, limit);
  if (top.length === 0) return html`<p class="empty">No calls in this period yet.</p>`;
  const max = Math.max(...top.map((m) => m.requests), 1);
  return html`<table class="methods">
  <thead><tr><th scope="col">Method</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Credits</th><th scope="col"><span class="sr-only">Share</span></th></tr></thead>
  <tbody>${top.map((m) => html`<tr><td><code>${breakable(m.method)}</code></td><td class="num">${num(m.requests)}</td><td class="num">${num(m.credits)}</td>
    <td class="bar"><progress max="${max}" value="${m.requests}" aria-label="${m.method} share of requests"></progress></td></tr>`)}</tbody>
</table>`;
}

export function parseDays(ctx: PageContext): 7 | 30 | 90 {
  const d = Number(ctx.url.searchParams.get('days') ?? 30);
  return d === 7 || d === 90 ? d : 30;
}

/** Runs an action; a client mistake (4xx other than 404) comes back as its message for the form. */
export async function attempt<T>(fn: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: string; status: number }> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    if (err instanceof HttpError && err.status >= 400 && err.status < 500 && err.status !== 404) return { ok: false, error: err.message, status: err.status };
    throw err;
  }
}

export function pageHeader(title: string, subtitle?: string | Html, actions?: Html): Html {
  return html`<div class="page-head"><div><h1>${title}</h1>${subtitle ? html`<p class="muted">${subtitle}</p>` : ''}</div>${actions ?? ''}</div>`;
}

import type { Usage } from '../../wire/account.js';
import type { PageRoute } from '../context.js';
import { html } from '../html.js';
import { daysPicker, methodsTable, num, pageHeader, parseDays, usageChart } from './ui.js';

interface AccountView {
  user_id: number;
  plan: { name: string; included_credits: number; rps_limit: number; endpoints_limit: number; webhook_address_slots: number } | null;
  usage: { period: string; requests: number; credits_used: number; credits_included: number; credits_remaining: number };
}

export const overviewRoutes: PageRoute[] = [
  {
    method: 'GET', path: '/',
    async handler(ctx) {
      const days = parseDays(ctx);
      const [account, { usage }, { endpoints }] = await Promise.all([
        ctx.api<AccountView>('GET', '/v1/account'),
        ctx.api<{ usage: Usage }>('GET', '/v1/account/usage', { query: { days: String(days) } }),
        ctx.api<{ endpoints: unknown[] }>('GET', '/v1/endpoints'),
      ]);
      const u = account.usage;
      const plan = account.plan;
      const share = u.credits_included > 0 ? Math.min(100, Math.round((u.credits_used / u.credits_included) * 100)) : 0;
      ctx.page({
        title: 'Overview', nav: 'overview',
        body: html`${pageHeader('Overview', html`Account ${account.user_id} · ${plan ? html`<strong>${plan.name}</strong> plan` : 'no plan'}`)}
${endpoints.length === 0 ? html`<section class="card start" aria-labelledby="start-title">
  <h2 id="start-title">Get started</h2>
  <ol class="steps">
    <li><a href="/endpoints">Create an endpoint</a> on a network of your plan and send JSON-RPC to its URL — no key needed, the URL is the credential.</li>
    <li><a href="/keys">Create an API key</a> to manage endpoints, usage and Address Watch from code or with <code>npx rpcctl init</code>.</li>
    <li><a href="/webhook">Set up a webhook</a> and <a href="/watch">watch addresses</a> to be told about payments as they land.</li>
  </ol>
</section>` : ''}
<section class="grid stats" aria-label="This month">
  <div class="card stat"><h2>Credits used</h2><p class="big">${num(u.credits_used)}</p><p class="muted">of ${num(u.credits_included)} included in ${u.period}</p>
    <progress max="100" value="${share}" aria-label="Share of included credits used">${share}%</progress></div>
  <div class="card stat"><h2>Credits remaining</h2><p class="big">${num(u.credits_remaining)}</p><p class="muted">until the end of the month (UTC)</p></div>
  <div class="card stat"><h2>Requests</h2><p class="big">${num(u.requests)}</p><p class="muted">this month</p></div>
  <div class="card stat"><h2>Plan</h2><p class="big">${plan?.name ?? '—'}</p>
    <p class="muted">${plan ? html`${num(plan.rps_limit)} req/s · ${endpoints.length}/${plan.endpoints_limit} endpoints · ${num(plan.webhook_address_slots)} watch slots` : ''}</p></div>
</section>
<section class="card" id="usage" aria-labelledby="usage-title">
  <div class="card-head"><h2 id="usage-title">Usage</h2>${daysPicker('/', days, 'usage')}</div>
  <p class="muted">${num(usage.total_requests)} requests · ${num(usage.total_credits)} credits in the last ${days} days (all endpoints and webhooks)</p>
  ${usageChart(usage, 'Requests per day')}
  <h3>Top methods</h3>
  ${methodsTable(usage)}
</section>`,
      });
    },
  },
];

import { z } from 'zod';
import { listAudit, monthTotals, usageReport } from '../../store/index.js';
import { keptFor, retentionDays } from '../kit.js';
import { route, type RouteDef } from '../router.js';
import { accountSchema, auditQuery, daysQuery, okSchema } from '../schemas.js';
import { auditEntrySchema, usageSchema } from '../../wire/account.js';
import { presentPlan } from '../present.js';

export const accountRoutes: RouteDef[] = [
  route({
    method: 'GET', path: '/v1/account', operationId: 'getAccount', tag: 'Account', summary: 'Plan and this month\'s usage',
    response: accountSchema,
    async handler({ account, app }) {
      const plan = app.store.catalog.plan(account.plan_id);
      const period = new Date().toISOString().slice(0, 7);
      const totals = await monthTotals(app.store, account.id, period);
      const included = plan?.included_credits ?? 0;
      return {
        ok: true,
        user_id: account.id,
        plan: presentPlan(plan),
        usage: {
          period,
          requests: totals.requests,
          credits_used: totals.credits,
          credits_included: included,
          credits_remaining: Math.max(0, included - totals.credits),
        },
      };
    },
  }),
  route({
    method: 'GET', path: '/v1/account/usage', operationId: 'getAccountUsage', tag: 'Account', summary: 'Daily usage over all endpoints plus webhook credits',
    query: daysQuery, errors: [400],
    response: okSchema.extend({ usage: usageSchema }),
    async handler({ account, app, query }) {
      return { ok: true, usage: await usageReport(app.store, { kind: 'account', accountId: account.id }, Number(query.days ?? 30)) };
    },
  }),
  route({
    method: 'GET', path: '/v1/account/audit', operationId: 'listAuditLog', tag: 'Account',
    summary: 'Audit log: every change made in the cabinet, through this API or by the operator, newest first',
    query: auditQuery, errors: [400],
    response: okSchema.extend({ entries: auditEntrySchema.array(), next_before: z.string().nullable(), retention_days: retentionDays }),
    async handler({ account, app, query }) {
      const result = await listAudit(app.store, {
        accountId: account.id, limit: Number(query.limit ?? 50), before: query.before === undefined ? undefined : Number(query.before), action: query.action,
      });
      return { ok: true, ...result, retention_days: keptFor(app.config.retention.audit_days) };
    },
  }),
];

import type { UsageDays } from '../../client/types.js';
import { withApi } from '../context.js';
import type { CommandImpl } from '../action.js';
import { resolveEndpoint } from '../endpoint-ref.js';
import { positiveInt } from '../watch/run.js';

/** Drops the envelope: `--json` prints the API object itself. */
export function withoutOk<T extends { ok?: unknown }>(body: T): Omit<T, 'ok'> {
  const { ok: _ok, ...rest } = body;
  return rest;
}

export const account: CommandImpl = (io, opts) => withApi(io, opts, async ({ api, out, credentials }) => {
  if (out.json) return out.printJson(withoutOk(await api.account()));
  const [body, { endpoints }] = await Promise.all([api.account().then(withoutOk), api.listEndpoints()]);
  const { plan, usage } = body;
  const pct = usage.credits_included > 0 ? ` (${Math.round((usage.credits_used / usage.credits_included) * 100)} %)` : '';
  out.fields([
    ['account', body.user_id],
    ['profile', credentials.profile ?? '(environment)'],
    ['plan', plan ? `${plan.name} (${plan.slug})` : '(none)'],
    ['endpoints', plan ? `${endpoints.length} of ${plan.endpoints_limit}` : endpoints.length],
    ['rps per endpoint', plan?.rps_limit],
    ['watch slots', plan?.webhook_address_slots],
    ['period', usage.period],
    ['requests', usage.requests],
    ['credits used', `${usage.credits_used} of ${usage.credits_included}${pct}`],
    ['credits left', usage.credits_remaining],
  ]);
});

export const usage: CommandImpl<{ days: string; endpoint?: string; chart?: boolean }> = (io, opts) =>
  withApi(io, opts, async ({ api, out }) => {
    const days = Number(opts.days) as UsageDays;
    const endpoint = opts.endpoint === undefined ? undefined : await resolveEndpoint(api, opts.endpoint);
    const { usage: u } = endpoint ? await api.endpointUsage(endpoint.id, days) : await api.accountUsage(days);
    if (out.json) return out.printJson(u);
    // The usage view (and its chart library) only for the usage commands, not every one in this file.
    const { renderUsage } = await import('../usage-view.js');
    renderUsage(out, u, { title: endpoint ? `Endpoint ${endpoint.id} (${endpoint.name})` : 'Account', chart: opts.chart });
  });

export const networks: CommandImpl = (io, opts) => withApi(io, opts, async ({ api, out }) => {
  const body = withoutOk(await api.availableNetworks());
  if (out.json) return out.printJson(body);
  out.table(body.networks, [
    { header: 'NETWORK', value: (n) => n.slug },
    { header: 'NAME', value: (n) => n.name },
    { header: 'ID', value: (n) => n.id },
    { header: 'ENVIRONMENTS', value: (n) => n.environment_kinds.join(out.isTTY ? ', ' : ',') },
  ]);
  const limits: string[] = [];
  if (body.network_limit !== null) limits.push(`at most ${body.network_limit} network${body.network_limit === 1 ? '' : 's'}`);
  if (body.allowed_network_slugs.length) limits.push(`only ${body.allowed_network_slugs.join(', ')}`);
  if (limits.length) out.note(`Your plan allows ${limits.join(', ')}.`);
  out.note('Create one: rpcctl endpoints create --name NAME --network SLUG --env SLUG');
});

export const audit: CommandImpl<{ limit: string; action?: string; before?: string }> = (io, opts) => {
  const limit = positiveInt('--limit', opts.limit, 200);
  positiveInt('--before', opts.before);
  return withApi(io, opts, async ({ api, out }) => {
    const r = await api.auditLog({ limit, action: opts.action, before: opts.before });
    if (out.json) return out.printJson(r.entries);
    out.table(r.entries, [
      { header: 'ID', value: (e) => e.audit_id, priority: -2 },
      { header: 'WHEN', value: (e) => out.when(e.created_at), keep: true },
      { header: 'WHO', value: (e) => (e.actor.kind === 'key' ? `key ${e.actor.label}` : e.actor.label), priority: 1 },
      { header: 'ACTION', value: (e) => e.action, keep: true },
      { header: 'TARGET', value: (e) => (e.target.id ? `${e.target.type} ${e.target.id}` : e.target.type), priority: 1 },
      { header: 'CHANGES', value: (e) => (e.changes ? JSON.stringify(e.changes) : '') },
      { header: 'ADDRESS', value: (e) => e.ip ?? '', priority: -1 },
    ], 'No changes recorded yet.');
    if (r.next_before && r.entries.length === limit) out.note(`Older: rpcctl account audit --before ${r.next_before}`);
  });
};

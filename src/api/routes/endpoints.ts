import {
  getEndpointRow, insertEndpointChecked, listEndpointRows, updateEndpointRow, usageReport,
  type AccountRow, type Catalog, type Environment, type CatalogPlan, type EndpointRow,
} from '../../store/index.js';
import { badRequest, JsonBody, notFound } from '../http.js';
import { route, type AppContext, type RouteDef } from '../router.js';
import {
  allowedIpsBody, availableNetworksSchema, createEndpointBody, daysQuery, idParam, okSchema, requestLogQuery, statusBody, updateEndpointBody,
} from '../schemas.js';
import { presentEndpoint } from '../present.js';
import { noChange } from '../audit.js';
import { endpointSchema, requestLogPageSchema, usageSchema } from '../../wire/account.js';
import { z } from 'zod';

const endpointResponse = okSchema.extend({ endpoint: endpointSchema });

const listings = new WeakMap<readonly EndpointRow[], { catalog: Catalog; plan: CatalogPlan | undefined; body: JsonBody }>();

export const endpointRoutes: RouteDef[] = [
  route({
    method: 'GET', path: '/v1/endpoints', operationId: 'listEndpoints', tag: 'Endpoints', summary: 'List the account\'s endpoints',
    response: okSchema.extend({ endpoints: endpointSchema.array() }),
    async handler({ account, app }) {
      const catalog = app.store.catalog;
      const plan = catalog.plan(account.plan_id);
      const rows = await listEndpointRows(app.store, account.id);
      // The rows stay the same object while the store's listing is current: present and
      // serialise them once, not per request.
      const hit = listings.get(rows);
      if (hit && hit.catalog === catalog && hit.plan === plan) return hit.body;
      const body = new JsonBody({ ok: true, endpoints: rows.map((r) => presentEndpoint(r, catalog, app.config, plan)) });
      listings.set(rows, { catalog, plan, body });
      return body;
    },
  }),
  route({
    method: 'GET', path: '/v1/endpoints/available-networks', operationId: 'listAvailableNetworks', tag: 'Endpoints', summary: 'Networks the plan can create endpoints on',
    response: availableNetworksSchema,
    async handler({ account, app }) {
      const catalog = app.store.catalog;
      const plan = catalog.plan(account.plan_id);
      const used = usedNetworkIds(await listEndpointRows(app.store, account.id), catalog);
      const networks = catalog.networks
        .filter((n) => networkAllowed(plan, n.slug) && (!atNetworkLimit(plan, used) || used.has(n.id)))
        .map((n) => ({ id: n.id, uuid: n.uuid, name: n.name, slug: n.slug, sort: n.sort, environment_kinds: n.environments.map((e) => e.slug) }));
      return { ok: true, networks, network_limit: plan?.network_limit ?? null, allowed_network_slugs: plan?.allowed_network_slugs ?? [] };
    },
  }),
  route({
    method: 'POST', path: '/v1/endpoints', operationId: 'createEndpoint', tag: 'Endpoints', summary: 'Create an endpoint (counts against endpoints_limit; its name unique within the account, 409 otherwise)',
    body: createEndpointBody, errors: [400, 409],
    response: endpointResponse,
    audit: {
      action: 'endpoint.create',
      describe: ({ result }) => ({ type: 'endpoint', id: String(result.endpoint.id), changes: { name: result.endpoint.name, network: `${result.endpoint.network_slug}-${result.endpoint.env_slug}` } }),
    },
    async handler({ account, app, body }) {
      const catalog = app.store.catalog;
      const env = resolveEnvironment(catalog, body);
      const plan = catalog.plan(account.plan_id);
      const row = await insertEndpointChecked(
        app.store,
        { accountId: account.id, name: body.name ?? `${env.network.slug}-${env.slug}`, defaultName: body.name === undefined, environmentId: env.id },
        (existing) => checkPlanLimits(plan, env, existing, catalog),
      );
      await app.onEndpointChanged(row.id);
      return { ok: true, endpoint: presentEndpoint(row, catalog, app.config, plan) };
    },
  }),
  route({
    method: 'GET', path: '/v1/endpoints/usage', operationId: 'getEndpointsUsage', tag: 'Endpoints', summary: 'Usage over all endpoints',
    query: daysQuery, errors: [400],
    response: okSchema.extend({ usage: usageSchema }),
    async handler({ account, app, query }) {
      return { ok: true, usage: await usageReport(app.store, { kind: 'endpoints', accountId: account.id }, Number(query.days ?? 30)) };
    },
  }),
  route({
    method: 'GET', path: '/v1/endpoints/{id}', operationId: 'getEndpoint', tag: 'Endpoints', summary: 'One endpoint',
    params: idParam, errors: [400, 404],
    response: endpointResponse,
    async handler({ account, app, params }) {
      return { ok: true, endpoint: present(app, account, await ownEndpoint(app, account, params.id)) };
    },
  }),
  route({
    method: 'GET', path: '/v1/endpoints/{id}/usage', operationId: 'getEndpointUsage', tag: 'Endpoints', summary: 'Usage of one endpoint',
    params: idParam, query: daysQuery, errors: [400, 404],
    response: okSchema.extend({ usage: usageSchema }),
    async handler({ account, app, params, query }) {
      const row = await ownEndpoint(app, account, params.id);
      return { ok: true, usage: await usageReport(app.store, { kind: 'endpoint', accountId: account.id, endpointId: row.id }, Number(query.days ?? 30)) };
    },
  }),
  route({
    method: 'GET', path: '/v1/endpoints/{id}/logs', operationId: 'getEndpointLogs', tag: 'Endpoints',
    summary: 'Recent gateway calls of one endpoint, newest first (this instance\'s, kept in memory: gateway.request_log_size per worker)',
    params: idParam, query: requestLogQuery, errors: [400, 404],
    response: okSchema.extend(requestLogPageSchema.shape),
    async handler({ account, app, params, query }) {
      const row = await ownEndpoint(app, account, params.id);
      const read = await app.requestLog(row.id, {
        limit: Number(query.limit ?? 100), errorsOnly: query.status === 'error', method: query.method, before: query.before, after: query.after,
      });
      return { ok: true, ...read, kept_per_worker: app.config.gateway.request_log_size };
    },
  }),
  route({
    method: 'PATCH', path: '/v1/endpoints/{id}', operationId: 'renameEndpoint', tag: 'Endpoints', summary: 'Rename an endpoint (names are unique within the account: 409 for one in use)',
    params: idParam, body: updateEndpointBody, errors: [400, 404, 409],
    response: endpointResponse,
    audit: { action: 'endpoint.rename', describe: ({ params, body }) => ({ type: 'endpoint', id: params.id, changes: { name: body.name } }) },
    async handler({ account, app, params, body }) {
      const before = await ownEndpoint(app, account, params.id);
      if (before.name === body.name) return noChange({ ok: true, endpoint: present(app, account, before) });
      const row = await updateEndpointRow(app.store, account.id, Number(params.id), { name: body.name });
      if (!row) throw notFound('Endpoint not found');
      return { ok: true, endpoint: present(app, account, row) };
    },
  }),
  route({
    method: 'PATCH', path: '/v1/endpoints/{id}/status', operationId: 'setEndpointStatus', tag: 'Endpoints', summary: 'Pause or resume an endpoint',
    params: idParam, body: statusBody, errors: [400, 404],
    response: endpointResponse,
    audit: {
      action: 'endpoint.status',
      describe: ({ params, body }) => ({ type: 'endpoint', id: params.id, action: body.status === 'paused' ? 'endpoint.pause' : 'endpoint.resume', changes: { status: body.status } }),
    },
    async handler({ account, app, params, body }) {
      // Pausing a paused endpoint changes nothing: answered as a pause, not recorded as one.
      const before = await ownEndpoint(app, account, params.id);
      if (before.status === body.status) return noChange({ ok: true, endpoint: present(app, account, before) });
      const row = await updateEndpointRow(app.store, account.id, Number(params.id), { status: body.status });
      if (!row) throw notFound('Endpoint not found');
      await app.onEndpointChanged(row.id);
      return { ok: true, endpoint: present(app, account, row) };
    },
  }),
  route({
    method: 'PATCH', path: '/v1/endpoints/{id}/allowed-ips', operationId: 'setEndpointAllowedIps', tag: 'Endpoints', summary: 'Replace the endpoint\'s client IP allowlist ([] clears it)',
    params: idParam, body: allowedIpsBody, errors: [400, 404],
    response: endpointResponse,
    audit: { action: 'endpoint.allowlist', describe: ({ params, result }) => ({ type: 'endpoint', id: params.id, changes: { allowed_ips: result.endpoint.allowed_ips } }) },
    async handler({ account, app, params, body }) {
      const unique = [...new Set(body.allowed_ips.map((ip) => ip.trim()))];
      const before = await ownEndpoint(app, account, params.id);
      if (before.allowed_ips === JSON.stringify(unique)) return noChange({ ok: true, endpoint: present(app, account, before) });
      const row = await updateEndpointRow(app.store, account.id, Number(params.id), { allowed_ips: unique });
      if (!row) throw notFound('Endpoint not found');
      await app.onEndpointChanged(row.id);
      return { ok: true, endpoint: present(app, account, row) };
    },
  }),
];

function present(app: AppContext, account: AccountRow, row: EndpointRow) {
  return presentEndpoint(row, app.store.catalog, app.config, app.store.catalog.plan(account.plan_id));
}

/** Another account's endpoint is as absent as one that never existed. */
async function ownEndpoint(app: AppContext, account: AccountRow, id: string): Promise<EndpointRow> {
  const row = await getEndpointRow(app.store, account.id, Number(id));
  if (!row) throw notFound('Endpoint not found');
  return row;
}

function resolveEnvironment(catalog: Catalog, body: z.output<typeof createEndpointBody>): Environment {
  if (body.network_environment_id !== undefined) {
    const env = catalog.environment(body.network_environment_id);
    if (!env) throw badRequest(`network_environment_id: unknown network environment ${body.network_environment_id}`);
    return env;
  }
  const network = body.network_id !== undefined ? catalog.network(body.network_id) : catalog.networkBySlug(body.network_slug!);
  if (!network) {
    throw badRequest(body.network_id !== undefined ? `network_id: unknown network ${body.network_id}` : `network_slug: unknown network "${body.network_slug}"`);
  }
  const env = network.environments.find((e) => e.slug === body.env_slug);
  if (!env) {
    throw badRequest(`env_slug: "${body.env_slug}" is not an environment of ${network.slug} (one of: ${network.environments.map((e) => e.slug).join(', ')})`);
  }
  return env;
}

function networkAllowed(plan: CatalogPlan | undefined, slug: string): boolean {
  return !plan || plan.allowed_network_slugs.length === 0 || plan.allowed_network_slugs.includes(slug);
}

function usedNetworkIds(rows: readonly EndpointRow[], catalog: Catalog): Set<number> {
  const used = new Set<number>();
  for (const r of rows) {
    const env = catalog.environment(r.network_environment_id);
    if (env) used.add(env.network.id);
  }
  return used;
}

function atNetworkLimit(plan: CatalogPlan | undefined, used: Set<number>): boolean {
  return plan?.network_limit != null && used.size >= plan.network_limit;
}

function checkPlanLimits(plan: CatalogPlan | undefined, env: Environment, existing: EndpointRow[], catalog: Catalog): void {
  if (!plan) throw badRequest('Your account has no plan; endpoints cannot be created');
  if (!networkAllowed(plan, env.network.slug)) {
    throw badRequest(`Network "${env.network.slug}" is not available on the ${plan.name} plan (allowed: ${plan.allowed_network_slugs.join(', ')})`);
  }
  if (existing.length >= plan.endpoints_limit) {
    throw badRequest(`Endpoint limit reached: the ${plan.name} plan allows ${plan.endpoints_limit} endpoint${plan.endpoints_limit === 1 ? '' : 's'}`);
  }
  const used = usedNetworkIds(existing, catalog);
  if (!used.has(env.network.id) && atNetworkLimit(plan, used)) {
    throw badRequest(`Network limit reached: the ${plan.name} plan allows endpoints on ${plan.network_limit} network${plan.network_limit === 1 ? '' : 's'}`);
  }
}

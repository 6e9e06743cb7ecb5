import { z } from 'zod';
import { isValidIp } from '../util/ip.js';

/** Request and response shapes of the Public API. Routes validate with these; openapi.json is built from them. */

export const okSchema = z.object({ ok: z.literal(true) });
export const errorSchema = z.object({ ok: z.literal(false), error: z.string() }).meta({ id: 'Error' });

export const planSchema = z.object({
  id: z.number().int(),
  slug: z.string(),
  name: z.string(),
  included_credits: z.number().int(),
  rps_limit: z.number().int().meta({ description: 'requests per second per endpoint' }),
  endpoints_limit: z.number().int(),
  webhook_address_slots: z.number().int(),
}).meta({ id: 'Plan' });

export const accountSchema = okSchema.extend({
  user_id: z.number().int(),
  plan: planSchema.nullable(),
  usage: z.object({
    period: z.string().meta({ description: 'current UTC calendar month, YYYY-MM' }),
    requests: z.number().int(),
    credits_used: z.number().int(),
    credits_included: z.number().int(),
    credits_remaining: z.number().int(),
  }),
}).meta({ id: 'AccountResponse' });

export const endpointSchema = z.object({
  id: z.number().int(),
  uuid: z.string().uuid(),
  name: z.string(),
  status: z.enum(['active', 'paused']),
  network_id: z.number().int(),
  network_name: z.string(),
  network_slug: z.string(),
  network_environment_id: z.number().int(),
  env_slug: z.string(),
  url: z.string().meta({ description: 'public JSON-RPC URL' }),
  rps_limit: z.number().int(),
  plan_id: z.number().int(),
  created_at: z.string().meta({ format: 'date-time' }),
  version: z.string().nullable(),
  block_height: z.number().int().nullable(),
  allowed_ips: z.array(z.string()),
}).meta({ id: 'Endpoint' });

export const usageSchema = z.object({
  days: z.number().int(),
  total_requests: z.number().int(),
  total_credits: z.number().int(),
  series: z.array(z.object({ date: z.string(), requests: z.number().int(), credits: z.number().int() })),
  methods: z.array(z.object({ method: z.string(), requests: z.number().int(), credits: z.number().int() })),
}).meta({ id: 'Usage' });

export const availableNetworksSchema = okSchema.extend({
  networks: z.array(z.object({
    id: z.number().int(),
    uuid: z.string(),
    name: z.string(),
    slug: z.string(),
    sort: z.number().int(),
    environment_kinds: z.array(z.string()),
  })),
  network_limit: z.number().int().nullable(),
  allowed_network_slugs: z.array(z.string()),
});

export const daysQuery = z.object({
  days: z.enum(['7', '30', '90'], { error: 'must be 7, 30 or 90' }).optional()
    .meta({ description: 'window length in days: 7, 30 or 90 (default 30)' }),
});

/** GET /v1/endpoints/{id}/logs. */
export const requestLogQuery = z.object({
  limit: z.string().regex(/^\d+$/, 'must be an integer from 1 to 1000')
    .refine((v) => Number(v) >= 1 && Number(v) <= 1000, 'must be an integer from 1 to 1000').optional()
    .meta({ description: 'calls per page, 1 to 1000 (default 100)' }),
  status: z.enum(['all', 'error'], { error: 'must be all or error' }).optional()
    .meta({ description: 'error: only calls answered with an HTTP error, a JSON-RPC error, or whose client went away (499)' }),
  method: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional()
    .meta({ description: 'only calls of this JSON-RPC method (a batch by its first element), or `GET /path` on a REST network' }),
  before: z.string().regex(/^[0-9a-z]{1,12}-[0-9a-z]{1,12}-\d{1,3}$/, 'must be a call id (the previous next_before)').optional()
    .meta({ description: 'page back: only calls older than this one (the previous next_before)' }),
  after: z.string().regex(/^[0-9a-z]{1,12}(\.[0-9a-z]{1,12}){0,255}$/, 'must be a cursor from a previous answer').optional()
    .meta({ description: 'only calls that came after the read that returned this cursor (following the log)' }),
});

export const requestLogEntrySchema = z.object({
  id: z.string(),
  at: z.string().meta({ description: 'when the request arrived (ISO 8601)' }),
  method: z.string().meta({ description: 'JSON-RPC method (a batch: its first element\'s); `GET /path` on a REST network; empty when the body did not parse' }),
  status: z.number().int().meta({ description: 'HTTP status answered; 499 when the client went away first' }),
  rpc_code: z.number().int().nullable().meta({ description: 'JSON-RPC error code of the answer (a batch: its first error), null when none' }),
  latency_ms: z.number(),
  credits: z.number().int(),
  client_ip: z.string(),
  cached: z.boolean().meta({ description: 'answered from the gateway\'s cache (a batch: every element)' }),
  batch: z.number().int().nullable().meta({ description: 'elements of a batch (one row per batch), null for a single call' }),
});

export const idParam = z.object({
  id: z.string().regex(/^[1-9]\d{0,15}$/, 'must be a positive integer').meta({ description: 'numeric endpoint id (not the UUID)' }),
});

const name = z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(255, 'must be at most 255 characters');
const envSlug = z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(80, 'must be at most 80 characters');

/** PATCH /v1/endpoints/{id}: what may change besides status and allowlist (their own routes). */
export const updateEndpointBody = z.strictObject({ name });

/**
 * Three accepted forms: `network_environment_id`; `network_id` + `env_slug` (the reference
 * contract); `network_slug` + `env_slug` with an optional name (the machine-readable one).
 */
export const createEndpointBody = z.object({
  name: name.optional(),
  network_environment_id: z.number({ error: 'must be an integer' }).int('must be an integer').min(1, 'must be at least 1').optional(),
  network_id: z.number({ error: 'must be an integer' }).int('must be an integer').min(1, 'must be at least 1').optional(),
  network_slug: z.string({ error: 'must be a string' }).min(1).max(80).optional(),
  env_slug: envSlug.optional(),
}).superRefine((b, ctx) => {
  const forms = [b.network_environment_id !== undefined, b.network_id !== undefined, b.network_slug !== undefined].filter(Boolean).length;
  if (forms === 0) {
    ctx.addIssue({ code: 'custom', path: ['network_environment_id'], message: 'provide network_environment_id, or network_id with env_slug' });
  } else if (forms > 1) {
    ctx.addIssue({ code: 'custom', path: ['network_environment_id'], message: 'provide either network_environment_id or network_id with env_slug, not both' });
  } else if ((b.network_id !== undefined || b.network_slug !== undefined) && b.env_slug === undefined) {
    ctx.addIssue({ code: 'custom', path: ['env_slug'], message: `is required with ${b.network_id !== undefined ? 'network_id' : 'network_slug'}` });
  }
  if (b.name === undefined && b.network_slug === undefined) {
    ctx.addIssue({ code: 'custom', path: ['name'], message: 'is required' });
  }
});

export const statusBody = z.object({
  status: z.enum(['active', 'paused'], { error: 'must be "active" or "paused"' }),
});

export const allowedIpsBody = z.object({
  allowed_ips: z.array(
    z.string({ error: 'must be a string' })
      .max(45, 'must be at most 45 characters')
      .refine(isValidIp, { message: 'must be an IPv4 or IPv6 address' }),
    { error: 'is required and must be an array of IP addresses' },
  ).max(50, 'must have at most 50 entries'),
});

export const auditQuery = z.object({
  limit: z.string().regex(/^\d+$/, 'must be an integer from 1 to 200')
    .refine((v) => Number(v) >= 1 && Number(v) <= 200, 'must be an integer from 1 to 200').optional()
    .meta({ description: 'entries per page, 1 to 200 (default 50)' }),
  before: z.string().regex(/^[1-9]\d{0,14}$/, 'must be an id (a positive integer)').optional()
    .meta({ description: 'audit id: page back from here (the previous next_before)' }),
  action: z.string().regex(/^[a-z_]+(\.[a-z_]*)?$/, 'must be an action such as endpoint.create, or a target such as endpoint.').optional()
    .meta({ description: 'only this action (endpoint.create), or every action on a target when it ends in a dot (endpoint.)' }),
});

export const auditEntrySchema = z.object({
  audit_id: z.string(),
  created_at: z.string(),
  actor: z.object({
    kind: z.enum(['login', 'key', 'admin']).meta({ description: 'a cabinet login, an API key, or the operator (rpcctl admin)' }),
    id: z.string(),
    label: z.string().meta({ description: "the login's e-mail, the key's prefix, or 'rpcctl admin'" }),
  }),
  action: z.string().meta({ description: 'what was done: endpoint.create, key.revoke, webhook.set, ...' }),
  target: z.object({ type: z.string(), id: z.string().nullable() }),
  changes: z.record(z.string(), z.unknown()).nullable().meta({ description: 'the changed fields (never a secret)' }),
  ip: z.string().nullable().meta({ description: "the client's address (null for the operator)" }),
}).meta({ id: 'AuditEntry' });

import { z } from 'zod';
import { isValidIp } from '../util/ip.js';
import { planSchema } from '../wire/account.js';

/**
 * Request and response shapes of the Public API that only the server needs. Routes validate with
 * these; openapi.json is built from them. The shapes the published client shares are in wire/.
 */


export const okSchema = z.object({ ok: z.literal(true) });

/**
 * Marks a parameter that takes an id the answers carry as a string (`delivery_id`, `next_before`,
 * `next_after`): openapi.json declares it an integer or a string of digits, so a generated client
 * passes an answer's id back as it came (orval's `redeliver(list().deliveries[0].delivery_id)`).
 */
export const ID_TEXT = 'x-rpcctl-id-text';

/** A positive integer id sent as text in a path or query, up to `digits` digits. */
export const idText = (description: string, digits = 15) =>
  z.string().regex(new RegExp(`^[1-9]\\d{0,${digits - 1}}$`), 'must be an id (a positive integer)').meta({ description, [ID_TEXT]: true });
export const errorSchema = z.object({ ok: z.literal(false), error: z.string() }).meta({ id: 'Error' });

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
  before: idText('audit id: page back from here (the previous next_before)').optional(),
  action: z.string().regex(/^[a-z_]+(\.[a-z_]*)?$/, 'must be an action such as endpoint.create, or a target such as endpoint.').optional()
    .meta({ description: 'only this action (endpoint.create), or every action on a target when it ends in a dot (endpoint.)' }),
});


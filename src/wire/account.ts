import { z } from 'zod';

// The account, endpoint, usage, request-log and audit shapes of the Public API: the routes
// validate and document with these schemas (openapi.json), and the published client's types are
// inferred from them. Nothing here imports the rest of src/ (docs/architecture.md, "Wire shapes").

/** A plan as the account and the cabinet show it. */
export const planSchema = z.object({
  id: z.number().int(),
  slug: z.string(),
  name: z.string(),
  included_credits: z.number().int(),
  rps_limit: z.number().int().meta({ description: 'requests per second per endpoint' }),
  endpoints_limit: z.number().int(),
  webhook_address_slots: z.number().int(),
}).meta({ id: 'Plan' });
export type Plan = z.output<typeof planSchema>;

/** An endpoint: its network, limits and public JSON-RPC URL. */
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
export type Endpoint = z.output<typeof endpointSchema>;
export type EndpointStatus = Endpoint['status'];

/** Requests and credits per day and per method over a window. */
export const usageSchema = z.object({
  days: z.number().int(),
  total_requests: z.number().int(),
  total_credits: z.number().int(),
  series: z.array(z.object({ date: z.string(), requests: z.number().int(), credits: z.number().int() })),
  methods: z.array(z.object({ method: z.string(), requests: z.number().int(), credits: z.number().int() })),
}).meta({ id: 'Usage' });
export type Usage = z.output<typeof usageSchema>;

/** One gateway call in an endpoint's request log (`GET /v1/endpoints/{id}/logs`). */
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
export type RequestLogEntry = z.output<typeof requestLogEntrySchema>;

/** A page of the request log (the answer adds `ok`). */
export const requestLogPageSchema = z.object({
  calls: z.array(requestLogEntrySchema),
  next_before: z.string().nullable(),
  cursor: z.string().meta({ description: 'pass as after to get only newer calls' }),
  kept_per_worker: z.number().int().meta({ description: 'calls kept per endpoint in each gateway worker (0: request logs are off)' }),
});
export type RequestLogPage = { ok: true } & z.output<typeof requestLogPageSchema>;

/** One change in the audit log (`GET /v1/account/audit`). */
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
export type AuditEntry = z.output<typeof auditEntrySchema>;

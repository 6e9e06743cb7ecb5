import { z } from 'zod';
import type { Config } from '../config/index.js';
import { neededRole, type RouteDef } from './router.js';
import { AUTH_REASONS } from './auth.js';
import { errorSchema, ID_TEXT } from './schemas.js';

const STATUS_TEXT: Record<number, string> = {
  400: 'Validation or business error', 401: 'Authentication or signature failure',
  403: 'IP address not allowed, or the role of the key\'s maker does not allow this call', 404: 'Not found', 413: 'Request body too large',
  429: 'Rate limit exceeded (see Retry-After)', 500: 'Server error',
};

/**
 * Query and path values arrive as text and are validated as digits; the document declares
 * what a client sends: integers (an enum of integers for `days`), so generated clients take
 * numbers, with the bounds the validator enforces. A union (`after`: an id or `latest`)
 * becomes a oneOf of its branches, so a generated client can send either.
 */
function paramSchema(field: z.ZodType, toSchema: (s: z.ZodType) => Record<string, unknown>): Record<string, unknown> {
  const schema = toSchema(field);
  const inner = field instanceof z.ZodOptional ? (field.unwrap() as z.ZodType) : field;
  if (inner instanceof z.ZodUnion) {
    const { anyOf: _anyOf, ...rest } = schema;
    const branches = (inner.options as z.ZodType[]).map((o) => paramSchema(o, toSchema));
    return { ...rest, oneOf: branches.flatMap((b) => (Array.isArray(b.oneOf) ? b.oneOf as unknown[] : [b])) };
  }
  const { type, pattern, enum: values, [ID_TEXT]: idText, ...rest } = schema;
  if (Array.isArray(values) && values.length > 0 && values.every((v) => typeof v === 'string' && /^-?\d+$/.test(v))) {
    return { ...rest, type: 'integer', enum: values.map(Number) };
  }
  if (type === 'string' && typeof pattern === 'string') {
    const bounds = acceptedIntegers(inner);
    // An id the answers carry as text is taken as text too, so it goes back as it came.
    if (bounds && idText === true) return { ...rest, oneOf: [{ type: 'integer', ...bounds }, { type: 'string', pattern }] };
    if (bounds) return { ...rest, type: 'integer', ...bounds };
  }
  return schema;
}

/**
 * The range of integers a text validator takes, found by asking it (so a refine's bounds, which
 * JSON Schema cannot see, are documented as enforced); undefined when it takes anything but
 * digits. Assumes one contiguous range, which every integer parameter is.
 */
function acceptedIntegers(field: z.ZodType): { minimum: number; maximum?: number } | undefined {
  const ok = (n: number) => field.safeParse(String(n)).success;
  if (['a', '-1', '1.5', '1e3', ' 1'].some((v) => field.safeParse(v).success)) return undefined;
  let inside = 1;
  while (!ok(inside)) {
    inside *= 10;
    if (inside > Number.MAX_SAFE_INTEGER) return undefined;
  }
  // The accepted value next to a rejected one, between an accepted `good` and a rejected `bad`.
  const boundary = (good: number, bad: number) => {
    while (Math.abs(bad - good) > 1) {
      const mid = Math.floor((good + bad) / 2);
      if (ok(mid)) good = mid;
      else bad = mid;
    }
    return good;
  };
  const minimum = ok(0) ? 0 : boundary(inside, 0);
  let above = inside;
  while (ok(above)) {
    if (above === Number.MAX_SAFE_INTEGER) return { minimum };
    above = Math.min(above * 2, Number.MAX_SAFE_INTEGER);
  }
  return { minimum, maximum: boundary(inside, above) };
}

/** The header that says why authentication failed (the `error` strings are the spec's, and one covers two causes). */
function reasonHeader(status: 401 | 403): object {
  return {
    description: 'Why the request was refused. `replayed`: this exact signed POST/PUT/PATCH/DELETE was already accepted once (the `error` is still `Invalid signature.`): sign it again with a fresh X-Timestamp, the signature is not wrong. `bad_signature`: the signature does not match (check the secret and the signed string). `expired_timestamp`: X-Timestamp is more than 300 s from the server\'s clock.',
    schema: { type: 'string', enum: AUTH_REASONS.filter((r) => (r === 'ip_not_allowed') === (status === 403)) },
  };
}

/** The OpenAPI 3.1 document of the routes as implemented, from the schemas that validate them. */
export function buildOpenApi(routes: RouteDef[], config: Config): object {
  const components: Record<string, unknown> = {};
  // Schemas with a meta id (Endpoint, Usage, Plan, Error) become shared components.
  const toSchema = (schema: z.ZodType, io: 'input' | 'output') => {
    const generated = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any', reused: 'inline' });
    const json = JSON.parse(JSON.stringify(generated).replaceAll('"#/$defs/', '"#/components/schemas/')) as Record<string, unknown>;
    const defs = json.$defs as Record<string, unknown> | undefined;
    if (defs) Object.assign(components, defs);
    delete json.$defs;
    delete json.$schema;
    return json;
  };

  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const parameters: unknown[] = [];
    for (const [where, schema] of [['path', r.params], ['query', r.query]] as const) {
      if (!schema) continue;
      const shape = (schema as z.ZodObject).shape as Record<string, z.ZodType>;
      for (const [name, field] of Object.entries(shape)) {
        parameters.push({ name, in: where, required: where === 'path' || !field.safeParse(undefined).success, schema: paramSchema(field, (x) => toSchema(x, 'input')) });
      }
    }
    const responses: Record<string, unknown> = {
      200: { description: 'Success', content: { 'application/json': { schema: toSchema(r.response, 'output') } } },
    };
    for (const status of new Set([...(r.errors ?? []), 401, 403, 429, 500])) {
      responses[status] = {
        description: STATUS_TEXT[status] ?? 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        ...(status === 401 || status === 403 ? { headers: { 'X-Rpcctl-Reason': reasonHeader(status) } } : {}),
      };
    }
    (paths[r.path] ??= {})[r.method.toLowerCase()] = {
      operationId: r.operationId,
      summary: r.summary,
      tags: [r.tag],
      ...(parameters.length ? { parameters } : {}),
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: toSchema(r.body, 'input') } } } } : {}),
      responses,
      security: [{ apiKey: [], timestamp: [], signature: [] }],
      // What a change is recorded as in the audit log (GET /v1/account/audit).
      ...(r.audit ? { 'x-audit-action': r.audit.action } : {}),
      // A key acts with the role of the cabinet member who made it (owner when none did).
      'x-rpcctl-role': neededRole(r),
    };
  }
  (paths['/v1/openapi.json'] ??= {}).get = {
    operationId: 'getOpenApiDocument', summary: 'This document', tags: ['Meta'], security: [],
    responses: { 200: { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } } },
  };
  // The schema has a meta id: generating it files it under components itself (as Error).
  toSchema(errorSchema, 'output');

  return {
    openapi: '3.1.0',
    info: {
      title: 'rpcctl Public API',
      version: '1.0',
      description: 'Signed merchant API. Every request carries X-Api-Key, X-Timestamp and X-Signature: lowercase hex HMAC-SHA256, keyed with the API secret, of "{timestamp}\\n{METHOD}\\n{path}\\n{sha256hex(body)}".',
    },
    servers: [{ url: `http://${config.api.host}:${config.api.port}` }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
        timestamp: { type: 'apiKey', in: 'header', name: 'X-Timestamp' },
        signature: { type: 'apiKey', in: 'header', name: 'X-Signature' },
      },
    },
  };
}

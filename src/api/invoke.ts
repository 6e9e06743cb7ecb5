import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import type { AccountRow, Role } from '../store/index.js';
import { formatIssues } from '../util/zod.js';
import { clientError, HttpError, JsonBody } from './http.js';
import { checkRole, type AppContext, type Router } from './router.js';
import { runRoute, type AuditWho } from './audit.js';

export function validate(schema: z.ZodType | undefined, value: unknown): unknown {
  if (!schema) return value;
  const result = schema.safeParse(value);
  if (!result.success) throw new HttpError(400, formatIssues(result.error.issues));
  return result.data;
}

/**
 * Runs a Public API route for an account that is already authenticated some other way (a
 * cabinet session): the same schemas, limits and handler as a signed request, so the two
 * front ends cannot disagree. A client mistake is thrown as the HttpError the API would answer
 * (STATUS_BY_CODE); a fault is thrown as it is. The member's role is checked as a key's would be.
 */
export async function invokeRoute<T = Record<string, unknown>>(
  router: Router,
  app: AppContext,
  account: AccountRow,
  role: Role,
  req: IncomingMessage,
  /** The cabinet's login and the client's address: a change is recorded in the audit log as theirs. */
  who: AuditWho,
  method: string,
  path: string,
  input: { query?: Record<string, string>; body?: unknown } = {},
): Promise<T> {
  const match = router.match(method, path);
  if (match.kind !== 'found') throw new HttpError(404, 'Not found');
  const def = match.def;
  checkRole(def, role, 'member');
  const params = validate(def.params, match.params);
  const query = validate(def.query, input.query ?? {});
  const body = def.body ? validate(def.body, input.body ?? {}) : undefined;
  // No API key took part; handlers act on the account alone.
  const key = { id: '', accountId: account.id, secret: '', allowedIps: [], role, member: who.actor.kind === 'login' ? Number(who.actor.id) : null };
  const result = await runRoute(def, { params, query, body, key, account, req, app }, who).catch((err: unknown) => {
    throw clientError(err) ?? err;
  });
  // A copy of a shared body: the caller may do as it likes with it.
  return (result instanceof JsonBody ? JSON.parse(result.bytes.toString()) : result) as T;
}

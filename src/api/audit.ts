import type { Counter } from '../metrics/index.js';
import { recordAudit, type AuditActor, type AuditChange, type Store } from '../store/index.js';
import type { AuditCall, HandlerContext, RouteAudit, RouteDef } from './router.js';

/** Who is behind a call and from which address: the API's key, or the cabinet's login. */
export interface AuditWho {
  actor: AuditActor;
  ip: string;
}

/** The actor of a signed API request: the key's listed prefix, never more of it. */
export function keyActor(prefix: string): AuditActor {
  return { kind: 'key', id: prefix, label: prefix };
}

/**
 * The audit writer handed to route handlers and cabinet pages. The entry is written after the
 * change succeeded, not in its transaction: the changes are made by many repositories (and by
 * the payments engine), and an answer of 500 after a committed change would invite a retry that
 * makes it twice. So a failed write never fails the user's change, and is never silent: it is
 * logged (action and target, no fields) and counted in `rpcctl_audit_write_failures_total`.
 */
export function auditWriter(store: Store, log: (line: string) => void, failures?: Counter): (entry: AuditChange) => Promise<void> {
  return async (entry) => {
    try {
      await recordAudit(store, entry);
    } catch (err) {
      failures?.inc();
      log(`audit: could not record ${entry.action} on ${entry.target.type} ${entry.target.id ?? ''} of account ${entry.accountId}: ${(err as Error)?.message ?? String(err)}`);
    }
  };
}

const unchanged = new WeakSet<object>();

/**
 * A handler's answer for a call that changed nothing (pausing a paused endpoint, cancelling a
 * cancelled order): answered as usual, not recorded. The audit log lists changes that happened.
 */
export function noChange<T extends object>(result: T): T {
  unchanged.add(result);
  return result;
}

/**
 * Runs a route's handler and, when it changed something, records it: the one place the API
 * server and the cabinet's `invokeRoute` run handlers, so a new changing route is recorded once
 * it declares its `audit` (test/audit.test.ts fails on one that does not).
 */
export async function runRoute(def: RouteDef, ctx: HandlerContext<unknown, unknown, unknown>, who: AuditWho): Promise<object> {
  const result = await def.handler(ctx);
  if (def.audit && !unchanged.has(result)) {
    const what = describe(def.audit, { params: ctx.params, body: ctx.body, result });
    if (what) {
      await ctx.app.audit({
        accountId: ctx.account.id, actor: who.actor, ip: who.ip, action: what.action ?? def.audit.action,
        target: { type: what.type, id: what.id ?? null }, changes: what.changes,
      });
    }
  }
  return result;
}

/**
 * The route's account of its call. A describe that throws (an answer of an unexpected shape)
 * must not turn a change that is made into a 500: the entry is kept, without its details.
 */
function describe(audit: RouteAudit, call: AuditCall<unknown, unknown>): ReturnType<RouteAudit['describe']> {
  try {
    return audit.describe(call);
  } catch {
    return { type: audit.action.split('.')[0]!, changes: { details: 'not recorded' } };
  }
}

/** A URL as an audit entry keeps it: scheme, host and port; its path and query may carry a token. */
export function urlOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

import type { AuditEntry } from '../wire/account.js';
import type { Store } from './store.js';

/**
 * Who made a change: a cabinet login (label: its e-mail), an API key (label: its listed prefix)
 * or the operator's `rpcctl admin` (label: 'rpcctl admin').
 */
export interface AuditActor {
  kind: 'login' | 'key' | 'admin';
  id: string;
  label: string;
}

/** One change to record. `changes` holds the changed fields worth reading later, never a secret. */
export interface AuditChange {
  accountId: number;
  actor: AuditActor;
  /** `<target>.<verb>`: `endpoint.create`, `key.revoke`, `webhook.set`. */
  action: string;
  target: { type: string; id?: string | null };
  changes?: Record<string, unknown> | null;
  /** The client's address as the API's limits see it (trusted proxies respected); null for the operator. */
  ip?: string | null;
}

/** The changes column is for a few fields; a larger object is cut to its keys, never to a half JSON. */
const MAX_CHANGES_BYTES = 2048;

/**
 * The one writer of `audit_log`. Throws when the row cannot be written: the caller decides
 * what a failed record means (the API and the cabinet log and count it, see api/audit.ts).
 */
export async function recordAudit(store: Store, entry: AuditChange, now = new Date()): Promise<void> {
  await store.db.insertInto('audit_log').values({
    account_id: entry.accountId,
    created_at: now.toISOString(),
    actor_kind: entry.actor.kind,
    actor_id: entry.actor.id,
    actor_label: entry.actor.label,
    action: entry.action,
    target_type: entry.target.type,
    target_id: entry.target.id ?? null,
    changes: changesText(entry.changes),
    ip: entry.ip ?? null,
  }).execute();
}

function changesText(changes: Record<string, unknown> | null | undefined): string | null {
  if (!changes || Object.keys(changes).length === 0) return null;
  const text = JSON.stringify(changes);
  return text.length <= MAX_CHANGES_BYTES ? text : JSON.stringify({ fields: Object.keys(changes) });
}

export interface AuditQuery {
  accountId: number;
  limit: number;
  /** Entries older than this id (the previous page's `next_before`). */
  before?: number;
  /** Only this action (`endpoint.create`), or every action of a target when it ends in `.` (`endpoint.`). */
  action?: string;
}

/** Newest first; `next_before` is set while a full page came back. */
export async function listAudit(store: Store, q: AuditQuery): Promise<{ entries: AuditEntry[]; next_before: string | null }> {
  let query = store.db.selectFrom('audit_log').selectAll().where('account_id', '=', q.accountId);
  if (q.before !== undefined) query = query.where('id', '<', q.before);
  if (q.action !== undefined) {
    query = q.action.endsWith('.') ? query.where('action', 'like', `${q.action.replace(/[%_\\]/g, '')}%`) : query.where('action', '=', q.action);
  }
  const rows = await query.orderBy('id', 'desc').limit(q.limit).execute();
  return {
    entries: rows.map((r) => ({
      audit_id: String(r.id),
      created_at: r.created_at,
      actor: { kind: r.actor_kind as AuditActor['kind'], id: r.actor_id, label: r.actor_label },
      action: r.action,
      target: { type: r.target_type, id: r.target_id },
      changes: r.changes === null ? null : (JSON.parse(r.changes) as Record<string, unknown>),
      ip: r.ip,
    })),
    next_before: rows.length === q.limit ? String(rows[rows.length - 1]!.id) : null,
  };
}

/** The distinct actions an account has entries for (the cabinet's filter), sorted. */
export async function auditActions(store: Store, accountId: number): Promise<string[]> {
  const rows = await store.db.selectFrom('audit_log').select('action').distinct().where('account_id', '=', accountId).orderBy('action').execute();
  return rows.map((r) => r.action);
}

/** Deletes up to `limit` entries older than `cutoff` (ISO time), oldest first: the retention job's batch. */
export async function pruneAudit(store: Store, cutoff: string, limit: number): Promise<number> {
  const rows = await store.db.selectFrom('audit_log').select('id').where('created_at', '<', cutoff)
    .orderBy('created_at').orderBy('id').limit(limit).execute();
  if (rows.length === 0) return 0;
  await store.db.deleteFrom('audit_log').where('id', 'in', rows.map((r) => r.id)).execute();
  return rows.length;
}

import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Store } from '../store/index.js';
import { sha256, type Login } from './credentials.js';

export const SESSION_COOKIE = 'rpcctl_session';

export interface SessionLimits {
  /** Signed out after this long without a request. */
  idleMs: number;
  /** Signed out this long after sign-in, however active. */
  absoluteMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { idleMs: 2 * 3600_000, absoluteMs: 24 * 3600_000 };

export interface Session extends Login {
  idHash: string;
  csrfToken: string;
  createdAt: number;
  lastSeenAt: number;
}

/** Writes of last_seen_at are coalesced: one per session per minute is enough for idle expiry. */
const TOUCH_EVERY_MS = 60_000;

export class Sessions {
  readonly #store: Store;
  readonly limits: SessionLimits;

  constructor(store: Store, limits: SessionLimits) {
    this.#store = store;
    this.limits = limits;
  }

  /** Starts a session; the returned id goes into the cookie and nowhere else. */
  async create(login: Login, userAgent: string | undefined, nowMs = Date.now()): Promise<{ id: string; session: Session }> {
    const id = randomBytes(32).toString('base64url');
    const session = { idHash: sha256(id), ...login, csrfToken: randomBytes(24).toString('base64url'), createdAt: nowMs, lastSeenAt: nowMs };
    await this.#store.db.insertInto('cabinet_sessions').values({
      id_hash: session.idHash, account_id: login.accountId, member_id: login.memberId, csrf_token: session.csrfToken, created_at: nowMs, last_seen_at: nowMs,
      user_agent: userAgent?.slice(0, 200) ?? null,
    }).execute();
    // Old sessions are swept when new ones start: the table stays small without a timer.
    await this.#store.db.deleteFrom('cabinet_sessions')
      .where((eb) => eb.or([eb('last_seen_at', '<', nowMs - this.limits.idleMs), eb('created_at', '<', nowMs - this.limits.absoluteMs)]))
      .execute();
    return { id, session };
  }

  /** The live session of a cookie value, or undefined (expired ones are deleted). */
  async find(id: string | undefined, nowMs = Date.now()): Promise<Session | undefined> {
    if (!id || id.length > 100) return undefined;
    const idHash = sha256(id);
    const row = await this.#store.db.selectFrom('cabinet_sessions').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
    if (!row) return undefined;
    const createdAt = Number(row.created_at);
    const lastSeenAt = Number(row.last_seen_at);
    if (nowMs - lastSeenAt > this.limits.idleMs || nowMs - createdAt > this.limits.absoluteMs) {
      await this.end(idHash);
      return undefined;
    }
    if (nowMs - lastSeenAt > TOUCH_EVERY_MS) {
      await this.#store.db.updateTable('cabinet_sessions').set({ last_seen_at: nowMs }).where('id_hash', '=', idHash).execute();
    }
    return { idHash, accountId: row.account_id, memberId: row.member_id, csrfToken: row.csrf_token, createdAt, lastSeenAt };
  }

  /** Every session of the member but `keep`; returns how many ended. */
  async endOthers(memberId: number, keep: string): Promise<number> {
    const res = await this.#store.db.deleteFrom('cabinet_sessions').where('member_id', '=', memberId).where('id_hash', '!=', keep).executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  async count(memberId: number): Promise<number> {
    const row = await this.#store.db.selectFrom('cabinet_sessions').select((eb) => eb.fn.countAll<number>().as('n')).where('member_id', '=', memberId).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async end(idHash: string): Promise<void> {
    await this.#store.db.deleteFrom('cabinet_sessions').where('id_hash', '=', idHash).execute();
  }
}

export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function sessionCookie(id: string, secure: boolean, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`;
}

export function tokensEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

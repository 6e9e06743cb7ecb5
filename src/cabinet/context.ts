import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppContext, Router } from '../api/router.js';
import type { KeyUseRecorder } from '../api/key-use.js';
import type { Config } from '../config/index.js';
import type { AccountRow, Member, Role, Store } from '../store/index.js';
import type { Assets } from './assets.js';
import type { Html } from './html.js';
import type { Session, Sessions } from './sessions.js';

/** What every signed-in page handler gets. */
export interface PageContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  params: Record<string, string>;
  /** The submitted form of a POST (urlencoded); empty for GET. */
  form: URLSearchParams;
  account: AccountRow;
  /** The signed-in member: their e-mail and role. */
  member: Member;
  email: string;
  session: Session;
  /** Whether the member's role is `role` or above: pages show only the actions it allows. */
  can(role: Role): boolean;
  core: CabinetCore;
  /** Runs a Public API route as this account: the API's validation, limits and messages. */
  api<T = Record<string, unknown>>(method: string, path: string, input?: { query?: Record<string, string>; body?: unknown }): Promise<T>;
  /**
   * Records a change this page made itself (not through `api`, whose routes record their own)
   * in the audit log, as this login from this address. Never throws.
   */
  audit(action: string, target: { type: string; id?: string | null }, changes?: Record<string, unknown>): Promise<void>;
  /** Sends a full page inside the layout. */
  page(opts: { title: string; nav: string; body: Html; status?: number }): void;
  /** After a successful POST: 303 to a page that shows `flash` once. */
  redirect(to: string, flash?: string): void;
  /** A piece of markup for htmx to swap in. */
  fragment(body: Html, status?: number): void;
  /** The message shown once after a redirect, if any. */
  flash: string | undefined;
}

export interface CabinetCore {
  store: Store;
  config: Config;
  router: Router;
  app: AppContext;
  assets: Assets;
  keyUse: KeyUseRecorder;
  sessions: Sessions;
  /** Counts a password check against `key` (per-minute limit); seconds to wait, or 0. */
  throttlePassword(key: string): Promise<number>;
}

export type PageHandler = (ctx: PageContext) => Promise<void>;

export interface PageRoute {
  method: 'GET' | 'POST';
  /** `/endpoints/{id}`: a `{name}` segment captures one path segment. */
  path: string;
  /**
   * How a POST's change reaches the audit log: `api` (it changes only through `ctx.api`, whose
   * routes record themselves), `page` (it calls `ctx.audit`), `none` (it changes nothing of the
   * account: a reveal). test/audit.test.ts fails on a POST that does not say.
   */
  audit?: 'api' | 'page' | 'none';
  handler: PageHandler;
  /**
   * The least role allowed (refused with a 403 page before the handler runs): by default any
   * member may view (GET) and a developer may act (POST); pages that call the Public API are
   * held to its routes' roles as well.
   */
  role?: Role;
}

export function neededPageRole(route: Pick<PageRoute, 'method' | 'role'>): Role {
  return route.role ?? (route.method === 'GET' ? 'viewer' : 'developer');
}

/**
 * A feature's pages (Address Watch, Webhooks, Payments): a nav entry and its routes, served with
 * the same session, CSRF checks and layout as the core pages. serve/ hands them in, so the
 * cabinet imports no feature.
 */
export interface CabinetSection {
  /** Its entry in the main nav; none for a section not yet linked from it (its pages open by address). */
  nav?: { href: string; label: string; id: string };
  routes: PageRoute[];
  /** Pages anyone may open, without a session (the payments' checkout page): matched before sign-in. */
  open?: OpenPageRoute[];
}

/** What a page open to anyone gets: the request, its client address, the static files. No account. */
export interface OpenPageContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  params: Record<string, string>;
  /** The client's address as the API's limits see it (X-Forwarded-For from a trusted proxy). */
  ip: string;
  assets: Assets;
}

export interface OpenPageRoute {
  /** POST: a form or JSON anyone with the link may send (a refund link's address); its handler reads the body. */
  method: 'GET' | 'POST';
  path: string;
  handler(ctx: OpenPageContext): Promise<void>;
}

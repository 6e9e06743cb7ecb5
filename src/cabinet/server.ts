import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from '../api/http.js';
import { invokeRoute } from '../api/invoke.js';
import { getAccount, getMember, roleAllows, type AuditActor, type Member } from '../store/index.js';
import { BodyTooLargeError } from '../util/body.js';
import { clientIp } from '../util/ip.js';
import { neededPageRole, type PageContext, type PageRoute } from './context.js';
import { crossSite, csrfOk, readForm } from './forms.js';
import { html } from './html.js';
import { layout } from './layout.js';
import { decodeFlash, errorPage, FLASH_COOKIE, flashCookie, redirect, SECURITY_HEADERS, send } from './respond.js';
import { openShell, type CabinetOptions, type Shell } from './shell.js';
import { handleJoin } from './join.js';
import { handleSignIn } from './sign-in.js';
import { mustEnrol } from './two-factor.js';
import { clearedSessionCookie, readCookie, SESSION_COOKIE, type Session, type Sessions } from './sessions.js';

export type { CabinetOptions } from './shell.js';

export interface Cabinet {
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  sessions: Sessions;
}

const STALE_FORM = 'The form was stale or forged (CSRF token missing or wrong). Reload the page and try again.';

export function createCabinet(opts: CabinetOptions): Cabinet {
  const shell = openShell(opts);
  const log = opts.log ?? (() => {});
  return {
    sessions: shell.sessions,
    async handle(req, res) {
      try {
        await handle(shell, req, res);
      } catch (err) {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        // A writeHead that threw (a header value it refused) has already set its reason phrase.
        res.statusMessage = '';
        if (err instanceof BodyTooLargeError) return errorPage(res, shell.assets, 413, 'Too large', 'The form was too large.');
        if (req.destroyed || (err as NodeJS.ErrnoException)?.code === 'ECONNRESET') return;
        log(`cabinet: ${req.method} ${(req.url ?? '').split('?')[0]} failed: ${(err as Error)?.stack ?? String(err)}`);
        errorPage(res, shell.assets, 500, 'Something went wrong', 'The server could not finish this request. It has been logged.');
      }
    },
  };
}

/** One request, step by step: open paths, sign-in, sign-out, the page's route, the session, the page. */
async function handle(shell: Shell, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://cabinet.invalid');
  const path = url.pathname;
  const method = req.method ?? 'GET';
  if (answerOpenPath(shell, req, res, path, method)) return;
  const open = method === 'GET' || method === 'HEAD' || method === 'POST' ? shell.openPages.match(method === 'POST' ? 'POST' : 'GET', path) : undefined;
  if (open?.kind === 'found') {
    if (method !== 'POST') req.resume();
    return open.def.handler({ req, res, url, params: open.params, ip: clientIp(req, shell.trusted), assets: shell.assets });
  }
  if (await handleSignIn(shell, req, res, path, method, clientIp(req, shell.trusted))) return;
  if (await handleJoin(shell, req, res, path, method, clientIp(req, shell.trusted))) return;

  const cookie = readCookie(req, SESSION_COOKIE);
  const session = await shell.sessions.find(cookie);
  if (path === '/logout' && method === 'POST') return signOut(shell, req, res, session);

  const page = findPage(shell, req, res, method, path);
  if (!page) return;
  const account = session && (await getAccount(shell.opts.store, session.accountId));
  const member = session && (await getMember(shell.opts.store, session.memberId));
  if (!session || !account || member?.accountId !== account.id) return sendToSignIn(shell, req, res, url, cookie);
  if (!path.startsWith('/account/two-factor') && (await mustEnrol(shell.opts.store, session))) return sendToEnrolment(shell, req, res);
  const form = method === 'POST' ? await readForm(req, shell.opts.config.api.body_timeout_ms) : new URLSearchParams();
  if (method === 'POST' && !csrfOk(req, form, session)) return errorPage(res, shell.assets, 403, 'Forbidden', STALE_FORM);
  const needed = neededPageRole(page.route);
  if (!roleAllows(member.role, needed)) return refuseRole(shell, req, res, member, needed);
  const ctx = pageContext(shell, { req, res, url, params: page.params, form, account, session, member });
  await runPage(shell, page.route, ctx);
}

/** Assets, the favicon and the cross-site refusal: answered before any session is read. */
function answerOpenPath(shell: Shell, req: IncomingMessage, res: ServerResponse, path: string, method: string): boolean {
  if (path.startsWith('/static/') && (method === 'GET' || method === 'HEAD')) {
    req.resume();
    if (!shell.assets.serve(path, res)) errorPage(res, shell.assets, 404, 'Not found', 'There is no such file.');
    return true;
  }
  if (path === '/favicon.ico') {
    req.resume();
    res.writeHead(301, { location: shell.assets.url('favicon.svg') }).end();
    return true;
  }
  if (method !== 'GET' && method !== 'HEAD' && crossSite(req)) {
    req.resume();
    errorPage(res, shell.assets, 403, 'Forbidden', 'This request came from another site and was refused.');
    return true;
  }
  return false;
}

async function signOut(shell: Shell, req: IncomingMessage, res: ServerResponse, session: Session | undefined): Promise<void> {
  const form = await readForm(req, shell.opts.config.api.body_timeout_ms);
  if (session && !csrfOk(req, form, session)) return errorPage(res, shell.assets, 403, 'Forbidden', STALE_FORM);
  if (session) await shell.sessions.end(session.idHash);
  return redirect(res, '/login', [clearedSessionCookie(shell.isSecure(req))]);
}

/** The page for this method and path, or undefined once a 404 or 405 is sent. */
function findPage(shell: Shell, req: IncomingMessage, res: ServerResponse, method: string, path: string): { route: PageRoute; params: Record<string, string> } | undefined {
  // HEAD is GET without the body (Node leaves the body out of the answer).
  const found = shell.pages.match(method === 'HEAD' ? 'GET' : method, path);
  if (found.kind === 'found') return { route: found.def, params: found.params };
  req.resume();
  if (found.kind === 'not-found') errorPage(res, shell.assets, 404, 'Not found', 'There is no such page.');
  else errorPage(res, shell.assets, 405, 'Method not allowed', `${method} is not allowed here.`);
  return undefined;
}

/** No session (or its account is gone): a page view goes to the sign-in page and comes back after. */
function sendToSignIn(shell: Shell, req: IncomingMessage, res: ServerResponse, url: URL, cookie: string | undefined): void {
  req.resume();
  if ((req.method ?? 'GET') !== 'GET') return errorPage(res, shell.assets, 403, 'Signed out', 'Your session has ended. Sign in again, then repeat the change.');
  const next = url.pathname + url.search;
  const headers = cookie ? { 'set-cookie': [clearedSessionCookie(shell.isSecure(req))] } : undefined;
  if (req.headers['hx-request']) {
    // htmx would swap the sign-in page into a fragment; send the whole window there.
    res.writeHead(200, { 'hx-redirect': `/login?expired=1&next=${encodeURIComponent(next)}`, ...SECURITY_HEADERS, ...headers }).end();
    return;
  }
  return redirect(res, `/login?${cookie ? 'expired=1&' : ''}next=${encodeURIComponent(next)}`, headers?.['set-cookie']);
}

/** The account requires two-factor and this login has none: enrolment comes before anything else. */
function sendToEnrolment(shell: Shell, req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  if ((req.method ?? 'GET') !== 'GET') return errorPage(res, shell.assets, 403, 'Two-factor required', 'Your account requires two-factor sign-in. Set it up on the Account page first.');
  if (req.headers['hx-request']) {
    res.writeHead(200, { 'hx-redirect': '/account/two-factor', ...SECURITY_HEADERS }).end();
    return;
  }
  return redirect(res, '/account/two-factor');
}

/** A member whose role does not allow this page's action: a 403 page that says which role it needs. */
function refuseRole(shell: Shell, req: IncomingMessage, res: ServerResponse, member: Member, needed: string): void {
  req.resume();
  errorPage(res, shell.assets, 403, 'Not allowed for your role',
    `Your role in this account is ${member.role}; this needs ${needed === 'owner' ? 'an owner' : `a ${needed} or an owner`}. Ask an owner of the account (Members page) if you need it.`);
}

/** What a signed-in request brings before the page context is completed. */
type SignedIn = Pick<PageContext, 'req' | 'res' | 'url' | 'params' | 'form' | 'account' | 'session' | 'member'>;

/** What a page handler gets: the account, its Public API, and the ways to answer inside the layout. */
function pageContext(shell: Shell, s: SignedIn): PageContext {
  const { req, res, account, session, member } = s;
  const { assets, nav, opts } = shell;
  const flash = readCookie(req, FLASH_COOKIE);
  const email = member.email;
  const clearFlash = flash ? [`${FLASH_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`] : [];
  const who = { actor: loginActor(member), ip: clientIp(req, shell.trusted) };
  const ctx: PageContext = {
    ...s, email, core: shell.core,
    flash: flash ? decodeFlash(flash) : undefined,
    can: (role) => roleAllows(member.role, role),
    api: (m, p, input) => invokeRoute(opts.router, opts.app, account, member.role, req, who, m, p, input),
    audit: (action, target, changes) => opts.app.audit({ accountId: account.id, actor: who.actor, ip: who.ip, action, target, changes }),
    page({ title, nav: active, body: content, status }) {
      // A viewer sees every form other roles use; this says up front what answers them.
      const body = member.role === 'viewer' ? html`<p class="notice" id="role-notice">You have read-only access to this account (viewer): changes need a developer or an owner (<a href="/members">Members</a>).</p>${content}` : content;
      send(res, status ?? 200, layout({ assets, title, nav, active, email, csrf: session.csrfToken, body, flash: ctx.flash }),
        clearFlash.length ? { 'set-cookie': clearFlash } : {});
    },
    redirect(to, message) {
      if (req.headers['hx-request']) {
        res.writeHead(200, { 'hx-redirect': to, ...SECURITY_HEADERS, ...(message ? { 'set-cookie': [flashCookie(message)] } : {}) }).end();
        return;
      }
      redirect(res, to, message ? [flashCookie(message)] : []);
    },
    fragment(body, status = 200) {
      send(res, status, body);
    },
  };
  return ctx;
}

/**
 * The cabinet's actor: the signed-in login, labelled by its e-mail. Its id is the login's row
 * key (the account id while an account has one login; the member's id once logins are members).
 */
/** A member's changes are recorded as theirs: their id and e-mail. */
function loginActor(member: Member): AuditActor {
  return { kind: 'login', id: String(member.id), label: member.email };
}

/** Runs the page's handler; the API's client errors become error pages, the rest goes up to be logged. */
async function runPage(shell: Shell, route: PageRoute, ctx: PageContext): Promise<void> {
  const { res } = ctx;
  try {
    await route.handler(ctx);
  } catch (err) {
    if (res.headersSent) throw err;
    if (err instanceof HttpError && err.status === 404) return errorPage(res, shell.assets, 404, 'Not found', 'There is no such page in your account.');
    if (err instanceof HttpError && err.status < 500) return errorPage(res, shell.assets, err.status, 'Request refused', err.message);
    throw err;
  }
}

import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from '../api/http.js';
import { invokeRoute } from '../api/invoke.js';
import type { AppContext, Router } from '../api/router.js';
import type { KeyUseRecorder } from '../api/key-use.js';
import type { Config } from '../config/index.js';
import { memoryLimits, type Limits } from '../limits/index.js';
import { getAccount, type Store } from '../store/index.js';
import { BodyTooLargeError, readBody } from '../util/body.js';
import { clientIp, IpAllowlist, normalizeIp, rateLimitKey } from '../util/ip.js';
import { Assets } from './assets.js';
import type { CabinetCore, CabinetSection, PageContext, PageRoute, RecentEvents } from './context.js';
import { checkLogin, consumeLoginLink, loginLinkValid, loginOf } from './credentials.js';
import { html, type Html } from './html.js';
import { bare, BUILTIN_NAV, layout, type NavItem } from './layout.js';
import { keyRoutes } from './pages/keys.js';
import { endpointRoutes } from './pages/endpoints.js';
import { overviewRoutes } from './pages/overview.js';
import { watchRoutes } from './pages/watch.js';
import { webhookRoutes } from './pages/webhook.js';
import { accountRoutes } from './pages/account.js';
import {
  clearedSessionCookie, DEFAULT_SESSION_LIMITS, readCookie, SESSION_COOKIE, sessionCookie, Sessions, tokensEqual,
  type Session, type SessionLimits,
} from './sessions.js';

export interface CabinetOptions {
  store: Store;
  config: Config;
  router: Router;
  app: AppContext;
  keyUse: KeyUseRecorder;
  log?: (line: string) => void;
  sessions?: Partial<SessionLimits>;
  /** The watch page's event list, from Address Watch. */
  recentEvents: RecentEvents;
  /** Pages added by other parts of the product (Payments). */
  sections?: CabinetSection[];
  /** Sign-in attempts per minute per client address (default 30) and per e-mail (default 10). */
  signIn?: { perIpPerMinute?: number; perEmailPerMinute?: number };
  /** Where sign-in attempts are counted: with Redis, by every instance together. */
  limits?: Limits;
}

export interface Cabinet {
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  sessions: Sessions;
}

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
};

const FLASH_COOKIE = 'rpcctl_flash';
const MAX_FORM_BYTES = 64 * 1024;

interface Compiled {
  route: PageRoute;
  segments: string[];
}

function compile(routes: PageRoute[]): Compiled[] {
  return routes.map((route) => ({ route, segments: route.path.split('/') }));
}

function matchRoute(table: Compiled[], method: string, path: string): { route: PageRoute; params: Record<string, string> } | 'method' | undefined {
  const segments = (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).split('/');
  let otherMethod = false;
  for (const c of table) {
    if (c.segments.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < segments.length && ok; i++) {
      const p = c.segments[i]!;
      if (p.startsWith('{')) {
        try {
          params[p.slice(1, -1)] = decodeURIComponent(segments[i]!);
        } catch {
          ok = false;
        }
        if (segments[i] === '') ok = false;
      } else if (p !== segments[i]) ok = false;
    }
    if (!ok) continue;
    if (c.route.method === method || (method === 'HEAD' && c.route.method === 'GET')) return { route: c.route, params };
    otherMethod = true;
  }
  return otherMethod ? 'method' : undefined;
}

/**
 * A request another site made the browser send: Fetch Metadata where the browser sends it,
 * else an Origin that is not ours. Refused for every state change, even with a valid token.
 */
function crossSite(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return true;
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  if (origin === 'null') return true;
  try {
    return new URL(origin).host !== req.headers.host;
  } catch {
    return true;
  }
}

export function createCabinet(opts: CabinetOptions): Cabinet {
  const assets = new Assets();
  const sessions = new Sessions(opts.store, { ...DEFAULT_SESSION_LIMITS, ...opts.sessions });
  const log = opts.log ?? (() => {});
  const sections = opts.sections ?? [];
  const nav: NavItem[] = [...BUILTIN_NAV, ...sections.map((s) => s.nav)];
  const table = compile([
    ...overviewRoutes, ...keyRoutes, ...endpointRoutes, ...watchRoutes, ...webhookRoutes, ...accountRoutes, ...sections.flatMap((s) => s.routes),
  ]);
  const trusted = new IpAllowlist(opts.config.api.trusted_proxies);
  // Counted where the API's limits are: spreading guesses over the instances gains nothing.
  const signInLimiter = (opts.limits ?? memoryLimits()).window('cabinet-sign-in', 60_000);
  const perIpLimit = opts.signIn?.perIpPerMinute ?? 30;
  const perEmailLimit = opts.signIn?.perEmailPerMinute ?? 10;
  const core: CabinetCore = {
    store: opts.store, config: opts.config, router: opts.router, app: opts.app, assets, keyUse: opts.keyUse, sessions,
    throttlePassword: async (key) => signInLimiter.take(`pw:${key}`, perEmailLimit),
    recentEvents: opts.recentEvents,
  };
  /** Served over https: TLS here, or a trusted proxy that says so. */
  const isSecure = (req: IncomingMessage): boolean => {
    if ((req.socket as { encrypted?: boolean }).encrypted) return true;
    const peer = normalizeIp(req.socket.remoteAddress ?? '');
    return trusted.size > 0 && trusted.allows(peer) && String(req.headers['x-forwarded-proto'] ?? '').split(',')[0]!.trim() === 'https';
  };

  function send(res: ServerResponse, status: number, body: Html | string, headers: Record<string, string | string[]> = {}): void {
    const text = typeof body === 'string' ? body : body.text;
    res.writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      'cache-control': 'no-store',
      ...SECURITY_HEADERS,
      ...headers,
    });
    res.end(text);
  }

  function redirect(res: ServerResponse, to: string, cookies: string[] = []): void {
    res.writeHead(303, { location: to, 'cache-control': 'no-store', ...SECURITY_HEADERS, ...(cookies.length ? { 'set-cookie': cookies } : {}) });
    res.end();
  }

  function errorPage(res: ServerResponse, status: number, title: string, message: string): void {
    send(res, status, bare({
      assets, title,
      body: html`<section class="card narrow"><h1>${title}</h1><p>${message}</p><p><a class="button" href="/">Back to the dashboard</a></p></section>`,
    }));
  }

  function loginPage(res: ServerResponse, opts2: { status?: number; error?: string; email?: string; next?: string; notice?: string } = {}): void {
    send(res, opts2.status ?? 200, bare({
      assets, title: 'Sign in',
      body: html`<section class="card narrow">
  <h1>Sign in</h1>
  ${opts2.notice ? html`<p class="notice" role="status">${opts2.notice}</p>` : ''}
  ${opts2.error ? html`<p class="error" role="alert" id="login-error">${opts2.error}</p>` : ''}
  <form method="post" action="/login" class="stack">
    <input type="hidden" name="next" value="${safeNext(opts2.next ?? '/')}">
    <label>E-mail <input type="email" name="email" autocomplete="username" required value="${opts2.email ?? ''}" autofocus></label>
    <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
    <button type="submit" class="primary">Sign in</button>
  </form>
  <p class="muted small">No password? Ask your operator for a one-time sign-in link (<code>rpcctl admin login-link</code>).</p>
</section>`,
    }));
  }

  async function startSession(req: IncomingMessage, res: ServerResponse, accountId: number, next: string): Promise<void> {
    const { id } = await sessions.create(accountId, req.headers['user-agent']);
    redirect(res, safeNext(next), [sessionCookie(id, isSecure(req), Math.floor(sessions.limits.absoluteMs / 1000))]);
  }

  async function handleSignIn(req: IncomingMessage, res: ServerResponse, path: string, method: string, ip: string): Promise<boolean> {
    if (path === '/login' && method === 'GET') {
      const url = new URL(req.url ?? '/', 'http://x');
      if (await sessions.find(readCookie(req, SESSION_COOKIE))) {
        redirect(res, safeNext(url.searchParams.get('next') ?? '/'));
        return true;
      }
      const notice = url.searchParams.get('changed') ? 'Password changed. Sign in with the new one.'
        : url.searchParams.get('expired') ? 'Your session has ended. Sign in again.' : undefined;
      loginPage(res, { next: url.searchParams.get('next') ?? '/', notice });
      return true;
    }
    if (path === '/login' && method === 'POST') {
      const form = await readForm(req, opts.config.api.body_timeout_ms);
      const email = (form.get('email') ?? '').trim().toLowerCase();
      const next = form.get('next') ?? '/';
      const wait = Math.max(await signInLimiter.take(`ip:${rateLimitKey(ip)}`, perIpLimit), email ? await signInLimiter.take(`email:${emailKey(email)}`, perEmailLimit) : 0);
      if (wait > 0) {
        loginPage(res, { status: 429, error: `Too many sign-in attempts. Try again in ${wait} s.`, email, next });
        return true;
      }
      const accountId = email ? await checkLogin(opts.store, email, form.get('password') ?? '') : undefined;
      if (accountId === undefined) {
        loginPage(res, { status: 401, error: 'Wrong e-mail or password.', email, next });
        return true;
      }
      await startSession(req, res, accountId, next);
      return true;
    }
    const link = /^\/login\/link\/([A-Za-z0-9_-]{1,100})$/.exec(path);
    if (link) {
      const token = link[1]!;
      if (method === 'GET') {
        // Opening the link only asks: mail scanners that prefetch links must not use it up.
        if (!(await loginLinkValid(opts.store, token))) {
          errorPage(res, 410, 'Link expired', 'This sign-in link has expired or was used already. Ask for a new one.');
          return true;
        }
        send(res, 200, bare({
          assets, title: 'Sign in',
          body: html`<section class="card narrow"><h1>Sign in</h1><p>Continue to your dashboard with this one-time link.</p>
<form method="post" action="/login/link/${token}"><button type="submit" class="primary" autofocus>Continue</button></form></section>`,
        }));
        return true;
      }
      if (method === 'POST') {
        if ((await signInLimiter.take(`ip:${rateLimitKey(ip)}`, perIpLimit)) > 0) {
          errorPage(res, 429, 'Too many attempts', 'Too many sign-in attempts. Try again in a minute.');
          return true;
        }
        req.resume();
        const accountId = await consumeLoginLink(opts.store, token);
        if (accountId === undefined) {
          errorPage(res, 410, 'Link expired', 'This sign-in link has expired or was used already. Ask for a new one.');
          return true;
        }
        await startSession(req, res, accountId, '/');
        return true;
      }
    }
    return false;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://cabinet.invalid');
    const path = url.pathname;
    const method = req.method ?? 'GET';

    if (path.startsWith('/static/') && (method === 'GET' || method === 'HEAD')) {
      req.resume();
      if (!assets.serve(path, res)) errorPage(res, 404, 'Not found', 'There is no such file.');
      return;
    }
    if (path === '/favicon.ico') {
      req.resume();
      res.writeHead(301, { location: assets.url('favicon.svg') }).end();
      return;
    }
    if (method !== 'GET' && method !== 'HEAD' && crossSite(req)) {
      req.resume();
      return errorPage(res, 403, 'Forbidden', 'This request came from another site and was refused.');
    }
    const ip = clientIp(req, trusted);
    if (await handleSignIn(req, res, path, method, ip)) return;

    const cookie = readCookie(req, SESSION_COOKIE);
    const session = await sessions.find(cookie);
    if (path === '/logout' && method === 'POST') {
      const form = await readForm(req, opts.config.api.body_timeout_ms);
      if (session && !csrfOk(req, form, session)) return errorPage(res, 403, 'Forbidden', 'The form was stale or forged (CSRF token missing or wrong). Reload the page and try again.');
      if (session) await sessions.end(session.idHash);
      return redirect(res, '/login', [clearedSessionCookie(isSecure(req))]);
    }

    const found = matchRoute(table, method, path);
    if (found === undefined) {
      req.resume();
      return errorPage(res, 404, 'Not found', 'There is no such page.');
    }
    if (found === 'method') {
      req.resume();
      return errorPage(res, 405, 'Method not allowed', `${method} is not allowed here.`);
    }
    const account = session && (await getAccount(opts.store, session.accountId));
    if (!session || !account) {
      req.resume();
      if (method !== 'GET') return errorPage(res, 403, 'Signed out', 'Your session has ended. Sign in again, then repeat the change.');
      const next = path + url.search;
      const headers = cookie ? { 'set-cookie': [clearedSessionCookie(isSecure(req))] } : undefined;
      if (req.headers['hx-request']) {
        // htmx would swap the sign-in page into a fragment; send the whole window there.
        res.writeHead(200, { 'hx-redirect': `/login?expired=1&next=${encodeURIComponent(next)}`, ...SECURITY_HEADERS, ...headers }).end();
        return;
      }
      return redirect(res, `/login?${cookie ? 'expired=1&' : ''}next=${encodeURIComponent(next)}`, headers?.['set-cookie']);
    }
    const form = method === 'POST' ? await readForm(req, opts.config.api.body_timeout_ms) : new URLSearchParams();
    if (method === 'POST' && !csrfOk(req, form, session)) {
      return errorPage(res, 403, 'Forbidden', 'The form was stale or forged (CSRF token missing or wrong). Reload the page and try again.');
    }
    const flash = readCookie(req, FLASH_COOKIE);
    const login = await loginOf(opts.store, account.id);
    const email = login?.email ?? `account ${account.id}`;
    const clearFlash = flash ? [`${FLASH_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`] : [];
    const ctx: PageContext = {
      req, res, url, params: found.params, form, account, email, session, core,
      flash: flash ? decodeFlash(flash) : undefined,
      api: (m, p, input) => invokeRoute(opts.router, opts.app, account, req, m, p, input),
      page({ title, nav: active, body, status }) {
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
    try {
      await found.route.handler(ctx);
    } catch (err) {
      if (res.headersSent) throw err;
      if (err instanceof HttpError && err.status === 404) return errorPage(res, 404, 'Not found', 'There is no such page in your account.');
      if (err instanceof HttpError && err.status < 500) return errorPage(res, err.status, 'Request refused', err.message);
      throw err;
    }
  }

  return {
    sessions,
    async handle(req, res) {
      try {
        await handle(req, res);
      } catch (err) {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        // A writeHead that threw (a header value it refused) has already set its reason phrase.
        res.statusMessage = '';
        if (err instanceof BodyTooLargeError) return errorPage(res, 413, 'Too large', 'The form was too large.');
        if (req.destroyed || (err as NodeJS.ErrnoException)?.code === 'ECONNRESET') return;
        log(`cabinet: ${req.method} ${(req.url ?? '').split('?')[0]} failed: ${(err as Error)?.stack ?? String(err)}`);
        errorPage(res, 500, 'Something went wrong', 'The server could not finish this request. It has been logged.');
      }
    },
  };
}

/** A form body, cut off like an API body when it arrives too slowly. */
async function readForm(req: IncomingMessage, timeoutMs: number): Promise<URLSearchParams> {
  const body = await readBody(req, MAX_FORM_BYTES, { timeoutMs });
  const type = String(req.headers['content-type'] ?? '');
  if (body.length === 0 || !type.startsWith('application/x-www-form-urlencoded')) return new URLSearchParams();
  return new URLSearchParams(body.toString('utf8'));
}

function csrfOk(req: IncomingMessage, form: URLSearchParams, session: Session): boolean {
  const header = req.headers['x-csrf-token'];
  const given = form.get('_csrf') ?? (typeof header === 'string' ? header : undefined);
  return given !== undefined && tokensEqual(given, session.csrfToken);
}

const OWN_ORIGIN = 'http://cabinet.invalid';

/**
 * Only our own paths: a sign-in must not bounce the user to another site. Judged as a browser
 * will read the Location header (WHATWG URL parsing strips tab, CR and LF and reads `\` as `/`,
 * so `/\t/evil.example` is `//evil.example`): anything holding a control character or a
 * backslash is refused outright, the rest is resolved against our own origin and kept only if
 * it stays there. What is returned is the parser's serialisation, percent-encoded ASCII, so it
 * is always a legal header value.
 */
function safeNext(next: string): string {
  if (!next.startsWith('/') || /[\u0000-\u001f\u007f\\]/.test(next)) return '/';
  let url: URL;
  try {
    url = new URL(next, OWN_ORIGIN);
  } catch {
    return '/';
  }
  const path = url.pathname + url.search + url.hash;
  // `/..//evil.example` resolves to the path `//evil.example`, which a browser reads as a host.
  return url.origin === OWN_ORIGIN && !path.startsWith('//') ? path : '/';
}

function flashCookie(message: string): string {
  return `${FLASH_COOKIE}=${Buffer.from(message.slice(0, 300)).toString('base64url')}; Path=/; HttpOnly; SameSite=Lax; Max-Age=60`;
}

function decodeFlash(value: string): string {
  return Buffer.from(value, 'base64url').toString('utf8');
}

/** The e-mail as a limiter key: with Redis, key names are readable by whoever lists them. */
function emailKey(email: string): string {
  return createHash('sha256').update(email).digest('base64url').slice(0, 22);
}

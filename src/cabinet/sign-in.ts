import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { rateLimitKey } from '../util/ip.js';
import { checkLogin, consumeLoginLink, loginLinkValid } from './credentials.js';
import { readForm } from './forms.js';
import { html } from './html.js';
import { bare } from './layout.js';
import { errorPage, redirect, send } from './respond.js';
import { firstFactorPassed, safeNext } from './landing.js';
import { readCookie, SESSION_COOKIE } from './sessions.js';
import { secondStep } from './second-step.js';
import type { Shell } from './shell.js';

/** `/login` and the one-time links: answers and returns true when the request was one of them. */
export async function handleSignIn(shell: Shell, req: IncomingMessage, res: ServerResponse, path: string, method: string, ip: string): Promise<boolean> {
  if (path === '/login' && method === 'GET') {
    await loginForm(shell, req, res);
    return true;
  }
  if (path === '/login' && method === 'POST') {
    await passwordSignIn(shell, req, res, ip);
    return true;
  }
  if (path === '/login/two-factor' && (method === 'GET' || method === 'POST')) {
    await secondStep(shell, req, res, method, ip);
    return true;
  }
  const link = /^\/login\/link\/([A-Za-z0-9_-]{1,100})$/.exec(path);
  if (link && method === 'GET') {
    await showLoginLink(shell, res, link[1]!);
    return true;
  }
  if (link && method === 'POST') {
    await useLoginLink(shell, req, res, link[1]!, ip);
    return true;
  }
  return false;
}

async function loginForm(shell: Shell, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://x');
  if (await shell.sessions.find(readCookie(req, SESSION_COOKIE))) {
    redirect(res, safeNext(url.searchParams.get('next') ?? '/'));
    return;
  }
  const notice = url.searchParams.get('changed') ? 'Password changed. Sign in with the new one.'
    : url.searchParams.get('expired') ? 'Your session has ended. Sign in again.' : undefined;
  loginPage(shell, res, { next: url.searchParams.get('next') ?? '/', notice });
}

async function passwordSignIn(shell: Shell, req: IncomingMessage, res: ServerResponse, ip: string): Promise<void> {
  const { limiter, perIp, perEmail } = shell.signIn;
  const form = await readForm(req, shell.opts.config.api.body_timeout_ms);
  const email = (form.get('email') ?? '').trim().toLowerCase();
  const next = form.get('next') ?? '/';
  const wait = Math.max(await limiter.take(`ip:${rateLimitKey(ip)}`, perIp), email ? await limiter.take(`email:${emailKey(email)}`, perEmail) : 0);
  if (wait > 0) {
    loginPage(shell, res, { status: 429, error: `Too many sign-in attempts. Try again in ${wait} s.`, email, next });
    return;
  }
  const login = email ? await checkLogin(shell.opts.store, email, form.get('password') ?? '') : undefined;
  if (login === undefined) {
    loginPage(shell, res, { status: 401, error: 'Wrong e-mail or password.', email, next });
    return;
  }
  await firstFactorPassed(shell, req, res, login, next);
}

async function showLoginLink(shell: Shell, res: ServerResponse, token: string): Promise<void> {
  // Opening the link only asks: mail scanners that prefetch links must not use it up.
  if (!(await loginLinkValid(shell.opts.store, token))) {
    errorPage(res, shell.assets, 410, 'Link expired', 'This sign-in link has expired or was used already. Ask for a new one.');
    return;
  }
  send(res, 200, bare({
    assets: shell.assets, title: 'Sign in',
    body: html`<section class="card narrow"><h1>Sign in</h1><p>Continue to your dashboard with this one-time link.</p>
<form method="post" action="/login/link/${token}"><button type="submit" class="primary" autofocus>Continue</button></form></section>`,
  }));
}

async function useLoginLink(shell: Shell, req: IncomingMessage, res: ServerResponse, token: string, ip: string): Promise<void> {
  if ((await shell.signIn.limiter.take(`ip:${rateLimitKey(ip)}`, shell.signIn.perIp)) > 0) {
    errorPage(res, shell.assets, 429, 'Too many attempts', 'Too many sign-in attempts. Try again in a minute.');
    return;
  }
  req.resume();
  const login = await consumeLoginLink(shell.opts.store, token);
  if (login === undefined) {
    errorPage(res, shell.assets, 410, 'Link expired', 'This sign-in link has expired or was used already. Ask for a new one.');
    return;
  }
  await firstFactorPassed(shell, req, res, login, '/');
}

function loginPage(shell: Shell, res: ServerResponse, o: { status?: number; error?: string; email?: string; next?: string; notice?: string } = {}): void {
  send(res, o.status ?? 200, bare({
    assets: shell.assets, title: 'Sign in',
    body: html`<section class="card narrow">
  <h1>Sign in</h1>
  ${o.notice ? html`<p class="notice" role="status">${o.notice}</p>` : ''}
  ${o.error ? html`<p class="error" role="alert" id="login-error">${o.error}</p>` : ''}
  <form method="post" action="/login" class="stack">
    <input type="hidden" name="next" value="${safeNext(o.next ?? '/')}">
    <label>E-mail <input type="email" name="email" autocomplete="username" required value="${o.email ?? ''}" autofocus></label>
    <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
    <button type="submit" class="primary">Sign in</button>
  </form>
  <p class="muted small">No password? Ask your operator for a one-time sign-in link (<code>rpcctl admin login-link</code>).</p>
</section>`,
  }));
}

/** The e-mail as a limiter key: with Redis, key names are readable by whoever lists them. */
function emailKey(email: string): string {
  return createHash('sha256').update(email).digest('base64url').slice(0, 22);
}

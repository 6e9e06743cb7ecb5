import type { IncomingMessage, ServerResponse } from 'node:http';
import { getMember } from '../store/index.js';
import { rateLimitKey } from '../util/ip.js';
import { checkPassword, consumeLoginLink, CredentialError, joinable, loginLinkValid, MIN_PASSWORD_LENGTH, setMemberPassword } from './credentials.js';
import { readForm } from './forms.js';
import { html } from './html.js';
import { firstFactorPassed } from './landing.js';
import { bare } from './layout.js';
import { errorPage, send } from './respond.js';
import type { Shell } from './shell.js';

/**
 * `/join/{token}`: a set-password link (an owner's invitation, an operator's reset) asks for a
 * new password, then signs in as after a password: the second factor when the member has one,
 * enrolment first when the account requires it and they have none.
 *
 * One e-mail is one login: an invitation of an e-mail that signs in already (to another account)
 * was stored like any other, and only here, when its invitee chooses a password, are they told
 * and sent to sign in with their login; the invitation stays open (docs/cabinet.md).
 */
export async function handleJoin(shell: Shell, req: IncomingMessage, res: ServerResponse, path: string, method: string, ip: string): Promise<boolean> {
  const m = /^\/join\/([A-Za-z0-9_-]{1,100})$/.exec(path);
  if (!m || (method !== 'GET' && method !== 'POST')) return false;
  const token = m[1]!;
  if (method === 'GET') {
    // Opening the link only asks: mail scanners that prefetch links must not use it up.
    const login = await loginLinkValid(shell.opts.store, token, 'set-password');
    if (!login) gone(shell, res);
    else joinPage(shell, res, token, (await getMember(shell.opts.store, login.memberId))?.email ?? '', {});
    return true;
  }
  await join(shell, req, res, token, ip);
  return true;
}

async function join(shell: Shell, req: IncomingMessage, res: ServerResponse, token: string, ip: string): Promise<void> {
  const store = shell.opts.store;
  const form = await readForm(req, shell.opts.config.api.body_timeout_ms);
  if ((await shell.signIn.limiter.take(`ip:${rateLimitKey(ip)}`, shell.signIn.perIp)) > 0) {
    return errorPage(res, shell.assets, 429, 'Too many attempts', 'Too many attempts. Try again in a minute.');
  }
  const pending = await loginLinkValid(store, token, 'set-password');
  if (!pending) return gone(shell, res);
  const email = (await getMember(store, pending.memberId))?.email ?? '';
  const password = form.get('password') ?? '';
  // Checked before the link is used: a too-short password leaves it working.
  if (password !== form.get('confirm')) return joinPage(shell, res, token, email, { status: 400, error: 'The passwords differ.' });
  try {
    checkPassword(password);
  } catch (err) {
    if (err instanceof CredentialError) return joinPage(shell, res, token, email, { status: 400, error: err.message });
    throw err;
  }
  if (!(await joined(shell, res, pending.memberId, email))) return;
  const login = await consumeLoginLink(store, token, 'set-password');
  if (!login) return gone(shell, res);
  try {
    await setMemberPassword(store, login.memberId, password);
  } catch (err) {
    // The same e-mail joined elsewhere a moment ago: this link is spent; the owner can make a new one.
    if (err instanceof CredentialError && err.code === 'E_EMAIL_TAKEN') return hasLogin(shell, res, email);
    throw err;
  }
  await firstFactorPassed(shell, req, res, login, '/');
}

/** False (and the page that says why) when the member's e-mail already signs in as another member. */
async function joined(shell: Shell, res: ServerResponse, memberId: number, email: string): Promise<boolean> {
  try {
    await joinable(shell.opts.store, memberId);
    return true;
  } catch (err) {
    if (!(err instanceof CredentialError) || err.code !== 'E_EMAIL_TAKEN') throw err;
    hasLogin(shell, res, email);
    return false;
  }
}

function hasLogin(shell: Shell, res: ServerResponse, email: string): void {
  send(res, 409, bare({
    assets: shell.assets, title: 'You have a login already',
    body: html`<section class="card narrow">
  <h1>You have a login already</h1>
  <p id="join-has-login">${email} already signs in to an account of this service, and one e-mail address is one login. Sign in with the password you have, or ask whoever invited you to invite another address of yours.</p>
  <p><a href="/login" class="button primary">Sign in</a></p>
</section>`,
  }));
}

function gone(shell: Shell, res: ServerResponse): void {
  errorPage(res, shell.assets, 410, 'Link expired', 'This invitation or password link has expired or was used already. Ask an owner of the account (or your operator) for a new one.');
}

function joinPage(shell: Shell, res: ServerResponse, token: string, email: string, o: { status?: number; error?: string }): void {
  send(res, o.status ?? 200, bare({
    assets: shell.assets, title: 'Choose a password',
    body: html`<section class="card narrow">
  <h1>Choose a password</h1>
  ${o.error ? html`<p class="error" role="alert" id="join-error">${o.error}</p>` : ''}
  <form method="post" action="/join/${token}" class="stack">
    <label>E-mail <input type="email" name="username" autocomplete="username" value="${email}" readonly></label>
    <label>Password <span class="muted small">(at least ${MIN_PASSWORD_LENGTH} characters)</span>
      <input type="password" name="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" autofocus></label>
    <label>Password again <input type="password" name="confirm" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}"></label>
    <button type="submit" class="primary">Set password and sign in</button>
  </form>
</section>`,
  }));
}

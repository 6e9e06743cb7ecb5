import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Login } from './credentials.js';
import { redirect } from './respond.js';
import { sessionCookie } from './sessions.js';
import type { Shell } from './shell.js';
import { CHALLENGE_TTL_MS, createChallenge, twoFactorEnabled } from './two-factor.js';

/** Where a sign-in lands: a session, or first the second step when the login has one. */

export const CHALLENGE_COOKIE = 'rpcctl_2fa';

/**
 * The password or a one-time link was right. A login with two-factor gets no session yet, only
 * a short-lived challenge for the code (its cookie is sent to /login paths only); a login link
 * is the same: an operator's link stands for the password, never for the phone.
 */
export async function firstFactorPassed(shell: Shell, req: IncomingMessage, res: ServerResponse, login: Login, next: string): Promise<void> {
  if (!(await twoFactorEnabled(shell.opts.store, login.memberId))) return startSession(shell, req, res, login, next);
  const token = await createChallenge(shell.opts.store, login, safeNext(next));
  redirect(res, '/login/two-factor', [challengeCookie(token, shell.isSecure(req), CHALLENGE_TTL_MS / 1000)]);
}

export function challengeCookie(token: string, secure: boolean, maxAgeSeconds: number): string {
  return `${CHALLENGE_COOKIE}=${token}; Path=/login; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

export async function startSession(shell: Shell, req: IncomingMessage, res: ServerResponse, login: Login, next: string, cookies: string[] = []): Promise<void> {
  const { id } = await shell.sessions.create(login, req.headers['user-agent']);
  redirect(res, safeNext(next), [sessionCookie(id, shell.isSecure(req), Math.floor(shell.sessions.limits.absoluteMs / 1000)), ...cookies]);
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
export function safeNext(next: string): string {
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


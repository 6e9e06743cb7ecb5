import type { IncomingMessage, ServerResponse } from 'node:http';
import { rateLimitKey } from '../util/ip.js';
import { readForm } from './forms.js';
import { html } from './html.js';
import { bare } from './layout.js';
import { CHALLENGE_COOKIE, challengeCookie, startSession } from './landing.js';
import { flashCookie, redirect, send } from './respond.js';
import { readCookie } from './sessions.js';
import type { Shell } from './shell.js';
import { endChallenge, failChallenge, findChallenge, twoFactorState, useSecondFactor } from './two-factor.js';

/**
 * `/login/two-factor`: the code after the password. Counted like the password step (per client
 * address and per login, in the same limiter), and a challenge dies after a few wrong codes, so
 * guessing means giving the password again.
 */
export async function secondStep(shell: Shell, req: IncomingMessage, res: ServerResponse, method: string, ip: string): Promise<void> {
  const store = shell.opts.store;
  const cleared = challengeCookie('', shell.isSecure(req), 0);
  const challenge = await findChallenge(store, readCookie(req, CHALLENGE_COOKIE));
  if (method === 'GET') {
    if (!challenge) return redirect(res, '/login', [cleared]);
    return codePage(shell, res, {});
  }
  const form = await readForm(req, shell.opts.config.api.body_timeout_ms);
  if (!challenge) return redirect(res, '/login?expired=1', [cleared]);
  const { limiter, perIp, perEmail } = shell.signIn;
  const wait = Math.max(await limiter.take(`ip:${rateLimitKey(ip)}`, perIp), await limiter.take(`2fa:${challenge.memberId}`, perEmail));
  if (wait > 0) return codePage(shell, res, { status: 429, error: `Too many attempts. Try again in ${wait} s.` });
  const used = await useSecondFactor(store, challenge.memberId, form.get('code') ?? '');
  if (!used) {
    if (await failChallenge(store, challenge.tokenHash)) {
      return send(res, 401, bare({
        assets: shell.assets, title: 'Sign in again',
        body: html`<section class="card narrow"><h1>Sign in again</h1>
<p class="error" role="alert">Too many wrong codes. Sign in with your password again.</p>
<p><a class="button primary" href="/login">Sign in</a></p></section>`,
      }), { 'set-cookie': [cleared] });
    }
    return codePage(shell, res, { status: 401, error: 'That code is wrong or was used already.' });
  }
  await endChallenge(store, challenge.tokenHash);
  const cookies = [cleared];
  if (used === 'recovery') {
    const left = (await twoFactorState(store, challenge)).recoveryLeft;
    cookies.push(flashCookie(`You signed in with a recovery code; ${left} left. Make new ones on the Account page if you are running out.`));
  }
  await startSession(shell, req, res, { accountId: challenge.accountId, memberId: challenge.memberId }, challenge.next, cookies);
}

function codePage(shell: Shell, res: ServerResponse, o: { status?: number; error?: string }): void {
  send(res, o.status ?? 200, bare({
    assets: shell.assets, title: 'Two-factor sign-in',
    body: html`<section class="card narrow">
  <h1>Two-factor sign-in</h1>
  ${o.error ? html`<p class="error" role="alert" id="code-error">${o.error}</p>` : ''}
  <form method="post" action="/login/two-factor" class="stack">
    <label>Code <span class="muted small">(6 digits from your authenticator app, or a recovery code)</span>
      <input type="text" name="code" autocomplete="one-time-code" required maxlength="20" spellcheck="false" autofocus></label>
    <button type="submit" class="primary">Verify</button>
  </form>
  <p class="muted small"><a href="/login">Start over</a></p>
</section>`,
  }));
}

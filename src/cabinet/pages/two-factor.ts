import QRCode from 'qrcode';
import { checkLogin } from '../credentials.js';
import { loginTarget } from './account.js';
import type { PageContext, PageRoute } from '../context.js';
import { html, raw } from '../html.js';
import { otpauthUri, secretFromBase32 } from '../totp.js';
import {
  confirmEnrolment, disableTwoFactor, newRecoveryCodes, pendingSecret, setTwoFactorRequired, twoFactorState, useSecondFactor,
} from '../two-factor.js';
import { badge, copyable, csrfField, errorBox, pageHeader, time } from './ui.js';

/** The name authenticator apps list the key under. */
const ISSUER = 'rpcctl';

/** `/account/two-factor`: enrol (QR code, the key as text, a code to confirm), recovery codes, turn off, the account's policy. */
async function render(ctx: PageContext, opts: { error?: string; status?: number; codes?: string[] } = {}) {
  const state = await twoFactorState(ctx.core.store, ctx.session);
  const body = opts.codes ? recoveryCodes(opts.codes)
    : state.enabled ? manage(ctx, state.enabledAt, state.recoveryLeft, state.required, opts.error)
      : await enrol(ctx, state.required, opts.error);
  ctx.page({
    title: 'Two-factor sign-in', nav: 'account', status: opts.status,
    body: html`${pageHeader('Two-factor sign-in', 'A code from an authenticator app after the password, at every sign-in.')}${body}`,
  });
}

async function enrol(ctx: PageContext, required: boolean, error: string | undefined) {
  const secret = await pendingSecret(ctx.core.store, ctx.member.id);
  // The SVG has only path elements with presentation attributes: nothing the CSP refuses.
  const svg = await QRCode.toString(otpauthUri(secretFromBase32(secret), ctx.email, ISSUER), { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  const grouped = secret.match(/.{1,4}/g)!.join(' ');
  return html`${required ? html`<p class="notice" role="status">Your account requires two-factor sign-in for every login. Set it up to continue.</p>` : ''}
<section class="card" aria-labelledby="enrol-title">
  <h2 id="enrol-title">Set up two-factor sign-in</h2>
  <ol class="stack">
    <li>Scan this QR code with an authenticator app (Google Authenticator, 1Password, Authy, FreeOTP, ...).
      <div class="qr" role="img" aria-label="QR code of your two-factor key">${raw(svg)}</div></li>
    <li>Or type the key in by hand (time-based, 6 digits, 30 seconds):
      ${copyable(grouped, 'two-factor key', { secret: true, id: 'totp-secret' })}</li>
    <li>Enter the code the app shows to turn it on.
      ${errorBox(error)}
      <form method="post" action="/account/two-factor/confirm" class="row-form">
        ${csrfField(ctx)}
        <label>Code from the app <input type="text" name="code" autocomplete="one-time-code" inputmode="numeric" pattern="[0-9 ]{6,7}" maxlength="7" required></label>
        <button type="submit" class="primary">Turn on</button>
      </form></li>
  </ol>
</section>`;
}

function manage(ctx: PageContext, enabledAt: string | null, left: number, required: boolean, error: string | undefined) {
  const proof = (id: string) => html`<label for="${id}">Password, or a code from your app</label>
    <input id="${id}" type="password" name="proof" autocomplete="current-password" required>`;
  return html`${errorBox(error)}
<div class="grid two">
<section class="card" aria-labelledby="status-title">
  <h2 id="status-title">Status</h2>
  <dl class="kv">
    <dt>Two-factor</dt><dd>${badge('on', 'ok')} since ${time(enabledAt)}</dd>
    <dt>Recovery codes left</dt><dd id="recovery-left">${left}</dd>
  </dl>
  <form method="post" action="/account/two-factor/recovery" class="stack">
    ${csrfField(ctx)}
    <h3>New recovery codes</h3>
    <p class="muted small">Replaces every recovery code; the old ones stop working.</p>
    ${proof('proof-recovery')}
    <button type="submit">Make new recovery codes</button>
  </form>
</section>
<section class="card" aria-labelledby="policy-title">
  <h2 id="policy-title">For the whole account</h2>
  ${ctx.can('owner') ? html`<form method="post" action="/account/two-factor/policy" class="stack">
    ${csrfField(ctx)}
    <label class="check"><input type="checkbox" name="require" value="1"${required ? html` checked` : ''}> Require two-factor sign-in for every member</label>
    <p class="muted small">A login without it is sent to set it up before anything else.</p>
    <button type="submit">Save</button>
  </form>` : html`<p>Two-factor sign-in is ${required ? 'required of every member' : 'each member\'s choice'} (an owner decides).</p>`}
  <form method="post" action="/account/two-factor/disable" class="stack">
    ${csrfField(ctx)}
    <h3>Turn off</h3>
    ${required ? html`<p class="muted small">The account requires two-factor: turn that off first.</p>` : proof('proof-disable')}
    <button type="submit" class="danger"${required ? html` disabled` : ''}>Turn off two-factor</button>
  </form>
</section>
</div>`;
}

function recoveryCodes(codes: string[]) {
  return html`<section class="card reveal" aria-labelledby="codes-title">
  <h2 id="codes-title">Recovery codes — save them now</h2>
  <p>Each code signs you in once instead of the app, for when the phone is lost. This is the only time they are shown.</p>
  <ol id="recovery-codes" class="codes">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ol>
  ${copyable(codes.join(' '), 'recovery codes', { secret: true })}
  <p><a class="button primary" href="/account">Done</a></p>
</section>`;
}

/** The password or a second factor (a TOTP code or a recovery code, used up by this). */
async function proven(ctx: PageContext): Promise<boolean> {
  const proof = ctx.form.get('proof') ?? '';
  if (await useSecondFactor(ctx.core.store, ctx.member.id, proof)) return true;
  return (await checkLogin(ctx.core.store, ctx.email, proof))?.memberId === ctx.member.id;
}

/** Counted with the password changes: a stolen session cannot guess the password here faster. */
async function throttled(ctx: PageContext): Promise<boolean> {
  const wait = await ctx.core.throttlePassword(`member:${ctx.member.id}`);
  if (wait > 0) await render(ctx, { error: `Too many attempts. Try again in ${wait} s.`, status: 429 });
  return wait > 0;
}

export const twoFactorRoutes: PageRoute[] = [
  { method: 'GET', path: '/account/two-factor', handler: (ctx) => render(ctx) },
  {
    method: 'POST', path: '/account/two-factor/confirm', audit: 'page', role: 'viewer',
    async handler(ctx) {
      if (await throttled(ctx)) return;
      const codes = await confirmEnrolment(ctx.core.store, ctx.session, (ctx.form.get('code') ?? '').replace(/\s/g, ''));
      if (!codes) return render(ctx, { error: 'That code is wrong. Check the phone\'s clock and enter the newest code.', status: 400 });
      await ctx.audit('two_factor.enable', loginTarget(ctx));
      return render(ctx, { codes });
    },
  },
  {
    method: 'POST', path: '/account/two-factor/recovery', audit: 'page', role: 'viewer',
    async handler(ctx) {
      if (await throttled(ctx)) return;
      if (!(await proven(ctx))) return render(ctx, { error: 'The password or code is wrong.', status: 400 });
      const codes = await newRecoveryCodes(ctx.core.store, ctx.session);
      await ctx.audit('two_factor.recovery_codes', loginTarget(ctx));
      return render(ctx, { codes });
    },
  },
  {
    // Every member's own login: any role.
    method: 'POST', path: '/account/two-factor/disable', audit: 'page', role: 'viewer',
    async handler(ctx) {
      if (await throttled(ctx)) return;
      const state = await twoFactorState(ctx.core.store, ctx.session);
      if (state.required) return render(ctx, { error: 'The account requires two-factor sign-in: turn that off first.', status: 400 });
      if (!(await proven(ctx))) return render(ctx, { error: 'The password or code is wrong.', status: 400 });
      await disableTwoFactor(ctx.core.store, ctx.member.id);
      await ctx.audit('two_factor.disable', loginTarget(ctx));
      ctx.redirect('/account', 'Two-factor sign-in is off.');
    },
  },
  {
    // The account's policy: an owner's.
    method: 'POST', path: '/account/two-factor/policy', audit: 'page', role: 'owner',
    async handler(ctx) {
      // Only a login that has it can require it: nobody is locked into an enrolment by surprise.
      if (!(await twoFactorState(ctx.core.store, ctx.session)).enabled) return render(ctx, { error: 'Turn on two-factor for yourself first.', status: 400 });
      const on = ctx.form.get('require') === '1';
      await setTwoFactorRequired(ctx.core.store, ctx.account.id, on);
      await ctx.audit('account.policy', { type: 'account', id: String(ctx.account.id) }, { require_two_factor: on });
      ctx.redirect('/account/two-factor', on ? 'Every member now needs two-factor sign-in.' : 'Two-factor sign-in is now each member\'s choice.');
    },
  },
];

import { checkLogin, CredentialError, MIN_PASSWORD_LENGTH, setMemberPassword } from '../credentials.js';
import type { PageContext, PageRoute } from '../context.js';
import { html } from '../html.js';
import { twoFactorState } from '../two-factor.js';
import { badge, csrfField, errorBox, num, pageHeader, time } from './ui.js';

async function render(ctx: PageContext, opts: { error?: string; status?: number } = {}) {
  const plan = ctx.core.store.catalog.plan(ctx.account.plan_id);
  const sessions = await ctx.core.sessions.count(ctx.member.id);
  const twoFactor = await twoFactorState(ctx.core.store, ctx.session);
  ctx.page({
    title: 'Account', nav: 'account', status: opts.status,
    body: html`${pageHeader('Account', `Account ${ctx.account.id}`)}
<div class="grid two">
<section class="card" aria-labelledby="profile-title">
  <h2 id="profile-title">Profile</h2>
  <dl class="kv">
    <dt>E-mail</dt><dd>${ctx.email}</dd>
    <dt>Role</dt><dd>${ctx.member.role} · <a href="/members">Members</a></dd>
    <dt>Account id</dt><dd><code>${ctx.account.id}</code></dd>
    <dt>Plan</dt><dd>${plan ? html`${plan.name} · ${num(plan.included_credits)} credits a month` : 'none'}</dd>
    <dt>Customer since</dt><dd>${time(ctx.account.created_at)}</dd>
  </dl>
  <p class="muted small">To change the e-mail or the plan, contact your operator.</p>
</section>
<section class="card" aria-labelledby="password-title">
  <h2 id="password-title">Change password</h2>
  ${errorBox(opts.error)}
  <form method="post" action="/account/password" class="stack">
    ${csrfField(ctx)}
    <input type="email" name="username" autocomplete="username" value="${ctx.email}" hidden>
    <label>Current password <input type="password" name="current" autocomplete="current-password" required></label>
    <label>New password <span class="muted small">(at least ${MIN_PASSWORD_LENGTH} characters)</span>
      <input type="password" name="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}"></label>
    <label>New password again <input type="password" name="confirm" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}"></label>
    <button type="submit" class="primary">Change password</button>
  </form>
  <p class="muted small">Changing it signs you out everywhere, here too.</p>
</section>
</div>
<section class="card" aria-labelledby="two-factor-title">
  <h2 id="two-factor-title">Two-factor sign-in</h2>
  ${twoFactor.enabled
    ? html`<p>${badge('on', 'ok')} A code from your authenticator app is asked after the password; ${twoFactor.recoveryLeft} recovery codes left.${twoFactor.required ? ' Required for every member.' : ''}</p>
  <p><a class="button" href="/account/two-factor">Manage two-factor</a></p>`
    : html`<p>${badge('off', 'neutral')} Only the password protects this account.</p>
  <p><a class="button primary" href="/account/two-factor">Set up two-factor</a></p>`}
</section>
<section class="card" aria-labelledby="sessions-title">
  <h2 id="sessions-title">Sessions</h2>
  <p>You are signed in ${sessions === 1 ? 'here only' : html`in <strong>${sessions}</strong> places (browsers or devices)`}.
    Sessions end after 2 hours without use and 24 hours after sign-in.</p>
  <form method="post" action="/account/sessions/others">
    ${csrfField(ctx)}
    <button type="submit"${sessions <= 1 ? html` disabled` : ''}>Sign out everywhere else</button>
  </form>
</section>
<section class="card" aria-labelledby="audit-title">
  <h2 id="audit-title">Audit log</h2>
  <p>Who changed what, when and from where: keys, endpoints, webhooks, watches, payments and sign-in settings, from the cabinet, the API and the operator.</p>
  <p><a class="button" href="/account/audit">Open the audit log</a></p>
</section>`,
  });
}

export const accountRoutes: PageRoute[] = [
  { method: 'GET', path: '/account', handler: (ctx) => render(ctx) },
  {
    // Every member's own login: any role.
    method: 'POST', path: '/account/password', audit: 'page', role: 'viewer',
    async handler(ctx) {
      const wait = await ctx.core.throttlePassword(`member:${ctx.member.id}`);
      if (wait > 0) return render(ctx, { error: `Too many attempts. Try again in ${wait} s.`, status: 429 });
      const current = ctx.form.get('current') ?? '';
      const password = ctx.form.get('password') ?? '';
      if ((await checkLogin(ctx.core.store, ctx.email, current))?.memberId !== ctx.member.id) {
        return render(ctx, { error: 'The current password is wrong.', status: 400 });
      }
      if (password !== ctx.form.get('confirm')) return render(ctx, { error: 'The new passwords differ.', status: 400 });
      try {
        // Ends every session of the member, this one included.
        await setMemberPassword(ctx.core.store, ctx.member.id, password);
      } catch (err) {
        if (err instanceof CredentialError) return render(ctx, { error: `New password: ${err.message}`, status: 400 });
        throw err;
      }
      await ctx.audit('login.password', loginTarget(ctx));
      ctx.res.writeHead(303, { location: '/login?changed=1', 'cache-control': 'no-store' }).end();
    },
  },
  {
    method: 'POST', path: '/account/sessions/others', audit: 'page', role: 'viewer',
    async handler(ctx) {
      const n = await ctx.core.sessions.endOthers(ctx.member.id, ctx.session.idHash);
      await ctx.audit('login.sign_out_others', loginTarget(ctx), { sessions: n });
      ctx.redirect('/account', n === 1 ? 'Signed out 1 other session.' : `Signed out ${n} other sessions.`);
    },
  },
];

/** The signed-in login as an audit target (its e-mail is the entry's actor label). */
export function loginTarget(ctx: PageContext): { type: string; id: string } {
  return { type: 'member', id: String(ctx.member.id) };
}

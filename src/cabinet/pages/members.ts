import { HttpError } from '../../api/http.js';
import { getMember, isRole, listMembers, MemberError, removeMember, ROLES, setMemberRole, type Member, type Role } from '../../store/index.js';
import type { PageContext, PageRoute } from '../context.js';
import { addInvitedMember, createLoginLink, CredentialError, INVITE_TTL_MS } from '../credentials.js';
import { html, type Html } from '../html.js';
import { forgetMemberIn } from '../member-data.js';
import { badge, copyable, csrfField, errorBox, pageHeader, time } from './ui.js';

/** `/members`: who signs in to the account and with which role; owners invite, change roles and remove. */

const ROLE_TEXT: Record<Role, string> = {
  owner: 'members, API keys, plan and payment settings, and everything a developer does',
  developer: 'endpoints, address watches, webhooks and payment orders',
  viewer: 'reads everything, changes nothing',
};

async function render(ctx: PageContext, opts: { error?: string; status?: number; invited?: { email: string; url: string; expiresAt: number } } = {}) {
  const members = await listMembers(ctx.core.store, ctx.account.id);
  const owner = ctx.can('owner');
  ctx.page({
    title: 'Members', nav: 'account', status: opts.status,
    body: html`${pageHeader('Members', `Who signs in to account ${ctx.account.id}. You are ${ctx.member.role === 'owner' ? 'an owner' : `a ${ctx.member.role}`}.`)}
${errorBox(opts.error)}
${opts.invited ? invitedCard(opts.invited) : ''}
<section class="card" aria-labelledby="members-title">
  <h2 id="members-title">Members</h2>
  <div class="table-wrap"><table id="members-table">
  <thead><tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">State</th><th scope="col">Two-factor</th>${owner ? html`<th scope="col"><span class="sr-only">Actions</span></th>` : ''}</tr></thead>
  <tbody>${members.map((m) => row(ctx, m, owner))}</tbody>
  </table></div>
</section>
${owner ? inviteCard(ctx) : ''}
<section class="card" aria-labelledby="roles-title">
  <h2 id="roles-title">Roles</h2>
  <dl class="kv">${ROLES.map((r) => html`<dt>${r}</dt><dd>${ROLE_TEXT[r]}</dd>`)}</dl>
  <p class="muted small">An API key acts with the role of the member who made it (keys made before members existed act as an owner). Removing a member revokes the keys they made.</p>
  ${ctx.member.role !== 'owner' || members.filter((m) => m.role === 'owner' && m.joinedAt).length > 1 ? html`<form method="post" action="/members/leave">
    ${csrfField(ctx)}<button type="submit" class="danger">Leave this account</button></form>` : ''}
</section>`,
  });
}

function row(ctx: PageContext, m: Member, owner: boolean): Html {
  const you = m.id === ctx.member.id;
  return html`<tr data-member="${m.email}">
  <td>${m.email}${you ? html` <span class="muted">(you)</span>` : ''}</td>
  <td>${m.role}</td>
  <td>${m.joinedAt ? html`joined ${time(m.joinedAt)}` : badge('invited', 'warn')}</td>
  <td>${m.twoFactor ? badge('on', 'ok') : badge('off', 'neutral')}</td>
  ${owner ? html`<td class="actions">
    <form method="post" action="/members/${m.id}/role" class="row-form">
      ${csrfField(ctx)}
      <label><span class="sr-only">Role of ${m.email}</span><select name="role" aria-label="Role of ${m.email}">${ROLES.map((r) => html`<option value="${r}"${r === m.role ? html` selected` : ''}>${r}</option>`)}</select></label>
      <button type="submit" class="small">Change role</button>
    </form>
    ${m.joinedAt ? '' : html`<form method="post" action="/members/${m.id}/invitation">${csrfField(ctx)}<button type="submit" class="small" aria-label="New link for ${m.email}">New link</button></form>`}
    ${you ? '' : html`<form method="post" action="/members/${m.id}/remove">${csrfField(ctx)}<button type="submit" class="small danger" aria-label="Remove ${m.email}">Remove</button></form>`}
  </td>` : ''}
</tr>`;
}

function inviteCard(ctx: PageContext): Html {
  return html`<section class="card" aria-labelledby="invite-title">
  <h2 id="invite-title">Invite a member</h2>
  <form method="post" action="/members/invite" class="row-form">
    ${csrfField(ctx)}
    <label>E-mail <input type="email" name="email" required maxlength="254" autocomplete="off"></label>
    <label>Role <select name="role" aria-label="Role">${ROLES.map((r) => html`<option value="${r}"${r === 'developer' ? html` selected` : ''}>${r}</option>`)}</select></label>
    <button type="submit" class="primary">Invite</button>
  </form>
  <p class="muted small">You get a one-time link to send them; it is valid for ${INVITE_TTL_MS / 86_400_000} days and lets them choose a password (and set up two-factor when the account requires it).</p>
</section>`;
}

function invitedCard(i: { email: string; url: string; expiresAt: number }): Html {
  return html`<section class="card" aria-labelledby="invited-title">
  <h2 id="invited-title">Invitation for ${i.email}</h2>
  <p>Send this link to ${i.email} over a private channel. It is shown only now, works once, and expires ${time(new Date(i.expiresAt).toISOString())}.</p>
  ${copyable(i.url, 'invitation link', { secret: true, id: 'invite-link' })}
</section>`;
}

/** Makes the member's set-password link and shows it, once: rendered, never redirected, so it travels in no URL or cookie. */
async function renderInvitation(ctx: PageContext, m: Member): Promise<void> {
  const link = await createLoginLink(ctx.core.store, { accountId: ctx.account.id, memberId: m.id }, { purpose: 'set-password', ttlMs: INVITE_TTL_MS });
  await render(ctx, { invited: { email: m.email, url: `${ctx.core.app.publicUrl().replace(/\/+$/, '')}/join/${link.token}`, expiresAt: link.expiresAt } });
}

async function target(ctx: PageContext): Promise<Member> {
  const id = Number(ctx.params.id);
  const m = Number.isSafeInteger(id) ? await getMember(ctx.core.store, id) : undefined;
  if (!m || m.accountId !== ctx.account.id) throw new HttpError(404, 'No such member');
  return m;
}

/** The last-owner rule and a taken e-mail come back to the form; anything else goes up. */
async function refusal(ctx: PageContext, err: unknown): Promise<void> {
  if (err instanceof MemberError && err.code === 'E_LAST_OWNER') return render(ctx, { error: err.message, status: 409 });
  // Only ever this account's own member (addInvitedMember asks nothing of other accounts).
  if (err instanceof CredentialError && err.code === 'E_EMAIL_TAKEN') return render(ctx, { error: err.message, status: 409 });
  if (err instanceof CredentialError) return render(ctx, { error: err.message, status: 400 });
  throw err;
}

export const memberRoutes: PageRoute[] = [
  { method: 'GET', path: '/members', handler: (ctx) => render(ctx) },
  {
    method: 'POST', path: '/members/invite', audit: 'page', role: 'owner',
    async handler(ctx) {
      const role = ctx.form.get('role');
      if (!isRole(role)) return render(ctx, { error: `Role: one of ${ROLES.join(', ')}`, status: 400 });
      try {
        const memberId = await addInvitedMember(ctx.core.store, ctx.account.id, ctx.form.get('email') ?? '', role);
        await ctx.audit('member.invite', { type: 'member', id: String(memberId) }, { email: ctx.form.get('email') ?? '', role });
        await renderInvitation(ctx, (await getMember(ctx.core.store, memberId))!);
      } catch (err) {
        await refusal(ctx, err);
      }
    },
  },
  {
    // An invitation lost or expired: a new link (the old ones stop working).
    method: 'POST', path: '/members/{id}/invitation', audit: 'page', role: 'owner',
    async handler(ctx) {
      const m = await target(ctx);
      if (m.joinedAt) return render(ctx, { error: `${m.email} has joined already; a lost password is reset by your operator (rpcctl admin members reset).`, status: 400 });
      await ctx.core.store.db.deleteFrom('cabinet_login_links').where('member_id', '=', m.id).execute();
      await ctx.audit('member.invitation_renew', { type: 'member', id: String(m.id) }, { email: m.email });
      await renderInvitation(ctx, m);
    },
  },
  {
    method: 'POST', path: '/members/{id}/role', audit: 'page', role: 'owner',
    async handler(ctx) {
      const m = await target(ctx);
      const role = ctx.form.get('role');
      if (!isRole(role)) return render(ctx, { error: `Role: one of ${ROLES.join(', ')}`, status: 400 });
      try {
        await setMemberRole(ctx.core.store, ctx.account.id, m.id, role);
      } catch (err) {
        return refusal(ctx, err);
      }
      await ctx.audit('member.role', { type: 'member', id: String(m.id) }, { email: m.email, from: m.role, to: role });
      ctx.redirect('/members', `${m.email} is now ${role === 'owner' ? 'an owner' : `a ${role}`}.`);
    },
  },
  {
    method: 'POST', path: '/members/{id}/remove', audit: 'page', role: 'owner',
    async handler(ctx) {
      const m = await target(ctx);
      if (m.id === ctx.member.id) return render(ctx, { error: 'To remove yourself, use "Leave this account".', status: 400 });
      try {
        const { keysRevoked } = await removeMember(ctx.core.store, ctx.account.id, m.id, forgetMemberIn);
        await ctx.audit('member.remove', { type: 'member', id: String(m.id) }, { email: m.email, keys_revoked: keysRevoked });
        ctx.redirect('/members', `${m.email} was removed${keysRevoked ? `; the ${keysRevoked} API key${keysRevoked === 1 ? '' : 's'} they made ${keysRevoked === 1 ? 'was' : 'were'} revoked` : ''}.`);
      } catch (err) {
        await refusal(ctx, err);
      }
    },
  },
  {
    method: 'POST', path: '/members/leave', audit: 'page', role: 'viewer',
    async handler(ctx) {
      try {
        await removeMember(ctx.core.store, ctx.account.id, ctx.member.id, forgetMemberIn);
      } catch (err) {
        return refusal(ctx, err);
      }
      await ctx.audit('member.leave', { type: 'member', id: String(ctx.member.id) }, { email: ctx.member.email });
      // The session went with the member.
      ctx.res.writeHead(303, { location: '/login', 'cache-control': 'no-store' }).end();
    },
  },
];

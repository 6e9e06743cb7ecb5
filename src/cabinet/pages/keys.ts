import { allowedIpsBody } from '../../api/schemas.js';
import { validate } from '../../api/invoke.js';
import { createApiKey, getAccountKeyByPrefix, listApiKeys, revokeAccountKey, setKeyAllowedIps, type ApiKeyInfo } from '../../store/index.js';
import type { PageContext, PageRoute } from '../context.js';
import { html } from '../html.js';
import { attempt, copyable, csrfField, errorBox, pageHeader, time } from './ui.js';
import { allowlistField, allowlistMessage, readAllowlist } from './allowlist.js';
import { HttpError } from '../../api/http.js';

/** At most this many live keys per account: enough for rotation and a few services. */
const MAX_KEYS = 20;

/** Same rules as an endpoint's allowlist (the Public API's schema), so both read the same. */
function parseAllowlist(text: string | null): string[] {
  const typed = readAllowlist(text);
  try {
    const { allowed_ips } = validate(allowedIpsBody, { allowed_ips: typed.entries }) as { allowed_ips: string[] };
    return [...new Set(allowed_ips)];
  } catch (err) {
    if (err instanceof HttpError) throw new HttpError(400, allowlistMessage(err.message, typed));
    throw err;
  }
}

/** A form shown again after a mistake: what was typed, and the message by the field it is about. */
interface Retry {
  name?: string;
  allowlist: string;
  allowlistError?: string;
}

function lastUsed(ctx: PageContext, k: ApiKeyInfo): string | null {
  const pending = ctx.core.keyUse.pending(k.api_key);
  return pending !== undefined ? new Date(pending).toISOString() : k.last_used_at;
}

async function renderKeys(ctx: PageContext, opts: {
  error?: string; created?: ApiKeyInfo & { secret: string }; status?: number; create?: Retry; edit?: Retry & { prefix: string };
} = {}) {
  const keys = (await listApiKeys(ctx.core.store, ctx.account.id)).filter((k) => !k.revoked_at);
  const base = `${ctx.url.protocol}//${ctx.req.headers.host ?? ''}`;
  ctx.page({
    title: 'API keys', nav: 'keys', status: opts.status,
    body: html`${pageHeader('API keys', 'Keys sign requests to the Public API. The secret is shown once, when the key is made.')}
${opts.created ? html`<section class="card reveal" aria-labelledby="new-key-title" id="new-key">
  <h2 id="new-key-title">Key created — copy the secret now</h2>
  <p>This is the only time the secret is shown. Store it in your secret manager; if it is lost, make a new key and revoke this one.</p>
  <dl class="kv">
    <dt>API key</dt><dd>${copyable(opts.created.api_key, 'API key')}</dd>
    <dt>Secret</dt><dd>${copyable(opts.created.secret, 'secret', { secret: true, id: 'new-secret' })}</dd>
  </dl>
  <details><summary>Use it from the command line</summary>
  <pre><code>PUBLIC_API_BASE=${base} PUBLIC_API_KEY=${opts.created.api_key} \\
PUBLIC_API_SECRET=… npx rpcctl endpoints list</code></pre></details>
</section>` : ''}
<section class="card" aria-labelledby="keys-title">
  <h2 id="keys-title">Active keys</h2>
  ${keys.length === 0 ? html`<p class="empty">No keys yet. Create one below.</p>` : html`<div class="table-wrap"><table id="keys-table" class="cards">
  <thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Allowed IPs</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
  <tbody>${keys.map((k) => {
    const edit = opts.edit?.prefix === k.prefix ? opts.edit : undefined;
    return html`<tr data-key="${k.prefix}">
    <td data-label="Name">${k.name ?? html`<span class="muted">unnamed</span>`}</td>
    <td data-label="Prefix"><code class="prefix">${k.prefix}…</code></td>
    <td data-label="Created">${time(k.created_at)}</td>
    <td data-label="Last used">${time(lastUsed(ctx, k))}</td>
    <td data-label="Allowed IPs">
      <details class="inline-edit"${edit ? html` open` : ''}><summary>${k.allowed_ips.length ? k.allowed_ips.join(', ') : html`<span class="muted">any address</span>`}</summary>
        <form method="post" action="/keys/${k.prefix}/allowlist" class="stack">
          ${csrfField(ctx)}
          ${allowlistField({ id: `allow-${k.prefix}`, label: 'Allowed client IPs', value: edit ? edit.allowlist : k.allowed_ips.join('\n'), error: edit?.allowlistError })}
          <button type="submit" class="small">Save allowlist</button>
        </form>
      </details>
    </td>
    <td class="actions"><a class="button danger small" href="/keys/${k.prefix}/revoke">Revoke</a></td>
  </tr>`;
  })}</tbody></table></div>`}
</section>
<section class="card" aria-labelledby="create-key-title">
  <h2 id="create-key-title">Create a key</h2>
  ${errorBox(opts.error)}
  <form method="post" action="/keys" class="stack narrow-form">
    ${csrfField(ctx)}
    <label>Name <input name="name" maxlength="100" placeholder="e.g. production backend" value="${opts.create?.name ?? ''}"></label>
    ${allowlistField({ id: 'new-key-allow', label: 'Allowed IPs', value: opts.create?.allowlist ?? '', error: opts.create?.allowlistError })}
    <div><button type="submit" class="primary">Create key</button></div>
  </form>
</section>`,
  });
}

async function ownKey(ctx: PageContext): Promise<ApiKeyInfo> {
  const key = await getAccountKeyByPrefix(ctx.core.store, ctx.account.id, ctx.params.prefix!);
  if (!key) throw new HttpError(404, 'Key not found');
  return key;
}

export const keyRoutes: PageRoute[] = [
  { method: 'GET', path: '/keys', handler: (ctx) => renderKeys(ctx) },
  {
    method: 'POST', path: '/keys', audit: 'page', role: 'owner',
    async handler(ctx) {
      const typed = { name: ctx.form.get('name') ?? '', allowlist: ctx.form.get('allowed_ips') ?? '' };
      const allowed = await attempt(async () => parseAllowlist(typed.allowlist));
      if (!allowed.ok) return renderKeys(ctx, { status: 400, create: { ...typed, allowlistError: allowed.error } });
      const result = await attempt(async () => {
        const name = typed.name.trim();
        if (name.length > 100) throw new HttpError(400, 'name: must be at most 100 characters');
        const live = (await listApiKeys(ctx.core.store, ctx.account.id)).filter((k) => !k.revoked_at).length;
        if (live >= MAX_KEYS) throw new HttpError(400, `Key limit reached: at most ${MAX_KEYS} active keys; revoke one first`);
        return createApiKey(ctx.core.store, { accountId: ctx.account.id, name: name || null, allowedIps: allowed.value, createdByMember: ctx.member.id });
      });
      if (!result.ok) return renderKeys(ctx, { error: result.error, status: 400, create: typed });
      await ctx.audit('key.create', { type: 'key', id: result.value.prefix }, { name: result.value.name, allowed_ips: result.value.allowed_ips });
      // Rendered, not redirected: the secret must never travel in a URL or a cookie.
      await renderKeys(ctx, { created: result.value });
    },
  },
  {
    method: 'POST', path: '/keys/{prefix}/allowlist', audit: 'page', role: 'owner',
    async handler(ctx) {
      const key = await ownKey(ctx);
      const result = await attempt(async () => parseAllowlist(ctx.form.get('allowed_ips')));
      if (!result.ok) return renderKeys(ctx, { status: 400, edit: { prefix: key.prefix, allowlist: ctx.form.get('allowed_ips') ?? '', allowlistError: result.error } });
      await setKeyAllowedIps(ctx.core.store, ctx.account.id, key.api_key, result.value);
      await ctx.audit('key.allowlist', { type: 'key', id: key.prefix }, { allowed_ips: result.value });
      ctx.redirect('/keys', `Allowlist of ${key.prefix}… saved (applies within a second).`);
    },
  },
  {
    method: 'GET', path: '/keys/{prefix}/revoke', role: 'owner',
    async handler(ctx) {
      const key = await ownKey(ctx);
      ctx.page({
        title: 'Revoke key', nav: 'keys',
        body: html`<section class="card narrow" aria-labelledby="revoke-title">
  <h1 id="revoke-title">Revoke key ${key.prefix}…?</h1>
  <p>Requests signed with ${key.name ? html`<strong>${key.name}</strong>` : 'this key'} will be refused within a second. This cannot be undone.</p>
  <form method="post" action="/keys/${key.prefix}/revoke" class="actions-row">
    ${csrfField(ctx)}
    <button type="submit" class="danger">Revoke key</button>
    <a class="button" href="/keys">Cancel</a>
  </form>
</section>`,
      });
    },
  },
  {
    method: 'POST', path: '/keys/{prefix}/revoke', audit: 'page', role: 'owner',
    async handler(ctx) {
      const key = await ownKey(ctx);
      await revokeAccountKey(ctx.core.store, ctx.account.id, key.api_key);
      await ctx.audit('key.revoke', { type: 'key', id: key.prefix });
      ctx.redirect('/keys', `Key ${key.prefix}… revoked.`);
    },
  },
];

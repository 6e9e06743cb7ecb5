import { defaultDataDir, findConfigFile, loadConfig, secretsFromFiles, type Config } from '../../config/index.js';
import {
  createAccount, createApiKey, getAccount, listAccounts, listApiKeys, listMembers, memberByEmail, primaryOwner, recordAudit, revokeApiKey,
  rotateWebhookSecret, setAccountPlan, Store, storeUrl, webhookSecretOf, type AccountRow, type AuditChange, type Member,
} from '../../store/index.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isValidIp } from '../../util/ip.js';
import { UPSTREAM_STATE_FILE, type UpstreamStateFile } from '../../gateway/probe.js';
import { CliError, usageError, type CliIO } from '../io.js';
import {
  checkPassword, createLoginLink, MIN_PASSWORD_LENGTH, CredentialError, LOGIN_LINK_TTL_MS, loginOf, normalizeEmail, RESET_LINK_TTL_MS, setLogin,
} from '../../cabinet/credentials.js';
import { resetTwoFactor, twoFactorState } from '../../cabinet/two-factor.js';
import { canPrompt, readSecret } from '../prompts.js';
import { Output } from '../output.js';
import { confirmOrYes } from '../prompts.js';

// Here rather than in command.ts: command.ts loads this file, so this file must not import it.
export interface AdminOptions {
  config?: string;
  dataDir?: string;
  database?: string;
  redis?: string;
}

type Opts = AdminOptions & { json?: boolean; color?: boolean; yes?: boolean } & Record<string, unknown>;

/**
 * An operator's change in the account's audit log, after it is made. A failed write does not undo
 * the change (it is done); it is said on stderr, never silently dropped.
 */
async function audited(store: Store, out: Output, entry: Omit<AuditChange, 'actor' | 'ip'>): Promise<void> {
  try {
    await recordAudit(store, { ...entry, actor: { kind: 'admin', id: 'admin', label: 'rpcctl admin' }, ip: null });
  } catch (err) {
    out.note(`warning: the change is made, but its audit log entry could not be written: ${(err as Error).message}`);
  }
}

/** The store of the data dir (`--data-dir`, else the default), opened as `serve` would; closed after `fn`. */
export async function withStore<T>(io: CliIO, opts: Opts, fn: (store: Store, out: Output, config: Config) => Promise<T>): Promise<T> {
  const dataDir = opts.dataDir ?? defaultDataDir(io.env);
  const explicit = opts.config !== undefined;
  // As serve reads them: `${VAR}` in the config, `*_file` and `RPCCTL_*_FILE` secrets.
  const env = secretsFromFiles(io.env);
  const config = loadConfig(findConfigFile(dataDir, opts.config), env);
  const store = await Store.open({ dataDir, config, syncCatalog: explicit ? 'always' : 'if-empty', env, url: storeUrl(opts.database, config, env) });
  try {
    return await fn(store, new Output(io, opts), config);
  } finally {
    await store.close();
  }
}

function accountId(value: unknown, flag = '--account'): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw usageError(`${flag} must be a positive account id, got "${String(value)}"`);
  return n;
}

async function mustGetAccount(store: Store, id: number): Promise<AccountRow> {
  const account = await getAccount(store, id);
  if (!account) throw new CliError(`account ${id} not found`);
  return account;
}

function presentAccount(store: Store, a: AccountRow) {
  const plan = store.catalog.plan(a.plan_id);
  return { user_id: a.id, name: a.name, plan: plan?.slug ?? null, plan_id: a.plan_id, created_at: a.created_at };
}

/** Credential mistakes are the caller's: exit 2 with the message. */
function credentialsUsage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof CredentialError) throw usageError(err.message);
    throw err;
  }
}

/**
 * A new cabinet password: from stdin in scripts; on a terminal, typed twice, since a typo
 * in a masked field would lock the account's owner out with a password nobody knows.
 */
async function readPassword(io: CliIO): Promise<string> {
  // The rule is in the question and checked as it is answered, not after it was typed twice.
  const rule = (value: string): true | string => {
    try {
      checkPassword(value);
      return true;
    } catch (err) {
      return (err as Error).message;
    }
  };
  const password = await readSecret(io, `Cabinet password (at least ${MIN_PASSWORD_LENGTH} characters)`, 'give the password on stdin (or run on a terminal to be asked)', rule);
  credentialsUsage(() => checkPassword(password));
  if (canPrompt(io)) {
    const again = await readSecret(io, 'Cabinet password (again)', 'the password again');
    if (again !== password) throw usageError('the two passwords differ; nothing was changed');
  }
  return password;
}

export async function accountsCreate(io: CliIO, opts: Opts): Promise<void> {
  const email = opts.email === undefined ? undefined : credentialsUsage(() => normalizeEmail(String(opts.email)));
  if (opts.password === false && email === undefined) throw usageError('--no-password goes with --email');
  // Asked before anything is written, so a bad password leaves no half-made account.
  const password = email !== undefined && opts.password !== false ? await readPassword(io) : undefined;
  await withStore(io, opts, async (store, out) => {
    const plan = opts.plan === undefined ? store.catalog.plans[0] : store.catalog.planBySlug(String(opts.plan));
    if (!plan) throw usageError(`unknown plan "${String(opts.plan)}" (one of: ${store.catalog.plans.map((p) => p.slug).join(', ')})`);
    if (email !== undefined && (await memberByEmail(store, email))) {
      throw usageError(`${email} already signs in to another account`);
    }
    const row = await createAccount(store, { planId: plan.id, name: (opts.name as string | undefined) ?? null });
    if (email !== undefined) await setLogin(store, row.id, { email, password });
    await audited(store, out, { accountId: row.id, action: 'account.create', target: { type: 'account', id: String(row.id) }, changes: { plan: plan.slug } });
    const account = { ...presentAccount(store, row), ...(email !== undefined ? { email } : {}) };
    if (out.json) return out.printJson(account);
    out.print(String(account.user_id));
    out.note(`Created account ${account.user_id} on the ${plan.name} plan. Next: rpcctl admin keys create --account ${account.user_id}`);
  });
}

export async function accountsList(io: CliIO, opts: Opts): Promise<void> {
  await withStore(io, opts, async (store, out) => {
    const rows = (await listAccounts(store)).map((a) => presentAccount(store, a));
    if (out.json) return out.printJson(rows);
    out.table(rows, [
      { header: 'USER ID', value: (r) => r.user_id, keep: true },
      { header: 'NAME', value: (r) => r.name, keep: true },
      { header: 'PLAN', value: (r) => r.plan },
      { header: 'CREATED', value: (r) => out.when(r.created_at) },
    ], 'No accounts yet: rpcctl admin accounts create --plan SLUG');
  });
}

export async function accountsGet(io: CliIO, opts: Opts & { userId: string }): Promise<void> {
  await withStore(io, opts, async (store, out) => {
    const account = presentAccount(store, await mustGetAccount(store, accountId(opts.userId, 'user_id')));
    const keys = await listApiKeys(store, account.user_id);
    const owner = await primaryOwner(store, account.user_id);
    const email = owner?.email ?? null;
    const tf = owner ? await twoFactorState(store, { accountId: owner.accountId, memberId: owner.id })
      : { enabled: false, required: false, recoveryLeft: 0 };
    const two_factor = { enabled: tf.enabled, required: tf.required, recovery_codes_left: tf.recoveryLeft };
    if (out.json) return out.printJson({ ...account, email, two_factor, keys });
    out.fields([
      ['user_id', account.user_id], ['name', account.name], ['plan', account.plan], ['email', email ?? '(no cabinet sign-in)'], ['created_at', account.created_at],
      ['two-factor', `${tf.enabled ? `on, ${tf.recoveryLeft} recovery codes left` : 'off'}${tf.required ? ' (required for every member)' : ''}`],
      ['keys', keys.filter((k) => !k.revoked_at).map((k) => k.prefix).join(', ') || '(none)'],
    ]);
  });
}

export async function accountsSetPlan(io: CliIO, opts: Opts & { userId: string }): Promise<void> {
  await withStore(io, opts, async (store, out) => {
    const plan = store.catalog.planBySlug(String(opts.plan));
    if (!plan) throw usageError(`unknown plan "${String(opts.plan)}" (one of: ${store.catalog.plans.map((p) => p.slug).join(', ')})`);
    await mustGetAccount(store, accountId(opts.userId, 'user_id'));
    const account = presentAccount(store, await setAccountPlan(store, accountId(opts.userId, 'user_id'), plan.id));
    await audited(store, out, { accountId: account.user_id, action: 'account.plan', target: { type: 'account', id: String(account.user_id) }, changes: { plan: plan.slug } });
    if (out.json) return out.printJson(account);
    out.note(`Account ${account.user_id} is now on the ${plan.name} plan.`);
  });
}

export async function keysCreate(io: CliIO, opts: Opts): Promise<void> {
  const allowedIps = (opts.allowedIp as string[] | undefined) ?? [];
  for (const ip of allowedIps) if (!isValidIp(ip)) throw usageError(`--allowed-ip: "${ip}" is not an IPv4 or IPv6 address`);
  await withStore(io, opts, async (store, out) => {
    const account = await mustGetAccount(store, accountId(opts.account));
    const key = await createApiKey(store, { accountId: account.id, allowedIps, name: (opts.name as string | undefined) ?? null });
    await audited(store, out, { accountId: account.id, action: 'key.create', target: { type: 'key', id: key.prefix }, changes: { name: key.name, allowed_ips: key.allowed_ips } });
    if (out.json) return out.printJson(key);
    out.fields([['api_key', key.api_key], ['secret', key.secret], ['account', key.account_id], ['allowed_ips', key.allowed_ips.join(', ') || '(any)']]);
    out.note('The secret is shown only now. Store it safely: rpcctl profile add NAME --api-key ... reads it from stdin.');
  });
}

export async function keysList(io: CliIO, opts: Opts): Promise<void> {
  await withStore(io, opts, async (store, out) => {
    const keys = await listApiKeys(store, opts.account === undefined ? undefined : accountId(opts.account));
    if (out.json) return out.printJson(keys);
    out.table(keys, [
      { header: 'PREFIX', value: (k) => k.prefix, keep: true },
      { header: 'ACCOUNT', value: (k) => k.account_id },
      { header: 'NAME', value: (k) => k.name },
      { header: 'ALLOWED IPS', value: (k) => k.allowed_ips.join(',') || 'any' },
      { header: 'CREATED', value: (k) => out.when(k.created_at) },
      { header: 'STATUS', value: (k) => (k.revoked_at ? `revoked ${out.when(k.revoked_at)}` : 'active') },
    ]);
  });
}

export async function keysRevoke(io: CliIO, opts: Opts & { key: string }): Promise<void> {
  const { key } = opts;
  await withStore(io, opts, async (store, out) => {
    const match = (await listApiKeys(store)).filter((k) => k.api_key === key || k.prefix === key);
    if (match.length !== 1) throw new CliError(`no single key matches "${key}" (give the full key id or a unique prefix)`);
    if (!match[0]!.revoked_at) await confirmOrYes(io, opts, `Revoke key ${match[0]!.prefix} of account ${match[0]!.account_id}? Requests signed with it fail from now on.`);
    const revoked = await revokeApiKey(store, key);
    if (!revoked) throw new CliError(`no single key matches "${key}" (give the full key id or a unique prefix)`);
    if (!match[0]!.revoked_at) await audited(store, out, { accountId: revoked.account_id, action: 'key.revoke', target: { type: 'key', id: revoked.prefix } });
    if (out.json) return out.printJson(revoked);
    out.note(`Revoked key ${revoked.prefix} of account ${revoked.account_id}.`);
  });
}

export async function webhookSecret(io: CliIO, opts: Opts): Promise<void> {
  await withStore(io, opts, async (store, out) => {
    const account = await mustGetAccount(store, accountId(opts.account));
    if (opts.rotate) await confirmOrYes(io, opts, `Replace the webhook signing secret of account ${account.id}? Receivers verifying with the old one will refuse new deliveries.`);
    const secret = opts.rotate ? await rotateWebhookSecret(store, account.id) : webhookSecretOf(store, account);
    if (opts.rotate) await audited(store, out, { accountId: account.id, action: 'webhook.secret_rotate', target: { type: 'webhook' } });
    if (out.json) return out.printJson({ user_id: account.id, secret });
    out.print(secret);
  });
}

export async function plansList(io: CliIO, opts: Opts): Promise<void> {
  await withStore(io, opts, async (store, out) => {
    if (out.json) return out.printJson(store.catalog.plans);
    out.table(store.catalog.plans, [
      // Narrow: the slug (what --plan takes) and the limits stay; the networks, watch slots and
      // endpoints are left out before a number is cut.
      { header: 'ID', value: (p) => p.id, keep: true },
      { header: 'SLUG', value: (p) => p.slug, keep: true },
      { header: 'NAME', value: (p) => p.name },
      { header: 'CREDITS', value: (p) => p.included_credits, priority: 2 },
      { header: 'RPS', value: (p) => p.rps_limit, priority: 2 },
      { header: 'ENDPOINTS', value: (p) => p.endpoints_limit, priority: -1 },
      { header: 'WATCH SLOTS', value: (p) => p.webhook_address_slots, priority: -2 },
      { header: 'NETWORKS', value: (p) => (p.network_limit ?? 'any') + (p.allowed_network_slugs.length ? ` (${p.allowed_network_slugs.join(',')})` : ''), priority: -3 },
    ]);
  });
}

export async function networksList(io: CliIO, opts: Opts): Promise<void> {
  await withStore(io, opts, async (store, out) => {
    const rows = store.catalog.networks.flatMap((n) => n.environments.map((e) => ({
      network_id: n.id, network: n.slug, name: n.name, family: n.family,
      environment_id: e.id, environment: e.slug, upstreams: e.upstreams, confirmations: e.confirmations,
    })));
    if (out.json) return out.printJson(rows);
    out.table(rows, [
      { header: 'NETWORK', value: (r) => r.network },
      { header: 'ENV', value: (r) => r.environment },
      { header: 'ENV ID', value: (r) => r.environment_id },
      { header: 'FAMILY', value: (r) => r.family },
      { header: 'UPSTREAMS', value: (r) => r.upstreams.join(' ') },
    ]);
  });
}

export async function accountsSetPassword(io: CliIO, opts: Opts & { userId: string }): Promise<void> {
  const userId = accountId(opts.userId, 'user_id');
  const email = opts.email === undefined ? undefined : credentialsUsage(() => normalizeEmail(String(opts.email)));
  const password = await readPassword(io);
  await withStore(io, opts, async (store, out) => {
    await mustGetAccount(store, userId);
    if (email === undefined && !(await loginOf(store, userId))) throw usageError(`account ${userId} has no sign-in e-mail yet; add --email`);
    try {
      await setLogin(store, userId, { email, password });
    } catch (err) {
      if (err instanceof CredentialError) throw usageError(err.message);
      throw err;
    }
    const login = await loginOf(store, userId);
    await audited(store, out, { accountId: userId, action: 'login.password', target: { type: 'login', id: String(userId) } });
    if (out.json) return out.printJson({ user_id: userId, email: login?.email ?? null });
    out.note(`Password of ${login?.email ?? `account ${userId}`} set; its cabinet sessions were ended.`);
  });
}

export async function accountsResetTwoFactor(io: CliIO, opts: Opts & { userId: string }): Promise<void> {
  const userId = accountId(opts.userId, 'user_id');
  await withStore(io, opts, async (store, out) => {
    await mustGetAccount(store, userId);
    const login = await primaryOwner(store, userId);
    if (!login) throw usageError(`account ${userId} has no cabinet login`);
    const wasOn = await resetTwoFactor(store, login.id);
    await audited(store, out, { accountId: userId, action: 'two_factor.reset', target: { type: 'member', id: String(login.id) }, changes: { was_on: wasOn } });
    if (out.json) return out.printJson({ user_id: userId, email: login.email, two_factor_was_on: wasOn });
    out.note(wasOn ? `Two-factor sign-in of ${login.email} is off; its cabinet sessions were ended.`
      : `${login.email} had no two-factor sign-in; its cabinet sessions were ended.`);
  });
}

export async function loginLink(io: CliIO, opts: Opts): Promise<void> {
  await withStore(io, opts, async (store, out, config) => {
    const member = await linkMember(store, opts);
    const account = await mustGetAccount(store, member.accountId);
    const base = cabinetBase(config, opts);
    const { token, expiresAt } = await createLoginLink(store, { accountId: account.id, memberId: member.id });
    await audited(store, out, { accountId: account.id, action: 'login.link', target: { type: 'member', id: String(member.id) } });
    const url = `${base}/login/link/${token}`;
    const expires_at = new Date(expiresAt).toISOString();
    if (out.json) return out.printJson({ user_id: account.id, url, expires_at });
    out.print(url);
    out.note(`Valid for ${LOGIN_LINK_TTL_MS / 60_000} minutes, once. Send it to the merchant over a private channel.`);
  });
}

/** Who a sign-in link is for: the member of `--email`, or the first owner of `--account`. */
async function linkMember(store: Store, opts: Opts): Promise<Member> {
  if ((opts.email === undefined) === (opts.account === undefined)) throw usageError('give --email (a member) or --account (its first owner)');
  if (opts.email !== undefined) {
    const email = credentialsUsage(() => normalizeEmail(String(opts.email)));
    const member = await memberByEmail(store, email);
    if (!member) throw usageError(`${email} does not sign in to any account (see: rpcctl admin members list --account ID)`);
    return member;
  }
  const account = await mustGetAccount(store, accountId(opts.account));
  const owner = await primaryOwner(store, account.id);
  if (!owner) throw usageError(`account ${account.id} has no cabinet login yet: rpcctl admin accounts set-password ${account.id} --email ADDRESS`);
  return owner;
}

export async function membersList(io: CliIO, opts: Opts): Promise<void> {
  await withStore(io, opts, async (store, out) => {
    const account = await mustGetAccount(store, accountId(opts.account));
    const rows = (await listMembers(store, account.id)).map(presentMember);
    if (out.json) return out.printJson(rows);
    out.table(rows, [
      // Narrow: the time, then two-factor, are left out before a long e-mail is cut.
      { header: 'ID', value: (r) => r.member_id, keep: true },
      { header: 'E-MAIL', value: (r) => r.email, priority: 1 },
      { header: 'ROLE', value: (r) => r.role, keep: true },
      { header: 'STATE', value: (r) => (r.joined_at ? 'joined' : 'invited'), priority: 2 },
      { header: '2FA', value: (r) => (r.two_factor ? 'on' : 'off'), priority: -2 },
      { header: 'JOINED', value: (r) => (r.joined_at ? out.when(r.joined_at) : ''), priority: -1 },
    ], `Account ${account.id} has no cabinet members: rpcctl admin accounts set-password ${account.id} --email ADDRESS`);
  });
}

/** A member who lost their password or phone: a link to set a new password, and/or two-factor off (their sessions end). */
export async function membersReset(io: CliIO, opts: Opts): Promise<void> {
  if (!opts.passwordLink && !opts.remove2fa) throw usageError('say what to reset: --password-link, --remove-2fa, or both');
  const email = credentialsUsage(() => normalizeEmail(String(opts.email)));
  await withStore(io, opts, async (store, out, config) => {
    const account = await mustGetAccount(store, accountId(opts.account));
    const member = await memberByEmail(store, email, account.id);
    if (!member) throw usageError(`account ${account.id} has no member ${email} (see: rpcctl admin members list --account ${account.id})`);
    const base = opts.passwordLink ? cabinetBase(config, opts) : '';
    const twoFactorWasOn = opts.remove2fa ? await resetTwoFactor(store, member.id) : undefined;
    const link = opts.passwordLink
      ? await createLoginLink(store, { accountId: account.id, memberId: member.id }, { purpose: 'set-password', ttlMs: RESET_LINK_TTL_MS })
      : undefined;
    const url = link && `${base}/join/${link.token}`;
    await audited(store, out, {
      accountId: account.id, action: 'member.reset', target: { type: 'member', id: String(member.id) },
      changes: { email: member.email, password_link: link !== undefined, ...(twoFactorWasOn !== undefined ? { two_factor_was_on: twoFactorWasOn } : {}) },
    });
    if (out.json) {
      return out.printJson({
        ...presentMember(member), ...(twoFactorWasOn !== undefined ? { two_factor_was_on: twoFactorWasOn } : {}),
        ...(link ? { password_link: url, expires_at: new Date(link.expiresAt).toISOString() } : {}),
      });
    }
    if (twoFactorWasOn !== undefined) {
      out.note(twoFactorWasOn ? `Two-factor sign-in of ${email} is off; their cabinet sessions were ended.` : `${email} had no two-factor sign-in.`);
    }
    if (url) {
      out.print(url);
      out.note(`Sets a new password for ${email}: valid ${RESET_LINK_TTL_MS / 3600_000} hours, once. Send it over a private channel.`);
    }
  });
}

function presentMember(m: Member) {
  return { member_id: m.id, user_id: m.accountId, email: m.email, role: m.role, joined_at: m.joinedAt, invited_at: m.createdAt, two_factor: m.twoFactor };
}

function cabinetBase(config: Config, opts: Opts): string {
  const base = opts.baseUrl !== undefined ? String(opts.baseUrl).replace(/\/+$/, '') : defaultCabinetBase(config);
  if (!/^https?:\/\/[^/]+/.test(base)) throw usageError(`--base-url must be an http(s) URL, got "${base}"`);
  return base;
}

function defaultCabinetBase(config: Config): string {
  const host = config.api.host === '0.0.0.0' || config.api.host === '::' ? '127.0.0.1' : config.api.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.api.port}`;
}

/**
 * The gateway's upstream state lives in the serving process; it writes it to the data dir after
 * every probe round (URLs already stripped of secrets), and this reads it: no network listener
 * to secure, and it works while the store is busy.
 */
export async function upstreamsShow(io: CliIO, opts: Opts): Promise<void> {
  const dataDir = opts.dataDir ?? defaultDataDir(io.env);
  const file = join(dataDir, UPSTREAM_STATE_FILE);
  let state: UpstreamStateFile;
  try {
    state = JSON.parse(readFileSync(file, 'utf8')) as UpstreamStateFile;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new CliError(`no upstream state in ${dataDir}: is rpcctl serve running on this data dir (and has an endpoint been created)?`);
    }
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const out = new Output(io, opts);
  if (out.json) return out.printJson(state);
  const rows = state.environments.flatMap((e) => e.upstreams.map((u) => ({ env: `${e.network}-${e.environment}`, ...u })));
  out.table(rows, [
    { header: 'ENV', value: (r) => r.env },
    { header: 'UPSTREAM', value: (r) => r.url },
    { header: 'STATUS', value: (r) => r.status },
    { header: 'HEAD', value: (r) => r.head ?? '-' },
    { header: 'LAG', value: (r) => r.lag ?? '-' },
    { header: 'LATENCY MS', value: (r) => r.latency_ms ?? '-' },
    { header: 'ERROR RATE', value: (r) => r.error_rate },
    { header: 'REQUESTS', value: (r) => r.requests },
    { header: 'LAST ERROR', value: (r) => r.last_error ?? '' },
  ]);
  const age = Math.round((Date.now() - Date.parse(state.written_at)) / 1000);
  const c = state.cache;
  out.note(`As of ${state.written_at} (${age} s ago), from process ${state.pid}.`
    + (c ? ` Cache: ${c.entries} answers, ${Math.round(c.bytes / 1024)} KiB, ${c.hits} hits / ${c.misses} misses, ${c.dropped} dropped by reorgs.` : ''));
}

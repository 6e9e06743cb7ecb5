import type { CommandImpl } from '../action.js';
import { checkBaseUrl, clientFor, DEFAULT_BASE_URL, envValue } from '../context.js';
import { CliError, usageError } from '../io.js';
import { Output } from '../output.js';
import { checkProfileName, noProfile, ProfileStore, secretHint, type Profile } from '../profiles.js';
import { confirmOrYes, readSecret } from '../prompts.js';

/** What `profile list --json` and friends show: everything but the secret. */
export function presentProfile(name: string, p: Profile, selected: string | undefined) {
  return { name, base_url: p.base_url, api_key: p.api_key, secret: secretHint(p.secret), selected: name === selected };
}

export const add: CommandImpl<{ name: string; apiKey: string; verify: boolean }> = async (io, opts) => {
  const name = checkProfileName(opts.name);
  const baseUrl = checkBaseUrl(opts.baseUrl ?? envValue(io.env, 'PUBLIC_API_BASE') ?? DEFAULT_BASE_URL);
  const secret = await readSecret(io, 'API secret', 'no secret on stdin: pipe it in, e.g. rpcctl profile add NAME --api-key KEY < secret.txt');
  const profile: Profile = { base_url: baseUrl, api_key: opts.apiKey, secret };
  const out = new Output(io, opts);
  if (opts.verify) {
    const api = await clientFor({ baseUrl, apiKey: opts.apiKey, secret, profile: name }, io, opts);
    try {
      const me = await api.account();
      out.note(`Verified: account ${me.user_id}${me.plan ? ` on the ${me.plan.name} plan` : ''}.`);
    } finally {
      await api.close();
    }
  }
  const store = await ProfileStore.open(io.env);
  store.save(name, profile);
  if (out.json) return out.printJson(presentProfile(name, profile, store.selected()));
  out.note(`Saved profile "${name}" in ${store.path}${store.selected() === name ? ' (selected)' : `. Use it: rpcctl profile use ${name}`}`);
};

export const list: CommandImpl = async (io, opts) => {
  const store = await ProfileStore.open(io.env);
  const selected = store.selected();
  const rows = store.list().map(([name, p]) => presentProfile(name, p, selected));
  const out = new Output(io, opts);
  if (out.json) return out.printJson(rows);
  out.table(rows, [
    { header: '', value: (r) => (r.selected ? '*' : '') },
    { header: 'NAME', value: (r) => r.name, keep: true },
    { header: 'BASE URL', value: (r) => r.base_url },
    { header: 'API KEY', value: (r) => r.api_key },
    { header: 'SECRET', value: (r) => r.secret },
  ], 'No profiles yet: rpcctl init --local (a service on this machine), rpcctl init (interactive) or rpcctl profile add NAME --api-key KEY < secret');
};

export const use: CommandImpl<{ name: string }> = async (io, opts) => {
  const { name } = opts;
  const store = await ProfileStore.open(io.env);
  store.use(name);
  const out = new Output(io, opts);
  if (out.json) return out.printJson(presentProfile(name, store.get(name)!, name));
  out.note(`Now using profile "${name}".`);
};

export const remove: CommandImpl<{ name: string; yes?: boolean }> = async (io, opts) => {
  const { name } = opts;
  const store = await ProfileStore.open(io.env);
  if (!store.get(name)) throw noProfile(name);
  await confirmOrYes(io, opts, `Delete profile "${name}"?`);
  store.remove(name);
  const out = new Output(io, opts);
  if (out.json) return out.printJson({ name, removed: true });
  out.note(`Removed profile "${name}".`);
};

/** What `profile set` may change. The key and secret go together: `profile add` replaces both. */
const SETTABLE = { base_url: checkBaseUrl, gateway_url: checkBaseUrl } as const;

export const set: CommandImpl<{ key: string; value: string }> = async (io, opts) => {
  const { key, value } = opts;
  const setting = key.replace(/-/g, '_');
  if (!Object.hasOwn(SETTABLE, setting)) {
    throw usageError(`unknown setting "${key}" (one of: ${Object.keys(SETTABLE).join(', ')}; a new key and secret: rpcctl profile add NAME --api-key KEY)`);
  }
  const store = await ProfileStore.open(io.env);
  const name = opts.profile ?? store.selected();
  if (!name) throw new CliError('no profile selected: give --profile NAME (see: rpcctl profile list)');
  const current = store.get(name);
  if (!current) throw noProfile(name);
  const profile: Profile = { ...current, [setting]: SETTABLE[setting as keyof typeof SETTABLE](value) };
  store.save(name, profile);
  const out = new Output(io, opts);
  if (out.json) return out.printJson(presentProfile(name, profile, store.selected()));
  out.note(`Profile "${name}": ${setting} is now ${value}.`);
};

import type { ApiClient } from '../../client/api-client.js';
import type { Account, Endpoint } from '../../client/types.js';
import type { CommandImpl } from '../action.js';
import { checkBaseUrl, clientFor, DEFAULT_BASE_URL, envValue } from '../context.js';
import { CliError, usageError } from '../io.js';
import type { InitLocalOptions } from './local.js';
import { Output } from '../output.js';
import { checkProfileName, ProfileStore, type Profile } from '../profiles.js';
import { prompterFor, type Prompter } from '../prompts.js';
import { presentProfile } from '../profile/run.js';

const required = (v: string) => (v.trim() ? true : 'required');

/** A prompt validator from a checker that throws: its message is shown under the question. */
const validator = (check: (value: string) => unknown) => (v: string): true | string => {
  try {
    check(v.trim());
    return true;
  } catch (err) {
    return (err as Error).message;
  }
};
const validUrl = validator(checkBaseUrl);
const validName = validator(checkProfileName);

export const init: CommandImpl<InitLocalOptions & { local?: boolean }> = async (io, opts) => {
  if (opts.local) {
    const { initLocal } = await import('./local.js');
    return initLocal(io, opts);
  }
  for (const flag of ['plan', 'dataDir', 'config'] as const) {
    if (opts[flag] !== undefined) throw usageError(`--${flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} goes with --local`);
  }
  const ask = prompterFor(io, 'in scripts use: rpcctl profile add NAME --base-url URL --api-key KEY < secret-file');
  const out = new Output(io, opts);
  const store = await ProfileStore.open(io.env);
  const existing = opts.profile ? store.get(opts.profile) : undefined;

  const baseUrl = (await ask.input({
    message: 'Public API base URL', default: opts.baseUrl ?? existing?.base_url ?? envValue(io.env, 'PUBLIC_API_BASE') ?? DEFAULT_BASE_URL, validate: validUrl,
  })).trim();
  const apiKey = (await ask.input({ message: 'API key', default: existing?.api_key, validate: required })).trim();
  const secret = (await ask.password({ message: 'API secret', validate: required })).trim();

  const api = await clientFor({ baseUrl, apiKey, secret, profile: null }, io, opts);
  try {
    // A key that does not work is not saved: the error (exit 4 for 401/403) says why.
    const account = await api.account();
    out.note(out.c.green(`✓ Signed in as account ${account.user_id}${account.plan ? ` on the ${account.plan.name} plan` : ''}.`));

    const name = opts.profile ?? (await ask.input({ message: 'Save as profile', default: store.selected() ?? 'default', validate: validName })).trim();
    checkProfileName(name);
    if (store.get(name) && !existing && !(await ask.confirm({ message: `Profile "${name}" exists. Replace it?`, default: false }))) {
      throw new CliError('cancelled: nothing saved');
    }
    const profile: Profile = { base_url: baseUrl, api_key: apiKey, secret };
    store.save(name, profile);
    store.use(name);
    out.note(`Saved profile "${name}" in ${store.path}.`);

    const endpoint = await offerEndpoint(api, ask, out, account);
    if (out.json) return out.printJson({ profile: presentProfile(name, profile, name), account: { user_id: account.user_id, plan: account.plan, usage: account.usage }, endpoint: endpoint ?? null });
    out.note(endpoint
      ? `Next: rpcctl rpc ${endpoint.id} eth_blockNumber   ·   rpcctl endpoints list   ·   rpcctl usage --chart`
      : 'Next: rpcctl networks   ·   rpcctl endpoints create --name NAME --network SLUG --env SLUG');
  } finally {
    await api.close();
  }
};

/** Offers the first endpoint: network, then environment, from what the plan allows. */
async function offerEndpoint(api: ApiClient, ask: Prompter, out: Output, account: Account): Promise<Endpoint | undefined> {
  const { endpoints } = await api.listEndpoints();
  const room = account.plan ? endpoints.length < account.plan.endpoints_limit : true;
  if (!room) return undefined;
  if (!(await ask.confirm({ message: endpoints.length ? 'Create another endpoint?' : 'Create your first endpoint now?', default: endpoints.length === 0 }))) return undefined;
  const { networks } = await api.availableNetworks();
  if (networks.length === 0) {
    out.note('Your plan offers no networks to create an endpoint on.');
    return undefined;
  }
  const network = await ask.select({
    message: 'Network',
    choices: networks.map((n) => ({ name: `${n.name} (${n.slug})`, value: n })),
  });
  const env = network.environment_kinds.length === 1
    ? network.environment_kinds[0]!
    : await ask.select({ message: 'Environment', choices: network.environment_kinds.map((e) => ({ name: e, value: e })) });
  const name = (await ask.input({ message: 'Endpoint name', default: `${network.slug}-${env}`, validate: required })).trim();
  const { endpoint } = await api.createEndpoint({ name, network_id: network.id, env_slug: env });
  out.note(out.c.green(`✓ Created endpoint ${endpoint.id}: ${endpoint.url}`));
  return endpoint;
}

import { createAccount, createApiKey, findActiveKey, getAccount, listEndpointRows, webhookSecretOf, type Store } from '../../store/index.js';
import type { Config } from '../../config/index.js';
import { withStore } from '../admin/run.js';
import { checkBaseUrl } from '../context.js';
import { usageError, type CliIO } from '../io.js';
import type { Output } from '../output.js';
import { checkProfileName, ProfileStore, type Profile } from '../profiles.js';
import { presentProfile } from '../profile/run.js';
import type { GlobalOptions } from '../globals.js';

export interface InitLocalOptions extends GlobalOptions {
  plan?: string;
  dataDir?: string;
  config?: string;
}

/**
 * `rpcctl init --local`: the operator and the merchant are the same person, so the account,
 * its API key and its webhook secret go from the store straight into a profile. Running it
 * again keeps a profile whose key still works here.
 */
export async function initLocal(io: CliIO, opts: InitLocalOptions): Promise<void> {
  const name = checkProfileName(opts.profile ?? 'local');
  const profiles = await ProfileStore.open(io.env);
  await withStore(io, { dataDir: opts.dataDir, config: opts.config, json: opts.json, color: opts.color }, async (store, out, config) => {
    const baseUrl = checkBaseUrl(opts.baseUrl ?? apiUrlOf(config));
    const existing = profiles.get(name);
    const kept = existing && existing.base_url === baseUrl ? await stillWorks(store, existing) : undefined;
    let profile: Profile;
    let userId: number;
    if (kept) {
      ({ profile, userId } = kept);
      profile = { ...profile, gateway_url: gatewayUrlOf(config) };
      out.note(`Profile "${name}" already signs in as account ${userId} here; kept it.`);
    } else {
      const plan = pickPlan(store, opts.plan);
      const account = await createAccount(store, { planId: plan.id, name: 'local' });
      const key = await createApiKey(store, { accountId: account.id, name: 'rpcctl init --local' });
      profile = { base_url: baseUrl, api_key: key.api_key, secret: key.secret, webhook_secret: webhookSecretOf(store, account), gateway_url: gatewayUrlOf(config) };
      userId = account.id;
      out.note(`Created account ${account.id} on the ${plan.name} plan and an API key for it${existing ? `; replaced profile "${name}"` : ''}.`);
    }
    profiles.save(name, profile);
    profiles.use(name);
    if (out.json) return out.printJson({ ...presentProfile(name, profile, name), user_id: userId });
    out.note(`Saved profile "${name}" (selected) in ${profiles.path}, with the webhook secret for \`rpcctl webhook listen\`.`);
    nextSteps(out, await listEndpointRows(store, userId));
  });
}

/** A kept account may have its endpoints already: creating `main` again would be refused. */
function nextSteps(out: Output, endpoints: ReadonlyArray<{ name: string }>): void {
  const first = endpoints[0];
  if (first) out.note(`Next (with \`rpcctl serve --dev\` running): rpcctl endpoints list   ·   rpcctl rpc ${first.name} eth_blockNumber`);
  else out.note('Next (with `rpcctl serve --dev` running): rpcctl endpoints create --name main --network eth --env mainnet');
}

/** Where this data dir's config says the Public API listens, as a URL the CLI can call. */
function apiUrlOf(config: Config): string {
  return localUrl(config.api.host, config.api.port);
}

/** Unknown (undefined) when the gateway takes a free port at each start. */
function gatewayUrlOf(config: Config): string | undefined {
  return config.gateway.port === 0 ? undefined : localUrl(config.gateway.host, config.gateway.port);
}

function localUrl(host: string, port: number): string {
  const h = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port}`;
}

async function stillWorks(store: Store, p: Profile): Promise<{ profile: Profile; userId: number } | undefined> {
  const key = await findActiveKey(store, p.api_key);
  if (!key || key.secret !== p.secret) return undefined;
  const account = await getAccount(store, key.accountId);
  if (!account) return undefined;
  return { profile: { ...p, webhook_secret: webhookSecretOf(store, account) }, userId: account.id };
}

/** The named plan, else the one with the most room: a local trial should reach every feature. */
function pickPlan(store: Store, slug: string | undefined) {
  const plans = store.catalog.plans;
  if (slug !== undefined) {
    const plan = store.catalog.planBySlug(slug);
    if (!plan) throw usageError(`unknown plan "${slug}" (one of: ${plans.map((p) => p.slug).join(', ')})`);
    return plan;
  }
  const room = (p: (typeof plans)[number]) => [p.endpoints_limit, p.webhook_address_slots, p.included_credits];
  const best = [...plans].sort((a, b) => {
    const [x, y] = [room(a), room(b)];
    return (y[0]! - x[0]!) || (y[1]! - x[1]!) || (y[2]! - x[2]!);
  })[0];
  if (!best) throw usageError('the config has no plans');
  return best;
}

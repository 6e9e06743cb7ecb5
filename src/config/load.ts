import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { formatIssues } from '../util/zod.js';
import { configSchema, type Config } from './schema.js';
import { defaultCredits, defaultNetworks, defaultPlans } from './defaults.js';
import { allTraits, traitsOf } from '../chains/traits.js';
import { RpcctlError } from '../util/errors.js';

export class ConfigError extends RpcctlError {
  readonly code = 'E_CONFIG';
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RPCCTL_DATA_DIR) return resolve(env.RPCCTL_DATA_DIR);
  const base = env.XDG_DATA_HOME || join(homedir(), '.local', 'share');
  return join(base, 'rpcctl');
}

/** `--config` wins; else `config.{yaml,yml,json}` in the data dir; else built-in defaults. */
export function findConfigFile(dataDir: string, explicit?: string): string | undefined {
  if (explicit) return resolve(explicit);
  for (const name of ['config.yaml', 'config.yml', 'config.json']) {
    const p = join(dataDir, name);
    if (existsSync(p)) return p;
  }
  return undefined;
}

export function loadConfig(file: string | undefined): Config {
  if (!file) return parseConfig({}, 'built-in defaults');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = extname(file) === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConfigError(`config file ${file} is not valid ${extname(file) === '.json' ? 'JSON' : 'YAML'}: ${(err as Error).message}`);
  }
  return parseConfig(raw ?? {}, file);
}

export function parseConfig(raw: unknown, source = 'config'): Config {
  const result = configSchema.safeParse(raw);
  if (!result.success) throw new ConfigError(`${source}: ${formatIssues(result.error.issues)}`);
  const cfg = result.data;
  const networks = cfg.networks?.map((n) => ({ ...n, credits: n.credits ?? defaultCredits(n.family) })) ?? defaultNetworks;
  const config: Config = { ...cfg, networks, plans: cfg.plans ?? defaultPlans };
  checkConsistency(config, source);
  return config;
}

function checkConsistency(config: Config, source: string): void {
  const fail = (msg: string): never => { throw new ConfigError(`${source}: ${msg}`); };
  const netSlugs = new Set<string>();
  const netIds = new Set<number>();
  const envIds = new Set<number>();
  config.networks.forEach((n, i) => {
    if (netSlugs.has(n.slug)) fail(`networks[${i}].slug: duplicate network slug "${n.slug}"`);
    netSlugs.add(n.slug);
    if (n.id !== undefined) {
      if (netIds.has(n.id)) fail(`networks[${i}].id: duplicate network id ${n.id}`);
      netIds.add(n.id);
    }
    const family = traitsOf(n.family);
    n.tokens.forEach((t, j) => {
      // Checked here, where the family is known: a token of another chain's form could never match a transfer.
      const form = allTraits().find((f) => f.config.tokens?.claims(t))!;
      if (!family.config.tokens) fail(`networks[${i}].tokens[${j}]: ${n.family} networks have no tokens (orders there are in the native coin)`);
      if (form !== family) fail(`networks[${i}].tokens[${j}]: ${form.config.tokens!.description} is not a token form of the ${n.family} family`);
      try {
        family.config.tokens!.check?.(t);
      } catch (err) {
        fail(`networks[${i}].tokens[${j}].address: ${(err as Error).message}`);
      }
    });
    const envSlugs = new Set<string>();
    const urls = new Set(n.environments.flatMap((e) => e.upstreams));
    // The key is not shown: an upstream URL may hold a provider key.
    Object.keys(n.upstream_methods ?? {}).forEach((u, k) => {
      if (!urls.has(u)) fail(`networks[${i}].upstream_methods: key ${k + 1} is not one of the network's upstream URLs`);
    });
    n.environments.forEach((e, j) => {
      if (envSlugs.has(e.slug)) fail(`networks[${i}].environments[${j}].slug: duplicate environment "${e.slug}"`);
      envSlugs.add(e.slug);
      const builtInFormat = family.config.addressFormat;
      if (e.address_format && !builtInFormat) fail(`networks[${i}].environments[${j}].address_format: only for the utxo family`);
      if (builtInFormat && !e.address_format && !builtInFormat(e.slug)) {
        fail(`networks[${i}].environments[${j}].address_format: required for a utxo environment not named mainnet, testnet, testnet4, signet or regtest`);
      }
      if (e.id !== undefined) {
        if (envIds.has(e.id)) fail(`networks[${i}].environments[${j}].id: duplicate environment id ${e.id}`);
        envIds.add(e.id);
      }
    });
  });
  const planIds = new Set<number>();
  const planSlugs = new Set<string>();
  config.plans.forEach((p, i) => {
    if (planIds.has(p.id)) fail(`plans[${i}].id: duplicate plan id ${p.id}`);
    if (planSlugs.has(p.slug)) fail(`plans[${i}].slug: duplicate plan slug "${p.slug}"`);
    planIds.add(p.id);
    planSlugs.add(p.slug);
    p.allowed_network_slugs.forEach((s, j) => {
      if (!netSlugs.has(s)) fail(`plans[${i}].allowed_network_slugs[${j}]: unknown network "${s}"`);
    });
  });
}

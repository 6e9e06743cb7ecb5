import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { parseDocument, type YAMLError } from 'yaml';
import { formatIssues } from '../util/zod.js';
import { configSchema, type Config } from './schema.js';
import type { TokenConfig } from './payments.js';
import { defaultCredits, defaultNetworks, defaultPlans } from './defaults.js';
import { allTraits, traitsOf } from '../chains/traits.js';
import { coerceAt, ConfigError, interpolate, readSecretFiles } from './env.js';

export { ConfigError };

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

/**
 * The config file with `${VAR}` references replaced from `env` and each `<secret>_file` read
 * (env.ts), checked; no file: the built-in defaults.
 */
export function loadConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): Config {
  if (!file) return parseConfig({}, 'built-in defaults');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
  }
  let raw: unknown;
  const json = extname(file) === '.json';
  try {
    raw = json ? JSON.parse(text) : parseYamlQuietly(text);
  } catch (err) {
    throw new ConfigError(`config file ${file} is not valid ${json ? 'JSON' : 'YAML'}: ${json ? jsonWhere(err as Error) : yamlWhere(err as Error, text)}`);
  }
  const { value, whole } = interpolate(raw ?? {}, env, file);
  return parseConfig(readSecretFiles(value, file), file, whole);
}

/*
 * A parser's message without the text it quotes (YAML's code frame and the token it names,
 * V8's JSON excerpt): that text may be a secret written in the file, and the message is logged
 * (a refused reload).
 */

/** V8: `Unexpected token 'p', ..."url": pos"... is not valid JSON`; the excerpt may hold a newline. */
function jsonWhere(err: Error): string {
  return err.message.replace(/, (?:"|\.\.\.)[\s\S]*$/, '').split('\n')[0]!;
}

/**
 * `yaml`: `Unresolved tag: !x at line 2, column 8:` and a code frame. The text after `: ` is
 * the file's; some messages name a token inline (`Unknown directive %x`): a word of the
 * message that is also a word of the file gives the error's code instead of its message.
 */
function yamlWhere(err: Error, text: string): string {
  let what = err.message.split('\n')[0]!.replace(/:$/, '').replace(/ at line \d+, column \d+$/, '').replace(/: [\s\S]*$/, '');
  const inFile = new Set(words(text));
  if (words(what).some((w) => inFile.has(w))) what = (err as YAMLError).code ?? 'invalid';
  const at = (err as YAMLError).linePos?.[0];
  return at ? `${what} at line ${at.line}, column ${at.col}` : what;
}

const words = (text: string) => text.split(/[\s"'`,:;[\]{}()]+/).filter((w) => w.length >= 4);

/**
 * YAML with its warnings (an unknown tag or directive) refused as errors: `yaml` would hand
 * them to process.emitWarning, which prints them with the file's line to stderr.
 */
function parseYamlQuietly(text: string): unknown {
  const doc = parseDocument(text, { logLevel: 'silent' });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw problem;
  return doc.toJS();
}

/** `whole`: where a value was one `${VAR}` alone, and may be read as the number or boolean it spells. */
export function parseConfig(raw: unknown, source = 'config', whole: ReadonlyArray<ReadonlyArray<string | number>> = []): Config {
  let result = configSchema.safeParse(raw);
  // `port: ${PORT}` is text until the schema says a number belongs there.
  const typed = (path: readonly PropertyKey[]) => whole.some((w) => w.length === path.length && w.every((p, i) => p === path[i]));
  if (!result.success && result.error.issues.filter((i) => i.code === 'invalid_type' && typed(i.path)).map((i) => coerceAt(raw, i.path)).includes(true)) {
    result = configSchema.safeParse(raw);
  }
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
    const checkTokens = (tokens: readonly TokenConfig[], path: string) => tokens.forEach((t, j) => {
      // Checked here, where the family is known: a token of another chain's form could never match a transfer.
      const form = allTraits().find((f) => f.config.tokens?.claims(t))!;
      if (!family.config.tokens) fail(`${path}[${j}]: ${n.family} networks have no tokens (orders there are in the native coin)`);
      if (form !== family) fail(`${path}[${j}]: ${form.config.tokens!.description} is not a token form of the ${n.family} family`);
      try {
        family.config.tokens!.check?.(t);
      } catch (err) {
        fail(`${path}[${j}].address: ${(err as Error).message}`);
      }
    });
    checkTokens(n.tokens, `networks[${i}].tokens`);
    n.environments.forEach((e, j) => checkTokens(e.tokens ?? [], `networks[${i}].environments[${j}].tokens`));
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

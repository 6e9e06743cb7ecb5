import type { ChainAdapter } from '../chains/family.js';
import { chainOf } from '../chains/index.js';
import type { Config } from '../config/index.js';
import type { Environment } from '../store/index.js';

/**
 * The contract tokens config lists for an environment (its own `tokens`, else its network's),
 * as the family's match keys: what an adapter that reports only listed tokens (Solana's mints)
 * looks for.
 */
export function listedTokenKeys(config: Pick<Config, 'networks'>, env: Environment): string[] {
  const network = config.networks.find((n) => n.slug === env.network.slug);
  const tokens = network?.environments.find((e) => e.slug === env.slug)?.tokens ?? network?.tokens ?? [];
  const family = chainOf(env.network.family);
  return tokens.flatMap((t) => (t.address === undefined ? [] : [family.payments.contractToken(t.address).matchKey]));
}

/**
 * The chain adapter of an environment's family (the scanners' and the payments' unconfirmed-block
 * look). With config, it knows the environment's listed tokens.
 */
export function chainFor(env: Environment, config?: Pick<Config, 'networks'>): ChainAdapter {
  return chainOf(env.network.family).scanner(env.upstreams, undefined, config ? { tokens: listedTokenKeys(config, env) } : undefined);
}

/**
 * One chain adapter per environment, made when first asked for and closed together: the
 * payments engine's finality checks and its unconfirmed-block look share one set of upstream
 * connections per network.
 */
export class EnvironmentChains {
  readonly #chains = new Map<number, ChainAdapter>();
  readonly #config: Pick<Config, 'networks'> | undefined;

  /** With config, the adapters know the environments' listed tokens (Solana's reference lookup matches those mints). */
  constructor(config?: Pick<Config, 'networks'>) {
    this.#config = config;
  }

  of(env: Environment): ChainAdapter {
    let chain = this.#chains.get(env.id);
    if (!chain) {
      chain = chainFor(env, this.#config);
      this.#chains.set(env.id, chain);
    }
    return chain;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#chains.values()].map((c) => c.close()));
    this.#chains.clear();
  }
}

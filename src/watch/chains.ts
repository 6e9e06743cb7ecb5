import type { ChainAdapter } from '../chains/family.js';
import { chainOf } from '../chains/index.js';
import type { Environment } from '../store/index.js';

/** The chain adapter of an environment's family (the scanners' and the payments' unconfirmed-block look). */
export function chainFor(env: Environment): ChainAdapter {
  return chainOf(env.network.family).scanner(env.upstreams);
}

/**
 * One chain adapter per environment, made when first asked for and closed together: the
 * payments engine's finality checks and its unconfirmed-block look share one set of upstream
 * connections per network.
 */
export class EnvironmentChains {
  readonly #chains = new Map<number, ChainAdapter>();

  of(env: Environment): ChainAdapter {
    let chain = this.#chains.get(env.id);
    if (!chain) {
      chain = chainFor(env);
      this.#chains.set(env.id, chain);
    }
    return chain;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#chains.values()].map((c) => c.close()));
    this.#chains.clear();
  }
}

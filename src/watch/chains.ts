import type { ChainAdapter } from '../chains/family.js';
import { chainOf } from '../chains/index.js';
import type { Environment } from '../store/index.js';

/** The chain adapter of an environment's family (the scanners' and the payments' unconfirmed-block look). */
export function chainFor(env: Environment): ChainAdapter {
  return chainOf(env.network.family).scanner(env.upstreams);
}

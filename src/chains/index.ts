// The registry of chain families: the one place that maps a family's name to its adapter
// (as erpc registers one handler per architecture). A fifth family is a folder implementing
// `ChainFamily` (its traits in `traits.ts`) and one line here and in chains/traits.ts.

import { evm } from './evm/index.js';
import type { ChainEnvironment, ChainFamily, NetworkFamily } from './family.js';
import { DEFAULT_FAMILY } from './traits.js';
import type { ParsedAddress } from './address.js';
import { stellar } from './stellar/index.js';
import { tron } from './tron/index.js';
import { utxo } from './utxo/index.js';

const FAMILIES: Record<NetworkFamily, ChainFamily> = {
  evm,
  stellar,
  utxo,
  tron,
};

export { DEFAULT_FAMILY } from './traits.js';

/**
 * A family's adapter. An unknown name (a stored row from a newer version) is read as the
 * default family, as the dispatch before the registry did.
 */
export function chainOf(family: string): ChainFamily {
  return Object.hasOwn(FAMILIES, family) ? FAMILIES[family as NetworkFamily] : FAMILIES[DEFAULT_FAMILY];
}

/** Every family, in registry order. */
export function chainFamilies(): ChainFamily[] {
  return Object.values(FAMILIES);
}

/** An address given for a watch or an order on `env`, validated by the environment's family. */
export function parseAddress(env: ChainEnvironment, input: string): ParsedAddress {
  return chainOf(env.network.family).parseAddress(env, input);
}

export type { ChainAdapter, ChainEnvironment, ChainFamily, ChainTraits, FetchedBlock, Hit, NetworkFamily, WatchLookup, WatchRef } from './family.js';

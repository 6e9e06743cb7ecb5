// The registry of what each family is to the gateway, config, the catalog and pricing (see
// ChainTraits): these load in every process and gateway worker, so this registry imports no
// scanner, HTTP client or key-derivation code. chains/index.ts is the full registry.

import type { ChainTraits, NetworkFamily } from './family.js';
import { evmTraits } from './evm/traits.js';
import { stellarTraits } from './stellar/traits.js';
import { tronTraits } from './tron/traits.js';
import { utxoTraits } from './utxo/traits.js';

const TRAITS: Record<NetworkFamily, ChainTraits> = {
  evm: evmTraits,
  stellar: stellarTraits,
  utxo: utxoTraits,
  tron: tronTraits,
};

/** The family a network without one is (config's default). */
export const DEFAULT_FAMILY: NetworkFamily = 'evm';

/**
 * A family's traits. An unknown name (a stored row from a newer version) is read as the
 * default family, as the dispatch before the registry did.
 */
export function traitsOf(family: string): ChainTraits {
  return Object.hasOwn(TRAITS, family) ? TRAITS[family as NetworkFamily] : TRAITS[DEFAULT_FAMILY];
}

/** Every family's traits, in registry order. */
export function allTraits(): ChainTraits[] {
  return Object.values(TRAITS);
}

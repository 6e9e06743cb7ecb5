// The registry of chain families: the one place that maps a family's name to its adapter
// (as erpc registers one handler per architecture). A new family is a folder implementing
// `ChainFamily` (its traits in `traits.ts`) and one line here and in chains/traits.ts.

import { evm } from './evm/index.js';
import type { ChainEnvironment, ChainFamily, NetworkFamily } from './family.js';
import { isFamily, UnknownFamilyError } from './traits.js';
import type { ParsedAddress } from './address.js';
import { stellar } from './stellar/index.js';
import { tron } from './tron/index.js';
import { utxo } from './utxo/index.js';
import { solana } from './solana/index.js';

const FAMILIES: Record<NetworkFamily, ChainFamily> = {
  evm,
  stellar,
  utxo,
  tron,
  solana,
};

export { DEFAULT_FAMILY, DERIVING_FAMILIES, REFERENCE_FAMILIES, UnknownFamilyError, type DerivingFamily, type ReferenceFamily } from './traits.js';

/**
 * A family's adapter. An unknown name (a stored row from a newer version) throws
 * UnknownFamilyError: reading it as EVM would scan another chain with the EVM adapter.
 */
export function chainOf(family: string): ChainFamily {
  if (!isFamily(family)) throw new UnknownFamilyError(family);
  return FAMILIES[family];
}

/** Every family, in registry order. */
export function chainFamilies(): ChainFamily[] {
  return Object.values(FAMILIES);
}

/** An address given for a watch or an order on `env`, validated by the environment's family. */
export function parseAddress(env: ChainEnvironment, input: string): ParsedAddress {
  return chainOf(env.network.family).parseAddress(env, input);
}

export { SKIPPED } from './family.js';
export type { AdapterOptions, ChainAdapter, ChainEnvironment, ChainFamily, ChainTraits, FetchedBlock, Hit, NetworkFamily, Skipped, WatchLookup, WatchRef } from './family.js';

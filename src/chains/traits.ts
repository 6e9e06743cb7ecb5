// The registry of what each family is to the gateway, config, the catalog and pricing (see
// ChainTraits): these load in every process and gateway worker, so this registry imports no
// scanner, HTTP client or key-derivation code. chains/index.ts is the full registry.

import { RpcctlError } from '../util/errors.js';
import type { ChainTraits, NetworkFamily } from './family.js';
import { evmTraits } from './evm/traits.js';
import { stellarTraits } from './stellar/traits.js';
import { tronTraits } from './tron/traits.js';
import { utxoTraits } from './utxo/traits.js';
import { solanaTraits } from './solana/traits.js';

const TRAITS = {
  evm: evmTraits,
  stellar: stellarTraits,
  utxo: utxoTraits,
  tron: tronTraits,
  solana: solanaTraits,
} satisfies Record<NetworkFamily, ChainTraits>;

/** The family a network without one is (config's default). */
export const DEFAULT_FAMILY: NetworkFamily = 'evm';

/** Every family's name, in registry order: what config's `family` takes. */
export const FAMILY_NAMES = Object.keys(TRAITS) as [NetworkFamily, ...NetworkFamily[]];

/** The families whose traits say orders derive their addresses (`payments.derives`), as a type. */
export type DerivingFamily = { [F in keyof typeof TRAITS]: (typeof TRAITS)[F]['payments']['derives'] extends true ? F : never }[keyof typeof TRAITS];

/** The same, at run time, in registry order: `xpubs.<family>`, `xpub_<family>`, `next_index_<family>`. */
export const DERIVING_FAMILIES = Object.values(TRAITS).filter((t) => t.payments.derives).map((t) => t.name) as DerivingFamily[];

/** The families whose orders are paid to the merchant's one wallet, told apart by a reference (`payments.references`). */
export type ReferenceFamily = { [F in keyof typeof TRAITS]: (typeof TRAITS)[F]['payments']['references'] extends true ? F : never }[keyof typeof TRAITS];

/** The same at run time: the settings' `wallets.<family>` and the store's `wallet_<family>`. */
export const REFERENCE_FAMILIES = Object.values(TRAITS).filter((t) => t.payments.references).map((t) => t.name) as ReferenceFamily[];

/**
 * A family name this version does not know: a stored row written by a newer version, or a
 * config typo. Refused rather than read as some other family (an EVM adapter scanning a
 * chain it does not speak would record nothing, or nonsense).
 */
export class UnknownFamilyError extends RpcctlError {
  readonly code = 'E_UNKNOWN_FAMILY';
  constructor(family: string, where?: string) {
    super(`${where ? `${where}: ` : ''}unknown chain family ${JSON.stringify(family)} (this version knows ${FAMILY_NAMES.join(', ')}; written by a newer rpcctl? upgrade this one)`);
  }
}

/** Whether this version knows the family. */
export function isFamily(family: string): family is NetworkFamily {
  return Object.hasOwn(TRAITS, family);
}

/** A family's traits; an unknown name throws UnknownFamilyError. */
export function traitsOf(family: string): ChainTraits {
  if (!isFamily(family)) throw new UnknownFamilyError(family);
  return TRAITS[family];
}

/** Every family's traits, in registry order. */
export function allTraits(): ChainTraits[] {
  return Object.values(TRAITS);
}

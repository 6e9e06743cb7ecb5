import { evmContractToken } from '../evm/index.js';
import type { ChainFamily } from '../family.js';
import { stellarTraits } from './traits.js';
import { parseStellarAddress } from './address.js';
import { StellarChain } from './chain.js';
import { plainAddressUri } from '../uri.js';

/** Stellar through Horizon (REST): `G…` accounts, `CODE:ISSUER` assets, orders only at a given address. */
export const stellar: ChainFamily = {
  ...stellarTraits,
  parseAddress: (_env, input) => parseStellarAddress(input),
  scanner: (upstreams, timeoutMs) => new StellarChain(upstreams, timeoutMs),
  payments: {
    ...stellarTraits.payments,
    // Config lists no contract tokens here (assets are CODE:ISSUER); kept as the reading it always had.
    contractToken: evmContractToken,
    derivation: undefined,
    // SEP-7 (web+stellar:pay) is read by few wallets: the page shows the amount and the address.
    paymentUri: plainAddressUri,
    reference: undefined,
  },
  // Merchants pay from the payment request (the address or URI); the scanners see the transfer.
  payouts: { verify: undefined, unsigned: undefined },
};

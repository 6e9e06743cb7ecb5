import type { ChainFamily } from '../family.js';
import { tronTraits } from './traits.js';
import { parseXpub } from '../xpub.js';
import { parseTronAddress } from './address.js';
import { TronChain } from './chain.js';
import { tronAddressAt } from './derive.js';
import { plainAddressUri } from '../uri.js';

/** Tron: the HTTP API of java-tron and TronGrid (REST), `T…` addresses, TRC-20 tokens, orders derived from an xpub (m/44'/195'/0'). */
export const tron: ChainFamily = {
  ...tronTraits,
  parseAddress: (_env, input) => parseTronAddress(input),
  scanner: (upstreams, timeoutMs) => new TronChain(upstreams, timeoutMs),
  payments: {
    ...tronTraits.payments,
    // The scanner reports a TRC-20 Transfer's contract as `T…`, the form config gives.
    contractToken: (address) => {
      const id = parseTronAddress(address).display;
      return { id, matchKey: id };
    },
    derivation: {
      checkKey: (xpub) => void parseXpub(xpub),
      keyIdentity: (xpub) => xpub.trim(),
      deriver: (xpub) => {
        const key = parseXpub(xpub);
        return (i) => tronAddressAt(key, i);
      },
      firstAddress: (xpub) => ({ first_address: tronAddressAt(xpub, 0) }),
    },
    // TRON wallets share no URI form: the page shows the amount to type.
    paymentUri: plainAddressUri,
    reference: undefined,
  },
  // Merchants pay from the payment request (the address or URI); the scanners see the transfer.
  payouts: { verify: undefined, unsigned: undefined },
};

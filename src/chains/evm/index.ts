import type { ChainFamily } from '../family.js';
import { evmTraits } from './traits.js';
import { parseXpub } from '../xpub.js';
import { parseEvmAddress, toChecksumAddress } from './address.js';
import { EvmChain } from './chain.js';
import { evmAddressAt } from './derive.js';
import { eip681Uri } from './uri.js';
import { verifyEvmTransaction } from './verify.js';

/** Contract tokens as EVM writes them: EIP-55 ids, matched on the lower-case address. */
export function evmContractToken(address: string): { id: string; matchKey: string } {
  return { id: toChecksumAddress(address), matchKey: address.toLowerCase() };
}

/** EVM chains: JSON-RPC nodes, `0x` addresses, ERC-20 tokens, orders derived from an xpub (m/44'/60'/0'). */
export const evm: ChainFamily = {
  ...evmTraits,
  parseAddress: (_env, input) => parseEvmAddress(input),
  scanner: (upstreams, timeoutMs) => new EvmChain(upstreams, timeoutMs),
  payments: {
    ...evmTraits.payments,
    contractToken: evmContractToken,
    derivation: {
      checkKey: (xpub) => void parseXpub(xpub),
      keyIdentity: (xpub) => xpub.trim(),
      deriver: (xpub) => {
        const key = parseXpub(xpub);
        return (i) => evmAddressAt(key, i);
      },
      firstAddress: (xpub) => ({ first_address: evmAddressAt(xpub, 0) }),
    },
    paymentUri: eip681Uri,
    reference: undefined,
  },
  // The merchant's wallet builds the transaction from the EIP-681 request: rpcctl knows no coins to spend.
  payouts: { verify: verifyEvmTransaction, unsigned: undefined },
};

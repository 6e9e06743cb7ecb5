import type { ChainFamily } from '../family.js';
import { parseXpub } from '../xpub.js';
import { parseEvmAddress, toChecksumAddress } from './address.js';
import { EvmChain } from './chain.js';
import { evmCredits } from './credits.js';
import { evmAddressAt } from './derive.js';

/** Contract tokens as EVM writes them: EIP-55 ids, matched on the lower-case address. */
export function evmContractToken(address: string): { id: string; matchKey: string } {
  return { id: toChecksumAddress(address), matchKey: address.toLowerCase() };
}

/** EVM chains: JSON-RPC nodes, `0x` addresses, ERC-20 tokens, orders derived from an xpub (m/44'/60'/0'). */
export const evm: ChainFamily = {
  name: 'evm',
  parseAddress: (_env, input) => parseEvmAddress(input),
  scanner: (upstreams, timeoutMs) => new EvmChain(upstreams, timeoutMs),
  gateway: { transport: 'rpc', rpcErrorsAre500: false, websocket: true, health: undefined },
  credits: {
    defaults: () => ({ default: evmCredits.default, methods: { ...evmCredits.methods } }),
    routes: undefined,
    block: { method: 'eth_getBlockByNumber' },
  },
  config: {
    tokens: { description: 'a 0x address', claims: (t) => t.asset === undefined && t.address!.startsWith('0x') },
    addressFormat: undefined,
  },
  payments: {
    native: { symbol: 'ETH', decimals: 18 },
    amlChain: 'ethereum',
    // Two epochs of 32 slots: Ethereum's finality; nodes that report `finalized` are asked instead.
    finalityDepth: 64,
    contractToken: evmContractToken,
    derivation: {
      checkKey: (xpub) => void parseXpub(xpub),
      deriver: (xpub) => {
        const key = parseXpub(xpub);
        return (i) => evmAddressAt(key, i);
      },
      firstAddress: (xpub) => ({ first_address: evmAddressAt(xpub, 0) }),
    },
  },
};

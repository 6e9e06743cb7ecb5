import type { ChainTraits } from '../family.js';
import { evmCredits } from './credits.js';

/** EVM chains, as the gateway, config and pricing see them: JSON-RPC nodes with WebSocket subscriptions. */
export const evmTraits: ChainTraits = {
  name: 'evm',
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
  },
};

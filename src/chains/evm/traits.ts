import type { ChainTraits } from '../family.js';
import { evmCredits } from './credits.js';
import { evmCachePlan, evmMethods, evmProbe, evmWebSocket } from './gateway.js';

const EVM_BLOCK_SECONDS: Record<string, number> = {
  polygon: 2, bsc: 0.75, arbitrum: 0.25, optimism: 2, base: 2, avalanche: 2, gnosis: 5, linea: 2, scroll: 3, zksync: 1,
};

/** EVM chains, as the gateway, config and pricing see them: JSON-RPC nodes with WebSocket subscriptions. */
export const evmTraits: ChainTraits<true> = {
  name: 'evm',
  example: { transport: 'rpc', method: 'eth_blockNumber', params: [] },
  gateway: {
    transport: 'rpc', rpcErrorsAre500: false,
    methods: evmMethods, cache: evmCachePlan, probe: evmProbe, errorRules: [], websocket: evmWebSocket,
  },
  credits: {
    defaults: () => ({ default: evmCredits.default, methods: { ...evmCredits.methods } }),
    routes: undefined,
    block: { method: 'eth_getBlockByNumber' },
    // Ethereum's 12 s slots; the well-known faster chains by their usual slugs.
    blockSeconds: (slug) => EVM_BLOCK_SECONDS[slug] ?? 12,
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
    derives: true,
    references: false,
  },
};

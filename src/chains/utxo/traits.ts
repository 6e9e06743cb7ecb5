import type { ChainTraits } from '../family.js';
import { bitcoinCredits } from './credits.js';
import { bitcoinAddressFormat } from './formats.js';
import { utxoMethods, utxoProbe } from './gateway.js';

const UTXO_BLOCK_SECONDS: Record<string, number> = { litecoin: 150, dogecoin: 60 };

/** Bitcoin Core JSON-RPC and its forks, as the gateway, config and pricing see them. */
export const utxoTraits: ChainTraits<true> = {
  name: 'utxo',
  example: { transport: 'rpc', method: 'getblockcount', params: [] },
  gateway: {
    transport: 'rpc', rpcErrorsAre500: true,
    methods: utxoMethods, cache: undefined, probe: utxoProbe, errorRules: [], websocket: undefined,
  },
  credits: {
    defaults: () => ({ default: bitcoinCredits.default, methods: { ...bitcoinCredits.methods } }),
    routes: undefined,
    block: { method: 'getblock' },
    // Bitcoin's ten minutes; Litecoin and Dogecoin aim faster.
    blockSeconds: (slug) => UTXO_BLOCK_SECONDS[slug] ?? 600,
  },
  config: { tokens: undefined, addressFormat: bitcoinAddressFormat },
  payments: {
    // Satoshis; Litecoin and Dogecoin count in 8 decimals too.
    native: { symbol: 'BTC', decimals: 8 },
    amlChain: 'bitcoin',
    // Six confirmations: the customary point past which a Bitcoin reorg is not expected.
    finalityDepth: 6,
    derives: true,
    references: false,
  },
};

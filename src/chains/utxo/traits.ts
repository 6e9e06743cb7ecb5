import type { ChainTraits } from '../family.js';
import { bitcoinCredits } from './credits.js';
import { bitcoinAddressFormat } from './formats.js';

const UTXO_BLOCK_SECONDS: Record<string, number> = { litecoin: 150, dogecoin: 60 };

/** Bitcoin Core JSON-RPC and its forks, as the gateway, config and pricing see them. */
export const utxoTraits: ChainTraits = {
  name: 'utxo',
  gateway: {
    transport: 'rpc', rpcErrorsAre500: true, websocket: false,
    health: {
      method: 'POST', path: '', contentType: 'application/json',
      body: JSON.stringify([
        { jsonrpc: '1.0', id: 1, method: 'getnetworkinfo', params: [] },
        { jsonrpc: '1.0', id: 2, method: 'getblockcount', params: [] },
      ]),
      read: (text) => {
        const answers = JSON.parse(text) as Array<{ id: number; result?: { subversion?: string } | number }>;
        if (!Array.isArray(answers)) throw new Error('upstream did not answer the batch with an array');
        const info = answers.find((a) => a.id === 1)?.result;
        const height = answers.find((a) => a.id === 2)?.result;
        return { version: typeof info === 'object' ? info.subversion ?? null : null, blockHeight: typeof height === 'number' ? height : null };
      },
    },
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
  },
};

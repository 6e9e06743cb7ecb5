import type { ChainTraits } from '../family.js';
import { parseTronAddress } from './address.js';
import { TRON_ROUTES } from './credits.js';

/** Tron's HTTP API (REST), as the gateway, config and pricing see it. */
export const tronTraits: ChainTraits = {
  name: 'tron',
  gateway: {
    transport: 'rest', rpcErrorsAre500: false, websocket: false,
    health: {
      method: 'POST', path: '/wallet/getnowblock', body: '{}', contentType: 'application/json',
      read: (text) => {
        const block = JSON.parse(text) as { block_header?: { raw_data?: { number?: number } } };
        return { version: null, blockHeight: block.block_header?.raw_data?.number ?? null };
      },
    },
  },
  credits: {
    // The Tron HTTP API's built-in route table prices it; `default` covers the rest.
    defaults: () => ({ default: 20, methods: {} }),
    routes: TRON_ROUTES,
    block: { method: 'POST', path: '/wallet/getblockbynum' },
    // Tron's 3 s blocks.
    blockSeconds: () => 3,
  },
  config: {
    tokens: {
      description: 'a T… address',
      claims: (t) => t.asset === undefined && !t.address!.startsWith('0x'),
      check: (t) => void parseTronAddress(t.address!),
    },
    addressFormat: undefined,
  },
  payments: {
    native: { symbol: 'TRX', decimals: 6 }, // sun
    amlChain: 'tron',
    // Solidified after 19 confirmations (2/3 of the 27 super representatives); one block of margin.
    finalityDepth: 20,
  },
};

import type { ChainTraits } from '../family.js';
import { parseTronAddress } from './address.js';
import { TRON_ROUTES } from './credits.js';
import { PLAIN_METHODS, singleRequestProbe } from '../gateway.js';

/** Tron's HTTP API (REST), as the gateway, config and pricing see it. */
export const tronTraits: ChainTraits<true> = {
  name: 'tron',
  // The newest block.
  example: { transport: 'rest', verb: 'POST', path: '/wallet/getnowblock' },
  gateway: {
    transport: 'rest', rpcErrorsAre500: false, methods: PLAIN_METHODS, cache: undefined, errorRules: [], websocket: undefined,
    // The latest block each upstream has: its head.
    probe: singleRequestProbe({ method: 'POST', path: '/wallet/getnowblock', body: '{}', contentType: 'application/json' }, (text) => {
      const block = JSON.parse(text) as { block_header?: { raw_data?: { number?: number } } };
      return { version: null, head: block.block_header?.raw_data?.number };
    }),
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
      claims: (t) => t.asset === undefined && /^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(t.address!),
      check: (t) => void parseTronAddress(t.address!),
    },
    addressFormat: undefined,
  },
  payments: {
    native: { symbol: 'TRX', decimals: 6 }, // sun
    amlChain: 'tron',
    // Solidified after 19 confirmations (2/3 of the 27 super representatives); one block of margin.
    finalityDepth: 20,
    derives: true,
    references: false,
  },
};

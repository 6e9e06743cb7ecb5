import type { ChainTraits } from '../family.js';
import { HORIZON_ROUTES } from './credits.js';
import { PLAIN_METHODS, singleRequestProbe } from '../gateway.js';

/** Stellar through Horizon (REST), as the gateway, config and pricing see it. */
export const stellarTraits: ChainTraits<false> = {
  name: 'stellar',
  // The newest ledger.
  example: { transport: 'rest', verb: 'GET', path: '/ledgers', query: '?order=desc&limit=1' },
  gateway: {
    transport: 'rest', rpcErrorsAre500: false, methods: PLAIN_METHODS, cache: undefined, errorRules: [], websocket: undefined,
    // Horizon's root tells its version and the latest ledger it ingested: each upstream's head.
    probe: singleRequestProbe({ method: 'GET', path: '/', body: undefined, contentType: undefined }, (text) => {
      const root = JSON.parse(text) as { horizon_version?: string; core_version?: string; history_latest_ledger?: number };
      return { version: root.horizon_version ?? root.core_version ?? null, head: root.history_latest_ledger };
    }),
  },
  credits: {
    // Horizon routes are priced by the built-in route table; `default` covers the rest.
    defaults: () => ({ default: 20, methods: {} }),
    routes: HORIZON_ROUTES,
    block: { method: 'GET', path: '/ledgers/{sequence}' },
    // A ledger closes every 5 to 6 s.
    blockSeconds: () => 6,
  },
  config: {
    tokens: { description: 'asset (CODE:ISSUER)', claims: (t) => t.asset !== undefined },
    addressFormat: undefined,
  },
  payments: {
    native: { symbol: 'XLM', decimals: 7 },
    amlChain: 'stellar',
    // A closed ledger is final (SCP): no reorgs.
    finalityDepth: 0,
    derives: false,
    references: false,
  },
};

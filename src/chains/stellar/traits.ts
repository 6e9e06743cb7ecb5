import type { ChainTraits } from '../family.js';
import { HORIZON_ROUTES } from './credits.js';

/** Stellar through Horizon (REST), as the gateway, config and pricing see it. */
export const stellarTraits: ChainTraits = {
  name: 'stellar',
  gateway: {
    transport: 'rest', rpcErrorsAre500: false, websocket: false,
    health: {
      method: 'GET', path: '/', body: undefined, contentType: undefined,
      read: (text) => {
        const root = JSON.parse(text) as { horizon_version?: string; core_version?: string; history_latest_ledger?: number };
        return { version: root.horizon_version ?? root.core_version ?? null, blockHeight: root.history_latest_ledger ?? null };
      },
    },
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
  },
};

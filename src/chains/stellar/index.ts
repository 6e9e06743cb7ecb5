import { evmContractToken } from '../evm/index.js';
import type { ChainFamily } from '../family.js';
import { parseStellarAddress } from './address.js';
import { StellarChain } from './chain.js';
import { HORIZON_ROUTES } from './credits.js';

/** Stellar through Horizon (REST): `G…` accounts, `CODE:ISSUER` assets, orders only at a given address. */
export const stellar: ChainFamily = {
  name: 'stellar',
  parseAddress: (_env, input) => parseStellarAddress(input),
  scanner: (upstreams, timeoutMs) => new StellarChain(upstreams, timeoutMs),
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
    // Config lists no contract tokens here (assets are CODE:ISSUER); kept as the reading it always had.
    contractToken: evmContractToken,
    derivation: undefined,
  },
};

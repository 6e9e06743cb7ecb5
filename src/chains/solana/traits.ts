import type { ChainTraits } from '../family.js';
import { parseSolanaAddress } from './address.js';
import { solanaCredits } from './credits.js';
import { SOLANA_ERROR_RULES, solanaCachePlan, solanaMethods, solanaProbe, solanaWebSocket } from './gateway.js';

/**
 * Solana's JSON-RPC nodes (Agave and providers), as the gateway, config and pricing see them:
 * slots instead of blocks (about 2.5 a second, some skipped), SPL tokens by mint.
 */
export const solanaTraits: ChainTraits<false, true> = {
  name: 'solana',
  example: { transport: 'rpc', method: 'getSlot', params: [{ commitment: 'confirmed' }] },
  gateway: {
    transport: 'rpc', rpcErrorsAre500: false,
    methods: solanaMethods, cache: solanaCachePlan, probe: solanaProbe, errorRules: SOLANA_ERROR_RULES, websocket: solanaWebSocket,
  },
  credits: {
    defaults: () => ({ default: solanaCredits.default, methods: { ...solanaCredits.methods } }),
    routes: undefined,
    block: { method: 'getBlock' },
    // 400 ms slots.
    blockSeconds: () => 0.4,
  },
  config: {
    tokens: {
      description: 'an SPL mint address (base58)',
      claims: (t) => t.asset === undefined && /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(t.address!),
      check: (t) => void parseSolanaAddress(t.address!),
    },
    addressFormat: undefined,
  },
  payments: {
    native: { symbol: 'SOL', decimals: 9 }, // lamports
    amlChain: 'solana',
    // Scanners ask the node for its `finalized` slot; this is only the fallback, in slots (a
    // confirmed slot is finalized about 32 slots later).
    finalityDepth: 32,
    derives: false,
    references: true,
  },
};

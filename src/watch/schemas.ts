import { z } from 'zod';
import { ID_TEXT } from '../api/schemas.js';
import { eventKind, slug } from '../webhooks/schemas.js';

// Bounded so every value stays a safe integer once parsed: pages to 9 digits.
const intString = (what: string) => z.string().regex(/^[1-9]\d{0,8}$/, 'must be a positive integer below 1000000000').meta({ description: what });

export const addWatchBody = z.object({
  network_slug: slug.meta({ description: '`eth` (default environment) or `eth-sepolia`; `solana`, `solana-devnet`, `bitcoin`, `tron`, `stellar`...: GET /v1/networks' }),
  address: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(128, 'must be at most 128 characters')
    .meta({ description: "the address in its network's form: EVM 0x hex (returned checksummed), Stellar account id (G...), Bitcoin-style (base58check or bech32), Tron (T... base58check or 41 hex), Solana public key (base58, 32 bytes)" }),
});

export const deleteWatchBody = z.object({
  watch_id: z.string({ error: 'is required and must be a string' }).min(1, 'must not be empty').max(64, 'must be at most 64 characters'),
});

export const listWatchQuery = z.object({
  network_slug: slug.optional(),
  address: z.string().max(128).optional(),
  page: intString('page number, default 1').optional(),
  per_page: z.string().regex(/^\d+$/, 'must be an integer from 1 to 200')
    .refine((v) => Number(v) >= 1 && Number(v) <= 200, 'must be an integer from 1 to 200').optional().meta({ description: '1..200, default 50' }),
});

const AFTER = 'must be an event id or "latest"';
export const eventsQuery = z.object({
  // A union, not one pattern: openapi.json then declares an integer or "latest", which generated clients can send.
  after: z.union([z.string().regex(/^\d{1,15}$/, AFTER).meta({ [ID_TEXT]: true }), z.literal('latest')], { error: AFTER }).optional()
    .meta({ description: 'return events after this id (the previous next_after); `latest` returns none and the newest id, where a follower starts' }),
  limit: z.string().regex(/^\d+$/, 'must be an integer from 1 to 500')
    .refine((v) => Number(v) >= 1 && Number(v) <= 500, 'must be an integer from 1 to 500').optional().meta({ description: '1..500, default 100' }),
  network: slug.optional(),
  type: eventKind.optional(),
  watch_id: z.string().max(64).optional(),
});

/** A wallet hit on a watched address: payment (in), payout (out) or other. */
const walletEventSchema = z.looseObject({
  id: z.string(),
  type: z.enum(['payment', 'payout', 'other']),
  watch_id: z.string(),
  network: z.string().meta({ description: 'network slug' }),
  address: z.string(),
  tx_hash: z.string().meta({ description: 'the transaction: EVM/Tron hash, Stellar transaction hash, Bitcoin txid, Solana transaction signature (base58)' }),
  direction: z.enum(['in', 'out']).nullable().meta({ description: '`in` or `out` for wallet hits' }),
  block_height: z.number().int().meta({ description: 'block number; Stellar ledger sequence; Solana slot' }),
  block_hash: z.string().meta({ description: 'block hash; Solana blockhash (base58)' }),
  from: z.string().nullable().optional(),
  to: z.string().nullable().optional(),
  token: z.string().nullable().optional().meta({ description: 'the token: EVM ERC-20 contract, Tron TRC-20 contract (T...), Stellar asset CODE:ISSUER, Solana SPL mint (base58); null for the native coin (ETH, BTC, TRX, XLM, SOL)' }),
  amount: z.string().nullable().optional().meta({ description: 'raw integer in the smallest unit, as a decimal string: wei, satoshis, sun, stroops, lamports; a token\'s base units (its decimals)' }),
  log_index: z.number().int().nullable().optional().meta({ description: 'the token transfer\'s log index in the block (EVM, Tron); null for native transfers and on chains without logs (Stellar, Bitcoin-style, Solana)' }),
  created_at: z.string(),
}).meta({ id: 'WalletEvent' });

/** A new block on a network the account subscribed to. */
const blockEventSchema = z.looseObject({
  id: z.string(),
  type: z.literal('block'),
  network: z.string(),
  block_height: z.number().int().meta({ description: 'block number; Stellar ledger sequence; Solana slot (skipped slots have no event)' }),
  block_hash: z.string().meta({ description: 'block hash; Solana blockhash (base58)' }),
  tx_count: z.number().int(),
  transactions: z.array(z.string()).meta({ description: 'transaction hashes; Solana transaction signatures' }),
  created_at: z.string(),
}).meta({ id: 'BlockEvent' });

/** Feed items and webhook bodies share these fields (open objects: more may be added). */
export const eventSchema = z.union([walletEventSchema, blockEventSchema]).meta({ id: 'WatchEvent' });

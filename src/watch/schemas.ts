import { z } from 'zod';
import { eventKind, slug } from '../webhooks/schemas.js';

// Bounded so every value stays a safe integer once parsed: pages to 9 digits.
const intString = (what: string) => z.string().regex(/^[1-9]\d{0,8}$/, 'must be a positive integer below 1000000000').meta({ description: what });

export const watchSchema = z.object({
  watch_id: z.string(),
  network_slug: z.string(),
  address: z.string(),
  created_at: z.string(),
}).meta({ id: 'WatchedAddress' });

export const addWatchBody = z.object({
  network_slug: slug.meta({ description: '`eth` (default environment) or `eth-sepolia`' }),
  address: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(128, 'must be at most 128 characters'),
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
  after: z.union([z.string().regex(/^\d{1,15}$/, AFTER), z.literal('latest')], { error: AFTER }).optional()
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
  tx_hash: z.string(),
  direction: z.enum(['in', 'out']).nullable().meta({ description: '`in` or `out` for wallet hits' }),
  block_height: z.number().int(),
  block_hash: z.string(),
  from: z.string().nullable().optional(),
  to: z.string().nullable().optional(),
  token: z.string().nullable().optional().meta({ description: 'token contract or asset; null for the native coin' }),
  amount: z.string().nullable().optional(),
  log_index: z.number().int().nullable().optional(),
  created_at: z.string(),
}).meta({ id: 'WalletEvent' });

/** A new block on a network the account subscribed to. */
const blockEventSchema = z.looseObject({
  id: z.string(),
  type: z.literal('block'),
  network: z.string(),
  block_height: z.number().int(),
  block_hash: z.string(),
  tx_count: z.number().int(),
  transactions: z.array(z.string()),
  created_at: z.string(),
}).meta({ id: 'BlockEvent' });

/** Feed items and webhook bodies share these fields (open objects: more may be added). */
export const eventSchema = z.union([walletEventSchema, blockEventSchema]).meta({ id: 'WatchEvent' });

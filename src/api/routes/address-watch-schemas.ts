import { hasControlChars } from '../../webhooks/ssrf.js';
import { z } from 'zod';
import { okSchema } from '../schemas.js';

// Bounded so every value stays a safe integer once parsed: pages to 9 digits, ids to 15.
const intString = (what: string) => z.string().regex(/^[1-9]\d{0,8}$/, 'must be a positive integer below 1000000000').meta({ description: what });
const idString = (what: string) => z.string().regex(/^[1-9]\d{0,14}$/, 'must be an id (a positive integer)').meta({ description: what });
const slug = z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(80, 'must be at most 80 characters');

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

export const eventKind = z.enum(['payment', 'payout', 'other', 'block'], { error: 'must be one of payment, payout, other, block' });

export const eventsQuery = z.object({
  after: z.string().regex(/^(latest|\d{1,15})$/, 'must be an event id or "latest"').optional()
    .meta({ description: 'return events after this id (the previous next_after); `latest` returns none and the newest id, where a follower starts' }),
  limit: z.string().regex(/^\d+$/, 'must be an integer from 1 to 500')
    .refine((v) => Number(v) >= 1 && Number(v) <= 500, 'must be an integer from 1 to 500').optional().meta({ description: '1..500, default 100' }),
  network: slug.optional(),
  type: eventKind.optional(),
  watch_id: z.string().max(64).optional(),
});

const networks = z.array(slug, { error: 'must be an array of network slugs' }).max(100, 'must have at most 100 entries');
export const filtersInput = z.strictObject({
  payment: z.boolean({ error: 'must be a boolean' }).optional(),
  payment_networks: networks.optional(),
  payout: z.boolean({ error: 'must be a boolean' }).optional(),
  payout_networks: networks.optional(),
  block: z.boolean({ error: 'must be a boolean' }).optional(),
  block_networks: networks.optional(),
}, { error: 'must be an object' });

export const filtersSchema = z.object({
  payment: z.boolean(), payment_networks: z.array(z.string()),
  payout: z.boolean(), payout_networks: z.array(z.string()),
  block: z.boolean(), block_networks: z.array(z.string()),
}).meta({ id: 'WebhookEventFilters' });

export const putWebhookBody = z.object({
  url: z.string({ error: 'is required and must be a string' }).max(2048, 'must be at most 2048 characters')
    // URL parsing drops CR, LF and TAB silently; the stored text would still hold them.
    .refine((v) => !hasControlChars(v), { message: 'must not contain control characters (CR, LF, TAB...)', abort: true })
    .refine((v) => {
      try {
        const u = new URL(v);
        return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
      } catch {
        return false;
      }
    }, 'must be an http(s) URL'),
  enabled: z.boolean({ error: 'is required and must be a boolean' }),
  events: filtersInput.optional().meta({ description: 'omitted: keep the current filters; given keys replace, missing keys keep' }),
});

/** What PUT answers: the configuration. GET adds `egress_ips` (the spec: "returned by GET only"). */
export const webhookPutSchema = okSchema.extend({
  url: z.string().nullable(),
  enabled: z.boolean(),
  events: filtersSchema,
}).meta({ id: 'WebhookConfigSet' });

export const webhookSchema = webhookPutSchema.extend({
  egress_ips: z.array(z.string()),
}).meta({ id: 'WebhookConfig' });

export const testWebhookBody = z.object({
  type: eventKind,
  network: slug,
});

export const deliveriesQuery = z.object({
  limit: z.string().regex(/^\d+$/, 'must be an integer from 1 to 200')
    .refine((v) => Number(v) >= 1 && Number(v) <= 200, 'must be an integer from 1 to 200').optional(),
  before: idString('delivery id: page back from here (the previous next_before)').optional(),
  status: z.enum(['pending', 'delivered', 'failed', 'cancelled'], { error: 'must be one of pending, delivered, failed, cancelled' }).optional(),
  event_id: idString('only deliveries of this event').optional(),
});

const attemptSchema = z.object({
  attempt: z.number().int(), started_at: z.string(), status_code: z.number().int().nullable(),
  duration_ms: z.number().int(), error: z.string().nullable(), next_retry_at: z.string().nullable(),
  response_excerpt: z.string().nullable(),
});

export const deliverySchema = z.object({
  delivery_id: z.string(), webhook_id: z.string(), event_id: z.string().nullable(), type: z.string(), network: z.string(),
  test: z.boolean(), status: z.string(), attempt_count: z.number().int(), next_retry_at: z.string().nullable(),
  last_status_code: z.number().int().nullable(), last_error: z.string().nullable(), created_at: z.string(),
  delivered_at: z.string().nullable(), attempts: z.array(attemptSchema),
}).meta({ id: 'WebhookDelivery' });

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

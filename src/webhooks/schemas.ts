import { z } from 'zod';
import { idText, okSchema } from '../api/schemas.js';
import { DELIVERY_STATUSES, filtersSchema } from '../wire/webhooks.js';
import { hasControlChars } from './ssrf.js';

/** A network slug as given; the watch routes take the same. */
export const slug = z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(80, 'must be at most 80 characters');

export const eventKind = z.enum(['payment', 'payout', 'other', 'block'], { error: 'must be one of payment, payout, other, block' });

const networks = z.array(slug, { error: 'must be an array of network slugs' }).max(100, 'must have at most 100 entries');
export const filtersInput = z.strictObject({
  payment: z.boolean({ error: 'must be a boolean' }).optional(),
  payment_networks: networks.optional(),
  payout: z.boolean({ error: 'must be a boolean' }).optional(),
  payout_networks: networks.optional(),
  block: z.boolean({ error: 'must be a boolean' }).optional(),
  block_networks: networks.optional(),
}, { error: 'must be an object' });

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
  before: idText('delivery id: page back from here (the previous next_before)').optional(),
  status: z.enum(DELIVERY_STATUSES, { error: `must be one of ${DELIVERY_STATUSES.join(', ')}` }).optional(),
  event_id: idText('only deliveries of this event').optional(),
});


import { z } from 'zod';

// The webhook configuration and delivery shapes of the Public API: the routes validate and
// document with these schemas (openapi.json), and the published client's types are inferred from
// them. Nothing here imports the rest of src/ (docs/architecture.md, "Wire shapes").

/** The flat `events` object of the webhook configuration. */
export const filtersSchema = z.object({
  payment: z.boolean(), payment_networks: z.array(z.string()),
  payout: z.boolean(), payout_networks: z.array(z.string()),
  block: z.boolean(), block_networks: z.array(z.string()),
}).meta({ id: 'WebhookEventFilters' });
export type WebhookEventFilters = z.output<typeof filtersSchema>;

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'cancelled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One attempt of a delivery. */
export const attemptSchema = z.object({
  attempt: z.number().int(), started_at: z.string(), status_code: z.number().int().nullable(),
  duration_ms: z.number().int(), error: z.string().nullable(), next_retry_at: z.string().nullable(),
  response_excerpt: z.string().nullable(),
});
export type WebhookAttempt = z.output<typeof attemptSchema>;

/** A webhook delivery and its attempts. */
export const deliverySchema = z.object({
  delivery_id: z.string(), webhook_id: z.string(), event_id: z.string().nullable(), type: z.string(), network: z.string(),
  test: z.boolean(), status: z.enum(DELIVERY_STATUSES), attempt_count: z.number().int(), next_retry_at: z.string().nullable(),
  last_status_code: z.number().int().nullable(), last_error: z.string().nullable(), created_at: z.string(),
  delivered_at: z.string().nullable(), attempts: z.array(attemptSchema),
}).meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.output<typeof deliverySchema>;

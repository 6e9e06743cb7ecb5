import { z } from 'zod';

// Refund and payout shapes of the Public API (docs/payments.md "Refunds and payouts"): the routes
// validate and document with these schemas, the published client's types are inferred from them.

/** A line's statuses, in the order a line can take them (payouts/transition.ts has the table). */
export const PAYOUT_STATUSES = ['awaiting_approval', 'awaiting_address', 'awaiting_payment', 'sent', 'completed', 'canceled'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

export const APPROVALS = ['not_needed', 'awaiting', 'approved'] as const;
export type Approval = (typeof APPROVALS)[number];

/** At most this many lines in one payout (one batch, one approval, one PSBT). */
export const MAX_PAYOUT_LINES = 1000;

const decimal = (what: string) => z.string({ error: `must be a decimal string such as "12.50" (${what}; not a number: JSON numbers lose precision)` }).min(1).max(80);
const reference = z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(128, 'must be at most 128 characters')
  .regex(/^[^\p{Cc}]*$/u, 'must not contain control characters');

/** What the merchant's wallet is asked to pay: the chain's payment URI (BIP21, EIP-681, or the address) and its QR code. */
export const paymentRequestSchema = z.object({
  uri: z.string().meta({ description: 'BIP21 (UTXO), EIP-681 (EVM) or the plain address (Tron, Stellar): any wallet can pay it' }),
  qr_svg: z.string().nullable().meta({ description: 'the URI as an SVG QR code; null in lists' }),
}).meta({ id: 'PaymentRequest' });

export const payoutLineSchema = z.object({
  line: z.number().int().meta({ description: '1-based position in the payout' }),
  status: z.enum(PAYOUT_STATUSES),
  network: z.string(), asset: z.string(), asset_symbol: z.string(), decimals: z.number().int(),
  address: z.string().nullable().meta({ description: "null while a refund waits for the customer's address" }),
  amount: z.string().meta({ description: 'decimal string in units of the asset' }), amount_raw: z.string(),
  price_amount: z.string().nullable(), price_currency: z.string().nullable(),
  rate: z.string().nullable().meta({ description: 'price_currency per asset unit, locked at creation' }),
  reference: z.string().nullable(),
  tx_hash: z.string().nullable().meta({ description: 'the matching transfer, once one is in a block' }),
  expected_tx: z.string().nullable().meta({ description: 'a signed transaction submitted for it: only that one matches' }),
  lifecycle: z.string(),
  payment_request: paymentRequestSchema.nullable().meta({ description: 'null until approved and while there is no address, and once paid' }),
  updated_at: z.string(),
}).meta({ id: 'PayoutLine' });
export type PayoutLineEntry = z.output<typeof payoutLineSchema>;

const approvalFields = {
  approval: z.enum(APPROVALS).meta({ description: 'awaiting: an owner other than its maker must approve before any payment request is shown' }),
  approval_reason: z.enum(['role', 'amount']).nullable().meta({ description: 'role: a developer prepared it; amount: above payouts_approval_over' }),
  created_by: z.string(), approved_by: z.string().nullable(), approved_at: z.string().nullable(),
  fiat_total: z.string().nullable(), fiat_currency: z.string().nullable(),
};

export const payoutSchema = z.object({
  payout_id: z.string(),
  status: z.enum(PAYOUT_STATUSES).meta({ description: 'the least advanced status of its lines that are not canceled (canceled when all are)' }),
  ...approvalFields,
  lines: z.array(payoutLineSchema), line_count: z.number().int(),
  created_at: z.string(), updated_at: z.string(),
}).meta({ id: 'Payout' });
export type Payout = z.output<typeof payoutSchema>;

export const REFUND_AMOUNTS = ['full', 'overpaid', 'asset', 'fiat_locked', 'fiat_current'] as const;

export const refundSchema = z.object({
  refund_id: z.string(), payment_id: z.string(), order_id: z.string(),
  amount_kind: z.enum(REFUND_AMOUNTS),
  ...approvalFields,
  ...payoutLineSchema.omit({ line: true }).shape,
  refund_link: z.object({ url: z.string().nullable().meta({ description: 'shown once, at creation' }), expires_at: z.string(), claimed: z.boolean() }).nullable(),
  created_at: z.string(),
}).meta({ id: 'Refund' });
export type Refund = z.output<typeof refundSchema>;

export const createRefundBody = z.strictObject({
  amount: z.union([z.enum(['full', 'overpaid']), decimal('in the order\'s asset')], { error: 'must be "full", "overpaid" or a decimal string' })
    .optional().meta({ description: '"full" (the default: what the order received, less earlier refunds), "overpaid" (what arrived beyond the amount), or a decimal amount in the asset' }),
  price_amount: decimal("in the order's fiat currency").optional()
    .meta({ description: "instead of amount: a sum in the order's price_currency, at the rate named by rate" }),
  rate: z.enum(['locked', 'current'], { error: 'must be "locked" or "current"' }).optional()
    .meta({ description: "with price_amount: the order's locked rate, or today's rate" }),
  address: z.string({ error: 'must be a string' }).min(1).max(128).optional()
    .meta({ description: "the customer's address; without it the answer carries a refund link for the customer to give one" }),
  reference: reference.optional(),
  link_expires_in: z.number({ error: 'must be an integer number of seconds' }).int('must be an integer number of seconds')
    .min(300, 'must be at least 300 seconds').max(30 * 86_400, 'must be at most 2592000 seconds (30 days)').optional()
    .meta({ description: 'how long the refund link works (default 604800: 7 days); only without address' }),
});
export type CreateRefund = z.output<typeof createRefundBody>;

export const payoutLineInput = z.strictObject({
  network: z.string({ error: 'is required and must be a network slug' }).min(1).max(80),
  asset: z.string({ error: 'must be a string' }).min(1).max(128).optional(),
  address: z.string({ error: 'is required and must be a string' }).min(1).max(128),
  amount: decimal('in the asset').optional(),
  price_amount: decimal('in price_currency').optional().meta({ description: 'instead of amount: a fiat sum at a rate locked at creation' }),
  price_currency: z.string({ error: 'must be an ISO 4217 currency code such as "USD"' }).max(16).optional(),
  reference: reference.optional(),
});
export type PayoutLineInput = z.output<typeof payoutLineInput>;

export const createPayoutBody = z.strictObject({
  lines: z.array(payoutLineInput, { error: 'must be an array of lines' }).min(1, 'must have at least one line')
    .max(MAX_PAYOUT_LINES, `must have at most ${MAX_PAYOUT_LINES} lines (send several payouts)`),
});
export type CreatePayout = z.output<typeof createPayoutBody>;

export const submitTransactionBody = z.strictObject({
  signed_transaction: z.string({ error: 'is required: the signed transaction (hex, or base64 for a finalized PSBT)' }).min(1).max(400_000),
  broadcast: z.boolean({ error: 'must be true or false' }).optional().meta({ description: 'send it through the network\'s upstreams (default true); false: only check and record it' }),
});
export type SubmitTransaction = z.output<typeof submitTransactionBody>;

import { z } from 'zod';

// The payment order shapes of the Public API: the routes validate and document with these
// schemas (openapi.json), and the published client's types are inferred from them. Nothing here
// imports the rest of src/ (docs/architecture.md, "Wire shapes").

/** An order's statuses, in the order an order can take them. */
export const PAYMENT_STATUSES = ['pending', 'seen', 'aml_check', 'paid', 'failed', 'underpaid', 'expired'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** The normalised result every AML provider returns (decisions.md, "Payment orders"). */
export const amlResultSchema = z.object({
  provider: z.string(), score: z.number().meta({ description: '0-100' }), risk_level: z.enum(['low', 'medium', 'high', 'severe', 'unknown']),
  details: z.array(z.object({ category: z.string(), address: z.string(), source: z.string() })),
  report_url: z.string().nullable(), checked_at: z.string(),
}).meta({ id: 'AmlResult' });
export type AmlResult = z.output<typeof amlResultSchema>;
export type RiskLevel = AmlResult['risk_level'];

export const paymentSchema = z.object({
  payment_id: z.string(), order_id: z.string(), status: z.enum(PAYMENT_STATUSES), network: z.string(),
  asset: z.string().meta({ description: '`native`, an EVM or Tron token contract, a Stellar CODE:ISSUER, or a Solana SPL mint (USDC, USDT)' }), asset_symbol: z.string(), decimals: z.number().int(),
  address: z.string().meta({ description: "where the customer pays: the order's own address, or the merchant's wallet on networks whose orders are told apart by reference (Solana)" }),
  reference: z.string().nullable().meta({ description: 'Solana Pay: the public key the customer\'s transaction names (`reference`), which tells this order\'s payments apart; null elsewhere' }),
  watch_id: z.string(), derivation_index: z.number().int().nullable(),
  amount: z.string().meta({ description: 'decimal string in units' }), amount_raw: z.string().meta({ description: 'integer string in base units' }),
  amount_received: z.string(), amount_received_raw: z.string(),
  price_amount: z.string().nullable().meta({ description: 'the fiat price (decimal string); null for an order priced in the asset' }),
  price_currency: z.string().nullable().meta({ description: 'ISO 4217 code of price_amount' }),
  rate: z.string().nullable().meta({ description: 'price_currency per asset unit, locked at creation (decimal string)' }),
  rate_source: z.enum(['static', 'http']).nullable(),
  rate_at: z.string().nullable().meta({ description: 'when the source priced the rate' }),
  tx_hashes: z.array(z.string()),
  confirmations: z.number().int().meta({ description: 'confirmations the network requires before funds count' }),
  expires_at: z.string(), created_at: z.string(), updated_at: z.string(), webhook_url: z.string().nullable(),
  metadata: z.unknown(), aml: amlResultSchema.nullable(), reason: z.string().nullable(), late: z.boolean(), overpaid: z.boolean(),
  lifecycle: z.string().meta({ description: 'statuses taken, joined by ">", e.g. pending>seen>aml_check>paid' }),
  checkout_url: z.string().meta({ description: 'the hosted checkout page for the customer, `{api_base}/pay/{payment_id}`: no sign-in, the payment id is its credential' }),
}).meta({ id: 'Payment' });
export type Payment = z.output<typeof paymentSchema>;

export const MAX_METADATA_BYTES = 4096;

/**
 * Order metadata, judged on the value as parsed, before the record below rebuilds it: that
 * rebuild drops a `__proto__` key without a word. Refused rather than kept, at any depth:
 * receivers in JavaScript that merge it into an object would change its prototype.
 */
function checkMetadata(value: unknown, ctx: z.RefinementCtx): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  const bytes = new TextEncoder().encode(JSON.stringify(value)).length;
  if (bytes > MAX_METADATA_BYTES) ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_METADATA_BYTES} bytes of JSON (UTF-8), got ${bytes}` });
  const where = protoKeyPath(value);
  if (where !== undefined) ctx.addIssue({ code: 'custom', message: `the key "__proto__" is not allowed (at ${where})` });
}

/** Where a `__proto__` key is, as a path such as `metadata.cart[0].__proto__`; walked without recursion. */
function protoKeyPath(root: object): string | undefined {
  const stack: Array<{ value: unknown; path: string }> = [{ value: root, path: 'metadata' }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (Array.isArray(value)) value.forEach((v, i) => stack.push({ value: v, path: `${path}[${i}]` }));
    else if (value !== null && typeof value === 'object') {
      if (Object.hasOwn(value, '__proto__')) return `${path}.__proto__`;
      for (const [k, v] of Object.entries(value)) stack.push({ value: v, path: `${path}.${k}` });
    }
  }
  return undefined;
}

const metadataSchema = z.unknown().superRefine(checkMetadata)
  .pipe(z.record(z.string(), z.unknown(), { error: 'must be a JSON object' }))
  // The pipe would show as "anything" in the OpenAPI document: say what it takes.
  .meta({ type: 'object', additionalProperties: {}, description: `Any JSON object up to ${MAX_METADATA_BYTES} bytes (UTF-8) of JSON; no "__proto__" key` });

const orderId = z.string({ error: 'is required and must be a string' }).min(1, 'must not be empty').max(128, 'must be at most 128 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

export const createPaymentBody = z.strictObject({
  order_id: orderId,
  network_slug: z.string({ error: 'is required and must be a string' }).min(1).max(80),
  amount: z.string({ error: 'must be a decimal string such as "12.50" (not a number: JSON numbers lose precision)' }).min(1).max(80).optional()
    .meta({ description: 'in the asset; or give price_amount and price_currency instead' }),
  price_amount: z.string({ error: 'must be a decimal string such as "19.99" (not a number: JSON numbers lose precision)' }).min(1).max(80).optional()
    .meta({ description: 'a price in price_currency, instead of amount: the amount is computed at a rate locked now, rounded up to the asset\'s decimals' }),
  price_currency: z.string({ error: 'must be an ISO 4217 currency code such as "USD"' }).max(16).optional(),
  asset: z.string({ error: 'must be a string' }).min(1).max(128).optional()
    .meta({ description: '`native` (default: ETH, BTC, TRX, XLM, SOL…), or a listed token of the network: an EVM or Tron contract, a Stellar CODE:ISSUER, a Solana SPL mint' }),
  address: z.string({ error: 'must be a string' }).min(1).max(128).optional()
    .meta({ description: "the order's own address; on Solana the merchant's wallet (default: the settings' wallets.solana), the order told apart by a fresh Solana Pay reference" }),
  expires_in: z.number({ error: 'must be an integer number of seconds' }).int('must be an integer number of seconds')
    .min(10, 'must be at least 10 seconds').max(604_800, 'must be at most 604800 seconds (7 days)').optional(),
  webhook_url: z.string({ error: 'must be a string' }).url('must be an http(s) URL').max(2048).optional(),
  metadata: metadataSchema.optional(),
});
/** A create request (`POST /v1/payments`). */
export type CreatePayment = z.output<typeof createPaymentBody>;

/**
 * The settings' shapes, keyed by the families that derive order addresses. The server passes
 * them from the chain traits (chains/traits.ts DERIVING_FAMILIES); the published client, which
 * loads no chain code, types them by name (`PaymentSettings<string>`).
 */
export function paymentSettingsSchemas<F extends string, W extends string = string>(families: readonly F[], walletFamilies: readonly W[] = []) {
  const family = z.enum(families as unknown as [F, ...F[]], { error: `must be a family that derives addresses: ${families.join(', ')}` });
  const walletFamily = z.enum(walletFamilies as unknown as [W, ...W[]]);
  const wallets = z.partialRecord(walletFamily, z.string({ error: 'must be a string: an address ("" removes it)' }).max(128, 'must be at most 128 characters'), {
    error: (iss) => (iss as { code: string }).code === 'unrecognized_keys'
      ? `has a key that is not a family whose orders share the merchant's wallet (${walletFamilies.join(', ')})`
      : `must be an object such as ${JSON.stringify(Object.fromEntries(walletFamilies.map((f) => [f, 'address...'])))}`,
  });
  const input = z.strictObject({
    xpubs: z.partialRecord(family, z.string({ error: 'must be a string ("" removes it)' }).max(200, 'must be at most 200 characters'),
      {
        // zod's types leave out the unrecognized_keys issue a partial record with enum keys raises.
        error: (iss) => {
          const unknown = (iss as { code: string; keys?: string[] }).code === 'unrecognized_keys' ? (iss as { keys?: string[] }).keys ?? [] : [];
          return unknown.length > 0
            ? `has ${unknown.map((k) => JSON.stringify(k)).join(', ')}: its keys are the families that derive addresses (${families.join(', ')})`
            : `must be an object such as ${JSON.stringify(Object.fromEntries(families.map((f) => [f, 'xpub...'])))}`;
        },
      }).optional()
      .meta({ description: `extended public keys per family (${families.join(', ')}); "" removes one` }),
    wallets: wallets.optional()
      .meta({ description: `the merchant's wallet per family whose orders share it, told apart by a Solana Pay reference (${walletFamilies.join(', ')}); "" removes one` }),
    aml_fail_at: z.enum(FAIL_AT, { error: 'must be "medium", "high" or "severe"' }).optional(),
    underpaid_tolerance_bps: z.number({ error: 'must be an integer (basis points)' }).int('must be an integer (basis points)')
      .min(0, 'must be at least 0').max(10_000, 'must be at most 10000 (100 %)').optional(),
    accept_late: z.boolean({ error: 'must be true or false' }).optional(),
    display_name: z.string({ error: 'must be a string ("" removes it)' }).max(80, 'must be at most 80 characters')
      .regex(/^[^\p{Cc}]*$/u, 'must not contain control characters').optional(),
    redirect_url: z.string({ error: 'must be a string: an https URL ("" removes it)' }).max(2048, 'must be at most 2048 characters').optional(),
    payouts_approval_over: z.strictObject({
      amount: z.string({ error: 'must be a decimal string such as "1000"' }).regex(/^\d{1,30}(\.\d{1,30})?$/, 'must be a decimal string such as "1000"'),
      currency: z.string({ error: 'must be an ISO 4217 code such as "USD"' }).regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code in capitals such as "USD"'),
    }, { error: 'must be an object such as {"amount": "1000", "currency": "USD"}, or null to turn it off' }).nullable().optional()
      .meta({ description: 'refunds and payouts worth more (in this currency, at creation) need a second owner\'s approval; null: off (the default)' }),
  });
  const view = z.object({
    xpubs: z.partialRecord(family, z.string()),
    wallets: z.partialRecord(walletFamily, z.string()).meta({ description: "the merchant's wallet that orders of these families are paid to" }),
    aml_fail_at: z.enum(FAIL_AT), underpaid_tolerance_bps: z.number().int(), accept_late: z.boolean(),
    display_name: z.string().nullable().meta({ description: "the merchant's name on the checkout page" }),
    redirect_url: z.string().nullable().meta({ description: 'where the checkout page sends a paid customer, with ?order_id=' }),
    payouts_approval_over: z.object({ amount: z.string(), currency: z.string() }).nullable()
      .meta({ description: "above this a refund or payout needs a second owner's approval; null: off" }),
    derived: z.partialRecord(family, z.object({
      first_address: z.string(), next_index: z.number().int(),
      network: z.string().optional().meta({ description: 'families whose environments have address prefixes (utxo): the network whose prefixes first_address is written in' }),
    })).meta({ description: "each key's first address, so the merchant can check it is the wallet they think" }),
  });
  return { input, view };
}

/** The risk level at which screening fails an order. */
const FAIL_AT = ['medium', 'high', 'severe'] as const;
export type FailAt = (typeof FAIL_AT)[number];

type SettingsSchemas<F extends string, W extends string> = ReturnType<typeof paymentSettingsSchemas<F, W>>;
/** The payment settings as `GET /v1/payments/settings` answers them (without `ok`). */
export type PaymentSettings<F extends string = string, W extends string = string> = z.output<SettingsSchemas<F, W>['view']>;
/** A settings change (`PUT /v1/payments/settings`): the keys given replace the stored ones. */
export type PaymentSettingsInput<F extends string = string, W extends string = string> = z.input<SettingsSchemas<F, W>['input']>;

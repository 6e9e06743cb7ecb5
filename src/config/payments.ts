import { z } from 'zod';

/** `networks[].tokens[]`: an EVM token by contract address, a Tron TRC-20 by its `T…` contract, a Stellar asset as `CODE:ISSUER`. */
export const tokenSchema = z.strictObject({
  symbol: z.string().regex(/^[A-Za-z0-9.]{1,12}$/, '1-12 letters, digits or dots'),
  address: z.string().regex(/^(0x[0-9a-fA-F]{40}|T[1-9A-HJ-NP-Za-km-z]{33})$/, 'must be a 0x contract address (EVM) or a T… contract address (Tron TRC-20)').optional(),
  asset: z.string().regex(/^[A-Za-z0-9]{1,12}:G[A-Z2-7]{55}$/, 'must be CODE:ISSUER').optional(),
  decimals: z.number().int().min(0).max(36),
}).refine((t) => (t.address === undefined) !== (t.asset === undefined), { message: 'give either address (EVM, Tron) or asset (Stellar)' });

export type TokenConfig = z.output<typeof tokenSchema>;

const httpAmlSchema = z.strictObject({
  preset: z.enum(['chainalysis', 'trm']),
  base_url: z.string().url().optional(),
  /** The API key; or name an environment variable that holds it with `api_key_env`. */
  api_key: z.string().min(1).optional(),
  api_key_env: z.string().min(1).optional(),
  timeout_ms: z.number().int().min(100).max(60_000).default(10_000),
  chains: z.record(z.string(), z.string()).default({}),
  report_url_template: z.string().optional(),
});

/** A rate: a positive decimal string (never a JSON number, which may already have lost digits). */
export const RATE_PATTERN = /^(?=.*[1-9])\d{1,30}(\.\d{1,30})?$/;
/** `ASSET/CURRENCY`: the asset's symbol (as in networks[].tokens, upper case) and an ISO 4217 code. */
export const PAIR_PATTERN = /^[A-Z0-9.]{1,12}\/[A-Z]{3}$/;

const RATES_DEFAULT = { provider: 'static' as const, ttl_s: 300, static: {} };

/**
 * Where fiat-priced orders get their rate (docs/payments.md, "Fiat prices"): a static table
 * (this file's `static`, extended and overridden by `rpcctl admin rates set`) or an HTTP JSON
 * source the operator already pays for.
 */
const ratesSchema = z.strictObject({
  provider: z.enum(['static', 'http']).default('static'),
  /** A rate older than this refuses creation (store rates by their updated_at; HTTP answers are cached this long). */
  ttl_s: z.number().int().min(1).max(7 * 86_400).default(300),
  static: z.record(z.string(), z.string({ error: 'must be a positive decimal string such as "3000.00" (currency per asset unit)' })
    .regex(RATE_PATTERN, 'must be a positive decimal string such as "3000.00" (currency per asset unit)'))
    // Checked here rather than as the record's key schema, whose own message would be "Invalid key in record".
    .superRefine((table, ctx) => {
      for (const pair of Object.keys(table)) {
        if (!PAIR_PATTERN.test(pair)) ctx.addIssue({ code: 'custom', path: [pair], message: 'keys are ASSET/CURRENCY, e.g. "ETH/USD" (upper case, ISO 4217 currency)' });
      }
    }).default({}),
  http: z.strictObject({
    /** GET; `{asset}`, `{currency}` (and `{asset_lower}`, `{currency_lower}`) are replaced. */
    url: z.string().url(),
    /** A dotted path to the number in the JSON answer, with the same placeholders, e.g. `data.{asset}.{currency}`. */
    selector: z.string().min(1).max(500),
    /** Optional dotted path to when the source priced it (Unix seconds or ISO 8601): older than ttl_s is refused. */
    time_selector: z.string().min(1).max(500).optional(),
    /** Names an environment variable holding a JSON object of request headers (an API key stays out of the config). */
    headers_env: z.string().min(1).optional(),
    timeout_ms: z.number().int().min(100).max(60_000).default(5000),
  }).optional(),
}).refine((r) => r.provider !== 'http' || r.http !== undefined, { message: 'provider "http" needs payments.rates.http', path: ['http'] })
  .default(RATES_DEFAULT);

export const paymentsConfigSchema = z.strictObject({
  aml: z.strictObject({
    provider: z.enum(['sanctions-list', 'http', 'none']).default('sanctions-list'),
    /** Loaded at start when set (else the shipped dev list on a store without one). */
    sanctions_file: z.string().optional(),
    http: httpAmlSchema.optional(),
  }).refine((a) => a.provider !== 'http' || a.http !== undefined, { message: 'provider "http" needs payments.aml.http', path: ['http'] })
    .default({ provider: 'sanctions-list' }),
  /** How often expiry and the screening queue are looked at. */
  tick_ms: z.number().int().min(20).max(60_000).default(500),
  /** How long an expired order's address stays watched for late payments. */
  late_window_s: z.number().int().min(0).max(30 * 86_400).default(86_400),
  checkout: z.strictObject({
    /** Checkout page views and status polls per minute per client address (a page polls about 20 a minute). */
    rpm_per_ip: z.number().int().min(1).default(120),
    /** Lets the payments settings' `redirect_url` be any URL, not only https (`serve --dev`). */
    allow_any_redirect: z.boolean().default(false),
  }).default({ rpm_per_ip: 120, allow_any_redirect: false }),
  rates: ratesSchema,
}).default({
  aml: { provider: 'sanctions-list' }, tick_ms: 500, late_window_s: 86_400,
  checkout: { rpm_per_ip: 120, allow_any_redirect: false }, rates: RATES_DEFAULT,
});

export type PaymentsConfig = z.output<typeof paymentsConfigSchema>;
export type RatesConfig = PaymentsConfig['rates'];

import { z } from 'zod';

/** `networks[].tokens[]`: an EVM token by contract address, a Tron TRC-20 by its `T…` contract, a Stellar asset as `CODE:ISSUER`, a Solana SPL token by its mint (base58). */
export const tokenSchema = z.strictObject({
  symbol: z.string().regex(/^[A-Za-z0-9.]{1,12}$/, '1-12 letters, digits or dots'),
  address: z.string().regex(/^(0x[0-9a-fA-F]{40}|T[1-9A-HJ-NP-Za-km-z]{33}|[1-9A-HJ-NP-Za-km-z]{32,44})$/, 'must be a 0x contract address (EVM), a T… contract address (Tron TRC-20) or a base58 mint address (Solana SPL)').optional(),
  asset: z.string().regex(/^[A-Za-z0-9]{1,12}:G[A-Z2-7]{55}$/, 'must be CODE:ISSUER').optional(),
  decimals: z.number().int().min(0).max(36),
}).refine((t) => (t.address === undefined) !== (t.asset === undefined), { message: 'give either address (EVM, Tron, Solana) or asset (Stellar)' });

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

/** Defaults of the http source's sanity checks (docs/payments.md, "Fiat prices"). */
export const RATE_BAND = { min_rate: '0.000000001', max_rate: '1000000000000', max_move: 0.5, max_move_window_s: 3600 };
const rateText = z.string({ error: 'must be a positive decimal string such as "0.000001"' })
  .regex(RATE_PATTERN, 'must be a positive decimal string such as "0.000001"');

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
    url: z.string().url()
      // undici would not fetch file: or data:, so every order would be refused; say it at start.
      .refine((v) => /^https?:\/\//i.test(v), 'must be an http(s) URL'),
    /** A dotted path to the number in the JSON answer, with the same placeholders, e.g. `data.{asset}.{currency}`. */
    selector: z.string().min(1).max(500),
    /** Optional dotted path to when the source priced it (Unix seconds or ISO 8601): older than ttl_s is refused. */
    time_selector: z.string().min(1).max(500).optional(),
    /** Names an environment variable holding a JSON object of request headers (an API key stays out of the config). */
    headers_env: z.string().min(1).optional(),
    timeout_ms: z.number().int().min(100).max(60_000).default(5000),
    /**
     * The sanity band: a rate outside it is the source's mistake (`1e-30` would price an order at
     * 10^31 ETH) and refuses the order. Wide enough for BTC in VND and for sub-cent tokens.
     */
    min_rate: rateText.default(RATE_BAND.min_rate),
    max_rate: rateText.default(RATE_BAND.max_rate),
    /**
     * A rate more than `1 + max_move` times, or less than `1 / (1 + max_move)` of, the last rate
     * accepted for the pair within `max_move_window_s` is refused; after the window the band alone
     * judges, so a real move is not refused for ever.
     */
    max_move: z.number().positive().max(1000).default(RATE_BAND.max_move),
    max_move_window_s: z.number().int().min(1).max(7 * 86_400).default(RATE_BAND.max_move_window_s),
  }).refine((h) => Number(h.min_rate) < Number(h.max_rate), { message: 'min_rate must be below max_rate', path: ['min_rate'] }).optional(),
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
  /**
   * How often expiry, late windows, finality and screening retries are looked at; recorded
   * blocks wake the engine at once (a call, and NOTIFY from other instances), so this is also
   * the safety net for a lost notification.
   */
  tick_ms: z.number().int().min(20).max(60_000).default(2000),
  /**
   * How often the open orders of families with references (Solana Pay) are looked up by their
   * reference (`getSignaturesForAddress`), at most 100 orders per environment a pass: the
   * scanner's fallback for a block it passed without seeing (payments/references.ts).
   */
  reference_sweep_ms: z.number().int().min(100).max(3_600_000).default(10_000),
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
  aml: { provider: 'sanctions-list' }, tick_ms: 2000, reference_sweep_ms: 10_000, late_window_s: 86_400,
  checkout: { rpm_per_ip: 120, allow_any_redirect: false }, rates: RATES_DEFAULT,
});

export type PaymentsConfig = z.output<typeof paymentsConfigSchema>;
export type RatesConfig = PaymentsConfig['rates'];

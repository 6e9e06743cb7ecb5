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
}).default({
  aml: { provider: 'sanctions-list' }, tick_ms: 500, late_window_s: 86_400,
  checkout: { rpm_per_ip: 120, allow_any_redirect: false },
});

export type PaymentsConfig = z.output<typeof paymentsConfigSchema>;

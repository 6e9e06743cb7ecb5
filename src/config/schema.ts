import { z } from 'zod';
import { isValidIp } from '../util/ip.js';

const port = z.number().int().min(0).max(65535);
const address = z.string().refine(isValidIp, { message: 'must be an IPv4 or IPv6 address (no ranges)' });
const slug = z.string().regex(/^[a-z0-9][a-z0-9_]*$/, 'lowercase letters, digits and underscores, starting with a letter or digit').max(40);

export const environmentSchema = z.strictObject({
  id: z.number().int().min(1).optional(),
  slug,
  upstreams: z.array(z.string().url()).default([]),
  confirmations: z.number().int().min(0).max(1000).default(1),
});

export const networkSchema = z.strictObject({
  id: z.number().int().min(1).optional(),
  slug,
  name: z.string().min(1).max(100),
  family: z.enum(['evm', 'stellar']).default('evm'),
  sort: z.number().int().default(100),
  environments: z.array(environmentSchema).min(1),
  /** Omitted: the family's built-in table (see defaults.ts). */
  credits: z.strictObject({
    default: z.number().int().min(0).default(20),
    methods: z.record(z.string(), z.number().int().min(0)).default({}),
    /** `eth_getLogs` costs its price once per this many blocks its range covers (rounded up). */
    logs_block_unit: z.number().int().min(1).optional(),
  }).optional(),
  /** `eth_getLogs` ranges wider than this are refused or split (`logs_over_range`). */
  max_logs_block_range: z.number().int().min(1).default(10_000),
  logs_over_range: z.enum(['refuse', 'split']).default('refuse'),
  /** An `eth_getLogs` answer with more logs than this is refused, split or not. */
  max_logs_results: z.number().int().min(1).default(10_000),
  /** Overrides `gateway.max_lag_blocks` for this network (fast chains drift more blocks between probes). */
  max_lag_blocks: z.number().int().min(0).optional(),
});

export const planSchema = z.strictObject({
  id: z.number().int().min(1),
  slug,
  name: z.string().min(1).max(100),
  included_credits: z.number().int().min(0),
  rps_limit: z.number().int().min(1),
  endpoints_limit: z.number().int().min(0),
  webhook_address_slots: z.number().int().min(0).default(0),
  network_limit: z.number().int().min(1).nullable().default(null),
  allowed_network_slugs: z.array(slug).default([]),
});

export const configSchema = z.strictObject({
  api: z.strictObject({
    host: z.string().default('127.0.0.1'),
    port: port.default(8080),
    /** Socket addresses whose X-Forwarded-For is believed. */
    trusted_proxies: z.array(address).default([]),
    max_body_bytes: z.number().int().min(1024).default(1024 * 1024),
  }).default({ host: '127.0.0.1', port: 8080, trusted_proxies: [], max_body_bytes: 1024 * 1024 }),
  gateway: z.strictObject({
    host: z.string().default('127.0.0.1'),
    port: port.default(8545),
    host_prefix: z.string().regex(/^[a-z0-9-]+$/).default('rpc'),
    rpc_domain: z.string().min(1).default('localhost:8545'),
    scheme: z.enum(['http', 'https']).default('http'),
    trusted_proxies: z.array(address).default([]),
    max_body_bytes: z.number().int().min(1024).default(1024 * 1024),
    max_batch: z.number().int().min(1).default(100),
    upstream_timeout_ms: z.number().int().min(100).default(10_000),
    /** How often each environment's node is asked for its version and block height. */
    probe_interval_ms: z.number().int().min(100).default(15_000),
    /** How often the gateway re-reads every endpoint, for changes made by other processes. */
    registry_reload_ms: z.number().int().min(100).default(5000),
    /** Blocks an upstream may lag behind the best known head and still serve calls that read the head. */
    max_lag_blocks: z.number().int().min(0).default(5),
    /** Hedge idempotent reads after this quantile of the chosen upstream's latency; null: off. */
    hedge_quantile: z.number().min(0.5).max(0.999).nullable().default(null),
    /** Memory for cached final answers, shared by all environments; 0 turns the cache off. */
    cache_max_bytes: z.number().int().min(0).default(64 * 1024 * 1024),
    /** The largest `eth_getLogs` answer read from an upstream (all chunks together when split). */
    max_logs_response_bytes: z.number().int().min(1024).default(32 * 1024 * 1024),
  }).default({
    host: '127.0.0.1', port: 8545, host_prefix: 'rpc', rpc_domain: 'localhost:8545', scheme: 'http',
    trusted_proxies: [], max_body_bytes: 1024 * 1024, max_batch: 100, upstream_timeout_ms: 10_000, probe_interval_ms: 15_000,
    registry_reload_ms: 5000, max_lag_blocks: 5, hedge_quantile: null, cache_max_bytes: 64 * 1024 * 1024,
    max_logs_response_bytes: 32 * 1024 * 1024,
  }),
  limits: z.strictObject({
    api_rps_per_ip: z.number().int().min(1).default(30),
    api_rpm_per_account: z.number().int().min(1).default(100),
  }).default({ api_rps_per_ip: 30, api_rpm_per_account: 100 }),
  webhooks: z.strictObject({
    egress_ips: z.array(z.string()).default([]),
    timeout_ms: z.number().int().min(100).max(60_000).default(5000),
    allow_private_urls: z.boolean().default(false),
  }).default({ egress_ips: [], timeout_ms: 5000, allow_private_urls: false }),
  networks: z.array(networkSchema).optional(),
  plans: z.array(planSchema).optional(),
});

export type ConfigInput = z.input<typeof configSchema>;
type Parsed = z.output<typeof configSchema>;
export type NetworkConfig = Omit<z.output<typeof networkSchema>, 'credits' | 'max_logs_block_range' | 'logs_over_range' | 'max_logs_results'>
  & Partial<Pick<z.output<typeof networkSchema>, 'max_logs_block_range' | 'logs_over_range' | 'max_logs_results'>>
  & { credits: { default: number; methods: Record<string, number>; logs_block_unit?: number } };
export type EnvironmentConfig = z.output<typeof environmentSchema>;
export type PlanConfig = z.output<typeof planSchema>;
export type Config = Omit<Parsed, 'networks' | 'plans'> & { networks: NetworkConfig[]; plans: PlanConfig[] };

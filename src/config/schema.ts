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
  /**
   * UTXO family only: the chain's address prefixes (Bitcoin Core's chainparams). Omitted on a
   * `utxo` network: Bitcoin's for the environment slug (mainnet, testnet/testnet4/signet, regtest).
   */
  address_format: z.strictObject({
    /** Segwit human-readable part (`bc`, `ltc`); null for a chain without segwit (Dogecoin). */
    bech32: z.string().regex(/^[a-z0-9]{1,20}$/).nullable(),
    pub_key_hash: z.number().int().min(0).max(255),
    script_hash: z.number().int().min(0).max(255),
  }).optional(),
});

export const networkSchema = z.strictObject({
  id: z.number().int().min(1).optional(),
  slug,
  name: z.string().min(1).max(100),
  family: z.enum(['evm', 'stellar', 'utxo', 'tron']).default('evm'),
  sort: z.number().int().default(100),
  environments: z.array(environmentSchema).min(1),
  /** Omitted: the family's built-in table (see defaults.ts). */
  credits: z.strictObject({
    default: z.number().int().min(0).default(20),
    methods: z.record(z.string(), z.number().int().min(0)).default({}),
  }).optional(),
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
  }).default({
    host: '127.0.0.1', port: 8545, host_prefix: 'rpc', rpc_domain: 'localhost:8545', scheme: 'http',
    trusted_proxies: [], max_body_bytes: 1024 * 1024, max_batch: 100, upstream_timeout_ms: 10_000, probe_interval_ms: 15_000,
    registry_reload_ms: 5000,
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
export type NetworkConfig = Omit<z.output<typeof networkSchema>, 'credits'> & { credits: { default: number; methods: Record<string, number> } };
export type EnvironmentConfig = z.output<typeof environmentSchema>;
export type PlanConfig = z.output<typeof planSchema>;
export type Config = Omit<Parsed, 'networks' | 'plans'> & { networks: NetworkConfig[]; plans: PlanConfig[] };

import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { isValidIp } from '../util/ip.js';
import { DEFAULT_FAMILY, FAMILY_NAMES, traitsOf } from '../chains/traits.js';
import { paymentsConfigSchema, tokenSchema } from './payments.js';

const port = z.number().int().min(0).max(65535);
const address = z.string().refine(isValidIp, { message: 'must be an IPv4 or IPv6 address (no ranges)' });

const slug = z.string().regex(/^[a-z0-9][a-z0-9_]*$/, 'lowercase letters, digits and underscores, starting with a letter or digit').max(40);

export const environmentSchema = z.strictObject({
  id: z.number().int().min(1).optional(),
  slug,
  upstreams: z.array(z.string().url()).default([]),
  /** WebSocket nodes for subscriptions (`eth_subscribe`, Solana's PubSub); without any, EVM's newHeads and logs are polled over `upstreams`. */
  ws_upstreams: z.array(z.string().url().refine((u) => /^wss?:\/\//i.test(u), { message: 'must be a ws:// or wss:// URL' })).default([]),
  confirmations: z.number().int().min(0).max(1000).default(1),
  /**
   * Confirmations after which a transaction is final (where the node reports no `finalized`
   * block): a closed payment order watches its address until its funding is this deep.
   * Omitted: the family's default (evm 64, utxo 6, tron 20, stellar 0, solana 32 slots).
   */
  finality_depth: z.number().int().min(0).max(100_000).optional(),
  /**
   * The environment's own tokens, in place of the network's `tokens` (a test network's
   * contracts and mints are other addresses than mainnet's). Omitted: the network's.
   */
  tokens: z.array(tokenSchema).optional(),
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

const regex = z.string().min(1).max(500).refine((r) => {
  try {
    new RegExp(r, 'i');
    return true;
  } catch {
    return false;
  }
}, { message: 'must be a regular expression' });

/** `networks[].error_classes[]`: whose fault a JSON-RPC error is (docs/gateway.md, "Errors the nodes answer"). */
const errorClassSchema = z.strictObject({
  code: z.number().int().optional(),
  /** Case-insensitive regular expression on the error's message. */
  message: regex.optional(),
  class: z.enum(['upstream', 'caller', 'method']),
}).refine((r) => r.code !== undefined || r.message !== undefined, { message: 'give code, message or both' });

/** Method names or patterns with `*` (`debug_*`). */
const methodPatterns = z.array(z.string().regex(/^[A-Za-z0-9_*]+$/, 'letters, digits, _ and * only').max(100)).max(200);

/**
 * Answers checked across upstreams (docs/gateway.md, "Integrity policy"): for the listed methods
 * `k` upstreams are asked at once and the answer is the one `m` of them agree on.
 */
export const integrityPolicySchema = z.strictObject({
  methods: z.array(z.string().min(1).max(100)).min(1),
  k: z.number().int().min(2).max(16),
  m: z.number().int().min(1).max(16),
  /** majority: the first answer m upstreams agree on; error: every answer received must agree (and at least m). */
  on_disagreement: z.enum(['majority', 'error']).default('majority'),
  /** fixed_block: only calls whose block parameter names a fixed block (a number, a hash, `earliest`, `finalized`). */
  when: z.enum(['always', 'fixed_block']).default('always'),
  /** How long to wait for the k answers; omitted: `gateway.upstream_timeout_ms`. */
  timeout_ms: z.number().int().min(10).max(600_000).optional(),
}).refine((p) => p.m <= p.k, { message: 'm must be at most k', path: ['m'] });

export const networkSchema = z.strictObject({
  id: z.number().int().min(1).optional(),
  slug,
  name: z.string().min(1).max(100),
  family: z.enum(FAMILY_NAMES, { error: (iss) => `unknown chain family ${JSON.stringify(iss.input)} (one of ${FAMILY_NAMES.join(', ')})` }).default(DEFAULT_FAMILY),
  sort: z.number().int().default(100),
  environments: z.array(environmentSchema).min(1),
  /** Omitted: the family's built-in table (see defaults.ts). */
  credits: z.strictObject({
    default: z.number().int().min(0).default(20),
    methods: z.record(z.string(), z.number().int().min(0)).default({}),
    /** `eth_getLogs` costs its price once per this many blocks its range covers (rounded up). */
    logs_block_unit: z.number().int().min(1).optional(),
  }).optional(),
  /** Assets payment orders may ask for besides the native coin. */
  tokens: z.array(tokenSchema).default([]),
  /** `eth_getLogs` ranges wider than this are refused or split (`logs_over_range`). */
  max_logs_block_range: z.number().int().min(1).default(10_000),
  logs_over_range: z.enum(['refuse', 'split']).default('refuse'),
  /** An `eth_getLogs` answer with more logs than this is refused, split or not. */
  max_logs_results: z.number().int().min(1).default(10_000),
  /** Overrides `gateway.max_lag_blocks` for this network (fast chains drift more blocks between probes). */
  max_lag_blocks: z.number().int().min(0).optional(),
  /** JSON-RPC error classes checked before the built-in table (its nodes' own dialect). */
  error_classes: z.array(errorClassSchema).max(100).optional(),
  /** Which methods an upstream serves, by its URL exactly as in `environments[].upstreams`. */
  upstream_methods: z.record(z.string().url(), z.strictObject({ allow: methodPatterns.optional(), deny: methodPatterns.optional() })).optional(),
  /** Integrity policies (off when omitted): one method may be listed in one policy only. */
  integrity: z.array(integrityPolicySchema).optional(),
}).superRefine((n, ctx) => {
  if (n.integrity?.length && traitsOf(n.family).gateway.transport === 'rest') {
    ctx.addIssue({ code: 'custom', path: ['integrity'], message: `a ${n.family} network has no JSON-RPC methods to check` });
  }
  const seen = new Set<string>();
  for (const [i, p] of (n.integrity ?? []).entries()) {
    for (const method of p.methods) {
      if (seen.has(method)) ctx.addIssue({ code: 'custom', path: ['integrity', i, 'methods'], message: `${method} is in more than one integrity policy` });
      seen.add(method);
    }
    // An environment with fewer upstreams than m could never answer a listed method.
    for (const e of n.environments) {
      if (e.upstreams.length > 0 && e.upstreams.length < p.m) {
        ctx.addIssue({ code: 'custom', path: ['integrity', i, 'm'], message: `environment ${e.slug} has ${e.upstreams.length} upstream(s), fewer than m = ${p.m}` });
      }
    }
  }
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

/** Request bodies held in memory: per client address and in total, and how long one may take to arrive. */
const bodyLimits = {
  max_inflight_bytes_per_ip: z.number().int().min(1024).max(1024 ** 3).default(8 * 1024 * 1024),
  max_inflight_bytes: z.number().int().min(1024).max(1024 ** 3).default(64 * 1024 * 1024),
  body_timeout_ms: z.number().int().min(100).default(10_000),
};
const BODY_LIMIT_DEFAULTS = { max_inflight_bytes_per_ip: 8 * 1024 * 1024, max_inflight_bytes: 64 * 1024 * 1024, body_timeout_ms: 10_000 };

const WS_DEFAULTS = {
  max_sockets_per_endpoint: 50,
  max_subscriptions_per_socket: 100,
  max_message_bytes: 1024 * 1024,
  ping_interval_ms: 30_000,
  poll_interval_ms: 2000,
  upstream_retry_ms: 10_000,
  max_queued_bytes_per_socket: 8 * 1024 * 1024,
  max_queued_bytes_per_endpoint: 64 * 1024 * 1024,
  max_queued_bytes: 256 * 1024 * 1024,
};

/** WebSocket limits of the gateway (docs/gateway.md, "WebSocket"). */
const wsSchema = z.strictObject({
  max_sockets_per_endpoint: z.number().int().min(1).default(WS_DEFAULTS.max_sockets_per_endpoint),
  max_subscriptions_per_socket: z.number().int().min(1).default(WS_DEFAULTS.max_subscriptions_per_socket),
  max_message_bytes: z.number().int().min(1024).default(WS_DEFAULTS.max_message_bytes),
  /** A client that does not answer a ping within this long is dropped. */
  ping_interval_ms: z.number().int().min(100).default(WS_DEFAULTS.ping_interval_ms),
  /** Head polling of environments without `ws_upstreams`. */
  poll_interval_ms: z.number().int().min(50).default(WS_DEFAULTS.poll_interval_ms),
  /** How long subscriptions wait for any WebSocket upstream to come back before their sockets are closed. */
  upstream_retry_ms: z.number().int().min(0).default(WS_DEFAULTS.upstream_retry_ms),
  /**
   * Frames (answers, notifications) written to clients and not yet taken by the kernel: a client
   * that does not read is closed (1008) over these, so that it cannot grow the gateway's memory.
   */
  max_queued_bytes_per_socket: z.number().int().min(64 * 1024).max(1024 ** 3).default(WS_DEFAULTS.max_queued_bytes_per_socket),
  max_queued_bytes_per_endpoint: z.number().int().min(64 * 1024).max(16 * 1024 ** 3).default(WS_DEFAULTS.max_queued_bytes_per_endpoint),
  max_queued_bytes: z.number().int().min(64 * 1024).max(64 * 1024 ** 3).default(WS_DEFAULTS.max_queued_bytes),
});

/**
 * `telemetry`: OpenTelemetry traces over OTLP/HTTP (docs/operations.md, "Traces"); off unless
 * `otlp.endpoint` is set. Header values may be credentials: never logged, and `headers_env`
 * takes them from the environment instead of the file.
 */
const HTTP_HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;
const TELEMETRY_OTLP_DEFAULTS = { headers: {}, headers_env: {}, timeout_ms: 10_000 };
const telemetrySchema = z.strictObject({
  /** `service.name` of every span. */
  service_name: z.string().min(1).max(100).default('rpcctl'),
  /** Share of traces recorded (0..1), a caller's `traceparent` included. */
  sampling_ratio: z.number().min(0).max(1).default(0.01),
  otlp: z.strictObject({
    /** The collector's OTLP/HTTP address (`http://collector:4318`, `/v1/traces` added) or its full traces URL. */
    endpoint: z.string().url().regex(/^https?:\/\//i, 'must be an http:// or https:// URL').optional(),
    /** Sent with every export (`authorization`, `x-api-key`, …). */
    headers: z.record(z.string().regex(HTTP_HEADER_NAME, 'must be an HTTP header name'), z.string().max(8192).regex(/^[^\r\n\0]*$/, 'must be one line')).default({}),
    /** Header name → the environment variable holding its value (read at start; a missing one is refused). */
    headers_env: z.record(z.string().regex(HTTP_HEADER_NAME, 'must be an HTTP header name'), z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')).default({}),
    /** One export's time limit. */
    timeout_ms: z.number().int().min(100).max(60_000).default(10_000),
  }).default(TELEMETRY_OTLP_DEFAULTS),
}).default({ service_name: 'rpcctl', sampling_ratio: 0.01, otlp: TELEMETRY_OTLP_DEFAULTS });

export const configSchema = z.strictObject({
  api: z.strictObject({
    host: z.string().default('127.0.0.1'),
    port: port.default(8080),
    /** Socket addresses whose X-Forwarded-For is believed. */
    trusted_proxies: z.array(address).default([]),
    max_body_bytes: z.number().int().min(1024).default(1024 * 1024),
    /**
     * The API's address as customers reach it (`https://pay.example.com`): checkout pages are
     * handed out under it. Omitted: the listener's own address (fine on one machine only).
     */
    public_url: z.string().url().regex(/^https?:\/\/[^/?#]+\/?$/, 'must be http(s)://host[:port] with no path').optional(),
    ...bodyLimits,
  }).default({ host: '127.0.0.1', port: 8080, trusted_proxies: [], max_body_bytes: 1024 * 1024, ...BODY_LIMIT_DEFAULTS }),
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
    /** One deadline per client call across all its tries (answered -32011 when it passes); null: 2.5 × upstream_timeout_ms. */
    upstream_deadline_ms: z.number().int().min(100).nullable().default(null),
    /** How long an upstream that answered "method not found" is skipped for that method. */
    unsupported_method_ttl_ms: z.number().int().min(1000).default(600_000),
    /** How often each environment's node is asked for its version and block height. */
    probe_interval_ms: z.number().int().min(100).default(15_000),
    /**
     * How often the gateway checks for endpoint changes made by other processes (`rpcctl admin`,
     * other instances): a version check that reads only the rows that changed.
     */
    registry_reload_ms: z.number().int().min(100).default(1000),
    /** Gateway worker threads listening on the port (default: one per core). */
    workers: z.number().int().min(1).max(256).default(() => availableParallelism()),
    ws: wsSchema.default(WS_DEFAULTS),
    /** Share of gateway requests written to the access log (0: none, 1: all). */
    access_log_sample: z.number().min(0).max(1).default(0),
    /** Recent HTTP calls kept per endpoint in each gateway worker's memory, for request logs (0: none kept). */
    request_log_size: z.number().int().min(0).max(10_000).default(200),
    /** How often counted usage is written; a crash loses at most about this much (see operations.md). */
    usage_flush_ms: z.number().int().min(50).max(60_000).default(250),
    ...bodyLimits,
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
    trusted_proxies: [], max_body_bytes: 1024 * 1024, max_batch: 100, upstream_timeout_ms: 10_000, upstream_deadline_ms: null, unsupported_method_ttl_ms: 600_000, probe_interval_ms: 15_000,
    registry_reload_ms: 1000, workers: availableParallelism(), ws: WS_DEFAULTS, access_log_sample: 0, request_log_size: 200, usage_flush_ms: 250, ...BODY_LIMIT_DEFAULTS,
    max_lag_blocks: 5, hedge_quantile: null, cache_max_bytes: 64 * 1024 * 1024, max_logs_response_bytes: 32 * 1024 * 1024,
  }),
  limits: z.strictObject({
    api_rps_per_ip: z.number().int().min(1).default(30),
    api_rpm_per_account: z.number().int().min(1).default(100),
    webhook_tests_per_minute: z.number().int().min(1).default(10),
  }).default({ api_rps_per_ip: 30, api_rpm_per_account: 100, webhook_tests_per_minute: 10 }),
  /** Old rows pruned in small batches by a background job (0 days: keep for ever). */
  retention: z.strictObject({
    events_days: z.number().int().min(0).default(90),
    deliveries_days: z.number().int().min(0).default(30),
    audit_days: z.number().int().min(0).default(365),
    batch_size: z.number().int().min(1).max(10_000).default(500),
    interval_ms: z.number().int().min(100).default(60_000),
  }).default({ events_days: 90, deliveries_days: 30, audit_days: 365, batch_size: 500, interval_ms: 60_000 }),
  webhooks: z.strictObject({
    egress_ips: z.array(z.string()).default([]),
    timeout_ms: z.number().int().min(100).max(60_000).default(5000),
    allow_private_urls: z.boolean().default(false),
  }).default({ egress_ips: [], timeout_ms: 5000, allow_private_urls: false }),
  payments: paymentsConfigSchema,
  metrics: z.strictObject({
    /** `GET /metrics` and the gateway's per-request counting. */
    enabled: z.boolean().default(true),
    /** Addresses that may read `/metrics`; empty: anyone who reaches it. */
    allowed_ips: z.array(address).default([]),
    /**
     * The metrics listener, `host:port` (port 0: any; `[::1]:9464` for IPv6); `false`: none.
     * Omitted: 127.0.0.1:9464, and a port already taken there only costs a warning.
     */
    listen: z.union([z.literal(false), z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[^\s:\[\]]+):(\d{1,5})$/, 'must be host:port (e.g. 127.0.0.1:9464, [::1]:9464), or false for no metrics listener')
      .refine((v) => Number(v.slice(v.lastIndexOf(':') + 1)) <= 65535, 'the port must be 0-65535')]).optional(),
    /** Serves `/metrics` on the API listener too, to `Authorization: Bearer <token>` (and requires it on the metrics listener). */
    token: z.string().min(16, 'must be at least 16 characters').optional(),
  }).default({ enabled: true, allowed_ips: [] }),
  /** Multi-instance mode: a shared PostgreSQL (`postgres://...`); omitted, SQLite in the data dir. */
  store: z.strictObject({
    url: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').optional(),
    /** PostgreSQL: a query unanswered after this many ms fails and is retried (a frozen server answers nothing); migrations have no bound. */
    query_timeout_ms: z.number().int().min(100).max(3_600_000).default(30_000),
  }).default({ query_timeout_ms: 30_000 }),
  /** Multi-instance mode: a shared Redis (`redis://...`) for RPS windows and API limits. */
  redis: z.strictObject({
    url: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL').optional(),
    /** Prepended to every key, so deployments can share one Redis. */
    key_prefix: z.string().max(100).default('rpcctl:'),
    /** How long the gateway's final answers live in the shared cache tier; 0: each instance caches alone. */
    cache_ttl_ms: z.number().int().min(0).default(3_600_000),
    /** Answers larger than this stay in the instance's memory only. */
    cache_max_value_bytes: z.number().int().min(1).default(1024 * 1024),
    /** How long a rate-limit decision waits for Redis before this instance decides from its share in memory. */
    // A call waits this long at most for its limit: the gateway's hot path must not wait on a store for longer.
    decision_timeout_ms: z.number().int().min(10).max(5_000).default(250),
  }).default({ key_prefix: 'rpcctl:', cache_ttl_ms: 3_600_000, cache_max_value_bytes: 1024 * 1024, decision_timeout_ms: 250 }),
  /** The service's log; `--log-level` and $RPCCTL_LOG_LEVEL win over it. A reload applies a new level. */
  log: z.strictObject({
    level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  }).default({ level: 'info' }),
  /** SIGTERM: `/ready` answers 503 at once, the listeners keep serving this long (load balancers stop sending), then close. */
  shutdown: z.strictObject({
    drain_s: z.number().min(0).max(600).default(5),
  }).default({ drain_s: 5 }),
  networks: z.array(networkSchema).optional(),
  plans: z.array(planSchema).optional(),
  telemetry: telemetrySchema,
});

export type ConfigInput = z.input<typeof configSchema>;
type Parsed = z.output<typeof configSchema>;
export type NetworkConfig = Omit<z.output<typeof networkSchema>, 'credits' | 'max_logs_block_range' | 'logs_over_range' | 'max_logs_results'>
  & Partial<Pick<z.output<typeof networkSchema>, 'max_logs_block_range' | 'logs_over_range' | 'max_logs_results'>>
  & { credits: { default: number; methods: Record<string, number>; logs_block_unit?: number } };
export type EnvironmentConfig = z.output<typeof environmentSchema>;
export type IntegrityPolicyConfig = z.output<typeof integrityPolicySchema>;
export type PlanConfig = z.output<typeof planSchema>;
export type Config = Omit<Parsed, 'networks' | 'plans'> & { networks: NetworkConfig[]; plans: PlanConfig[] };

import type { Config } from './schema.js';

/**
 * What a config reload (SIGHUP, `rpcctl admin reload`) applies without a restart: a changed
 * setting at or under one of these paths. Everything else is read once at start (a listener's
 * address, the store, Redis, the number of gateway workers, memory sized at start, the
 * features' background jobs): changing it is refused, naming it, and the running config stays.
 */
export const LIVE_SETTINGS: readonly string[] = [
  'networks',
  'plans',
  'limits',
  'log.level',
  'shutdown.drain_s',
  'gateway.rpc_domain',
  'gateway.scheme',
  'gateway.trusted_proxies',
  'gateway.max_body_bytes',
  'gateway.max_batch',
  'gateway.upstream_timeout_ms',
  'gateway.upstream_deadline_ms',
  'gateway.unsupported_method_ttl_ms',
  'gateway.max_lag_blocks',
  'gateway.hedge_quantile',
  'gateway.max_logs_response_bytes',
  'gateway.max_inflight_bytes_per_ip',
  'gateway.max_inflight_bytes',
  'gateway.body_timeout_ms',
  'gateway.ws.max_sockets_per_endpoint',
  'gateway.ws.max_subscriptions_per_socket',
  'gateway.ws.poll_interval_ms',
  'gateway.ws.upstream_retry_ms',
  'payments.rates.ttl_s',
  'payments.rates.static',
  'payments.rates.http',
];

/** Dotted paths of the settings that differ (objects compared key by key, arrays and values whole). */
export function changedSettings(a: unknown, b: unknown, path = ''): string[] {
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => changedSettings(a[k], b[k], path ? `${path}.${k}` : k));
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [path];
}

/** Of the changed settings, those a reload cannot apply. */
export function restartOnly(changed: readonly string[]): string[] {
  return changed.filter((p) => !LIVE_SETTINGS.some((live) => p === live || p.startsWith(`${live}.`)));
}

/**
 * Makes `target` equal `next` while keeping every object of `target` that `next` also has as
 * an object: a part that kept `config.gateway` (or `config.payments.rates`) from start reads the
 * new values from it. Arrays and values are replaced whole.
 */
export function updateInPlace(target: Config, next: Config): void {
  merge(target as unknown as Record<string, unknown>, next as unknown as Record<string, unknown>);
}

function merge(target: Record<string, unknown>, next: Record<string, unknown>): void {
  for (const k of Object.keys(target)) if (!(k in next)) delete target[k];
  for (const [k, v] of Object.entries(next)) {
    const t = target[k];
    if (isPlainObject(t) && isPlainObject(v)) merge(t, v);
    else target[k] = v;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

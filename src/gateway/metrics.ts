import type { Counter, FastCounter, FastHistogram, Gauge, Metrics } from '../metrics/index.js';

/** Every per-network metric says `network` (its slug) and `env` (the environment's slug), the same in every family. */
export type NetworkLabels = { network: string; env: string };

/** Requests that matched no endpoint (before routing). */
export const UNKNOWN_NETWORK: NetworkLabels = { network: 'unknown', env: 'unknown' };

export function networkLabels(env: { slug: string; network: { slug: string } }): NetworkLabels {
  return { network: env.network.slug, env: env.slug };
}

/** The gateway's metrics (HTTP and WebSocket); names and meaning in docs/operations.md. */
export interface GatewayMetrics {
  enabled: boolean;
  requests: FastCounter<'network' | 'env' | 'status'>;
  rejections: FastCounter<'network' | 'env' | 'reason' | 'transport'>;
  upstreamLatency: FastHistogram<'network' | 'env' | 'upstream'>;
  upstreamFailures: FastCounter<'network' | 'env' | 'upstream' | 'reason'>;
  upstreamMethodSkips: FastCounter<'network' | 'env' | 'upstream'>;
  wsSockets: Gauge<'network' | 'env'>;
  wsSubscriptions: Gauge<'network' | 'env' | 'type'>;
  wsMessages: FastCounter<'network' | 'env'>;
  wsNotifications: FastCounter<'network' | 'env'>;
  wsResubscribes: Counter<'network' | 'env'>;
  wsQueuedBytes: Gauge<never>;
}

export function gatewayMetrics(m: Metrics): GatewayMetrics {
  return {
    enabled: m.enabled,
    requests: m.fastCounter('gateway_requests_total', 'HTTP requests answered by the gateway, by network and environment (`unknown` before routing) and status code', ['network', 'env', 'status']),
    rejections: m.fastCounter('gateway_rejections_total', 'Requests and WebSocket upgrades or calls the gateway refused itself, by reason', ['network', 'env', 'reason', 'transport']),
    upstreamLatency: m.fastHistogram('upstream_request_duration_seconds', 'Time to the upstream answer\'s headers, per upstream (scheme://host:port only)', ['network', 'env', 'upstream']),
    upstreamFailures: m.fastCounter('upstream_failures_total', 'Upstream calls or sockets that failed, per upstream and reason (rpc_error: a JSON-RPC error classified as the node\'s)', ['network', 'env', 'upstream', 'reason']),
    upstreamMethodSkips: m.fastCounter('upstream_method_skips_total', 'Times an upstream answered "method not found" and was set aside for that method (gateway.unsupported_method_ttl_ms)', ['network', 'env', 'upstream']),
    wsSockets: m.gauge('ws_sockets', 'Open client WebSocket connections', { labelNames: ['network', 'env'] }),
    wsSubscriptions: m.gauge('ws_subscriptions', 'Active client subscriptions', { labelNames: ['network', 'env', 'type'] }),
    wsMessages: m.fastCounter('ws_calls_total', 'JSON-RPC calls received over client WebSockets (batch elements count one each)', ['network', 'env']),
    wsNotifications: m.fastCounter('ws_notifications_total', 'Subscription notifications sent to clients', ['network', 'env']),
    wsQueuedBytes: m.gauge('ws_queued_bytes', 'Bytes of answers and notifications written to client WebSockets and not yet taken by the kernel (capped: gateway.ws.max_queued_bytes*)', { labelNames: [] }),
    wsResubscribes: m.counter('ws_upstream_switches_total', 'Times an environment\'s subscriptions moved to another WebSocket upstream, or to HTTP polling when none was left', ['network', 'env']),
  };
}

import type { Counter, FastCounter, FastHistogram, Gauge, Metrics } from '../metrics/index.js';

/** The gateway's metrics (HTTP and WebSocket); names and meaning in docs/operations.md. */
export interface GatewayMetrics {
  enabled: boolean;
  requests: FastCounter<'network' | 'status'>;
  rejections: FastCounter<'network' | 'reason' | 'transport'>;
  upstreamLatency: FastHistogram<'network' | 'upstream'>;
  upstreamFailures: FastCounter<'network' | 'upstream' | 'reason'>;
  wsSockets: Gauge<'network'>;
  wsSubscriptions: Gauge<'network' | 'type'>;
  wsMessages: FastCounter<'network'>;
  wsNotifications: FastCounter<'network'>;
  wsResubscribes: Counter<'network'>;
  wsQueuedBytes: Gauge<never>;
}

export function gatewayMetrics(m: Metrics): GatewayMetrics {
  return {
    enabled: m.enabled,
    requests: m.fastCounter('gateway_requests_total', 'HTTP requests answered by the gateway, by network (`unknown` before routing) and status code', ['network', 'status']),
    rejections: m.fastCounter('gateway_rejections_total', 'Requests and WebSocket upgrades or calls the gateway refused itself, by reason', ['network', 'reason', 'transport']),
    upstreamLatency: m.fastHistogram('upstream_request_duration_seconds', 'Time to the upstream answer\'s headers, per upstream (scheme://host:port only)', ['network', 'upstream']),
    upstreamFailures: m.fastCounter('upstream_failures_total', 'Upstream calls or sockets that failed, per upstream and reason', ['network', 'upstream', 'reason']),
    wsSockets: m.gauge('ws_sockets', 'Open client WebSocket connections', { labelNames: ['network'] }),
    wsSubscriptions: m.gauge('ws_subscriptions', 'Active client subscriptions', { labelNames: ['network', 'type'] }),
    wsMessages: m.fastCounter('ws_calls_total', 'JSON-RPC calls received over client WebSockets (batch elements count one each)', ['network']),
    wsNotifications: m.fastCounter('ws_notifications_total', 'Subscription notifications sent to clients', ['network']),
    wsQueuedBytes: m.gauge('ws_queued_bytes', 'Bytes of answers and notifications written to client WebSockets and not yet taken by the kernel (capped: gateway.ws.max_queued_bytes*)', { labelNames: [] }),
    wsResubscribes: m.counter('ws_upstream_switches_total', 'Times an environment\'s subscriptions moved to another WebSocket upstream, or to HTTP polling when none was left', ['network']),
  };
}

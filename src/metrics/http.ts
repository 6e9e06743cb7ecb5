import type { ServerResponse } from 'node:http';
import type { Metrics } from './index.js';

/**
 * Answers `GET /metrics` with the Prometheus text exposition; 404 when metrics are off or the
 * client's address is not in `metrics.allowed_ips` (when that list is set).
 */
export function serveMetrics(res: ServerResponse, metrics: Metrics | undefined, clientIp: string): void {
  if (!metrics?.enabled || !metrics.allows(clientIp)) {
    const body = JSON.stringify({ ok: false, error: 'Not found' });
    res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  metrics.text().then((text) => {
    res.writeHead(200, { 'content-type': metrics.contentType, 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
    res.end(text);
  }, (err: unknown) => {
    const body = `# metrics collection failed: ${(err as Error).message}\n`;
    res.writeHead(500, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}

import type { Metrics } from '../metrics/index.js';
import type { Store } from '../store/index.js';
import { webhooksSection } from './cabinet.js';
import { observeWebhooks } from './metrics.js';
import { webhookRoutes, type WebhookDeps } from './routes.js';

/**
 * Webhooks as serve/ composes them: the API routes, the cabinet page and the outbox gauges.
 * There is no start or stop here: the delivery worker runs inside Address Watch, whose
 * scanners wake it (`deps.worker`).
 */
export function webhooksFeature(deps: WebhookDeps & { store: Store }) {
  return {
    routes: webhookRoutes(deps),
    section: webhooksSection,
    observe: (metrics: Metrics) => observeWebhooks(metrics, deps.store),
  };
}

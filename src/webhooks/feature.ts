import type { Metrics } from '../metrics/index.js';
import type { Store } from '../store/index.js';
import { webhooksSection } from './cabinet.js';
import { observeWebhooks } from './metrics.js';
import { webhookRoutes, type WebhookDeps } from './routes.js';

/**
 * Webhooks as serve/ composes them: the API routes, the cabinet page and the outbox gauges.
 * Starting and stopping the delivery worker is `service.ts` (`startWebhooks`).
 */
export function webhooksFeature(deps: WebhookDeps & { store: Store }) {
  return {
    routes: webhookRoutes(deps),
    section: webhooksSection,
    observe: (metrics: Metrics) => observeWebhooks(metrics, deps.store),
  };
}

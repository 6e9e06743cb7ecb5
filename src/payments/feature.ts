import type { Metrics } from '../metrics/index.js';
import type { Store } from '../store/index.js';
import type { AddressWatch } from '../watch/service.js';
import { paymentsSection } from './cabinet.js';
import { observePayments } from './metrics.js';
import { paymentRoutes } from './routes.js';
import type { Payments } from './service.js';

/** Payments as serve/ composes them: the API routes, the cabinet pages and the orders gauge. */
export function paymentsFeature(deps: { payments: Payments; addressWatch: AddressWatch; store: Store }) {
  const watch = deps.addressWatch;
  return {
    routes: paymentRoutes({
      engine: deps.payments.engine,
      watchAdded: (result) => watch.watchAdded(result.newWatch!),
      rates: deps.payments.rates,
    }),
    section: paymentsSection,
    observe: (metrics: Metrics) => observePayments(metrics, deps.store),
  };
}

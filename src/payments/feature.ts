import type { Config } from '../config/index.js';
import type { Limits } from '../limits/index.js';
import type { Metrics } from '../metrics/index.js';
import type { Store } from '../store/index.js';
import type { AddressWatch } from '../watch/service.js';
import { paymentsSection } from './cabinet.js';
import { checkoutPages } from './checkout.js';
import { observePayments } from './metrics.js';
import { paymentRoutes } from './routes.js';
import type { Payments } from './service.js';

/** Payments as serve/ composes them: the API routes, the cabinet pages (and the open checkout page), the orders gauge. */
export function paymentsFeature(deps: {
  payments: Payments; addressWatch: AddressWatch; store: Store; config: Config; limits: Limits; log: (line: string) => void;
}) {
  const watch = deps.addressWatch;
  return {
    routes: paymentRoutes({
      engine: deps.payments.engine,
      watchAdded: (result) => watch.watchAdded(result.newWatch!),
    }),
    section: {
      ...paymentsSection,
      open: checkoutPages({ store: deps.store, config: deps.config, chains: deps.payments.engine.chains, limits: deps.limits, log: deps.log }),
    },
    observe: (metrics: Metrics) => observePayments(metrics, deps.store),
  };
}

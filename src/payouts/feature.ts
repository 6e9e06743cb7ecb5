import type { Limits } from '../limits/index.js';
import type { Metrics } from '../metrics/index.js';
import { payoutsSection } from './cabinet.js';
import { refundLinkPages } from './link-pages.js';
import { observePayouts } from './metrics.js';
import { refundRoutes } from './refund-routes.js';
import { payoutRoutes } from './routes.js';
import type { Payouts } from './service.js';

/** Refunds and payouts as serve/ composes them: the API routes, the cabinet section with the refund link's open routes, the lines gauge. */
export function payoutsFeature(deps: { payouts: Payouts; limits: Limits; log: (line: string) => void }) {
  const { store, config } = deps.payouts.deps;
  const routeDeps = { payouts: deps.payouts, present: { store, config, chains: deps.payouts.chains, log: deps.log } };
  return {
    routes: [...refundRoutes(routeDeps), ...payoutRoutes(routeDeps)],
    section: { ...payoutsSection(store), open: refundLinkPages(deps.payouts.deps, deps.limits) },
    observe: (metrics: Metrics) => observePayouts(metrics, store),
  };
}

import type { Metrics } from '../metrics/index.js';
import { watchSection } from './cabinet.js';
import { observeWatch } from './metrics.js';
import { watchRoutes, type AddressWatchDeps } from './routes.js';
import type { AddressWatch } from './service.js';

/** Address Watch as serve/ composes it: its API routes, its cabinet page and its metric. */
export function watchFeature(watch: AddressWatch, more: Pick<AddressWatchDeps, 'openOrderOf' | 'holderChanged'> = {}) {
  return {
    routes: watchRoutes({ watchAdded: (row) => watch.watchAdded(row), watchRemoved: (row) => watch.watchRemoved(row), ...more }),
    section: watchSection,
    observe: (metrics: Metrics) => observeWatch(metrics, watch),
  };
}

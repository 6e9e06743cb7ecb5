import type { Metrics } from '../metrics/index.js';
import type { AddressWatch } from './service.js';

/** How far each scanner is behind its network's head, read from the running scanners at scrape time. */
export function observeWatch(metrics: Metrics, watch: Pick<AddressWatch, 'scannerLags'>): void {
  metrics.gauge('scanner_lag_blocks', 'Blocks between a network\'s head and the next block its Address Watch scanner records', {
    labelNames: ['network', 'env'],
    collect: (g) => {
      g.reset();
      for (const { network, env, lag } of watch.scannerLags()) if (lag !== undefined) g.set({ network, env }, lag);
    },
  });
}

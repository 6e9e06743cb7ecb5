import type { UpstreamRequest, UpstreamResponse } from './call.js';
import { dispatchTo } from './call-handler.js';
import type { ErrorClassifier } from './rpc-errors.js';
import type { Upstream } from './upstream.js';

/**
 * Sends to `a`; if it has not answered after `delayMs`, to `b` too; the first answer wins, the
 * other is aborted. `onError` sees each one's failure (the set learns from them).
 */
export function hedged(a: Upstream, b: Upstream, req: UpstreamRequest, delayMs: number,
  judge: ErrorClassifier | undefined, timeoutMs: number | undefined, onError: (up: Upstream, err: unknown) => void): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let running = 0;
    let startedB = false;
    const controllers: AbortController[] = [];
    const launch = (up: Upstream) => {
      const ac = new AbortController();
      controllers.push(ac);
      running++;
      dispatchTo(up, req, ac.signal, judge, timeoutMs).then((res) => {
        if (settled) return void res.body.destroy();
        settled = true;
        clearTimeout(timer);
        for (const c of controllers) if (c !== ac) c.abort();
        resolve(res);
      }, (err: unknown) => {
        running--;
        if (settled) return;
        onError(up, err);
        if (!startedB) {
          startedB = true;
          clearTimeout(timer);
          launch(b);
        } else if (running === 0) {
          settled = true;
          reject(err);
        }
      });
    };
    const timer = setTimeout(() => {
      if (startedB || settled) return;
      startedB = true;
      launch(b);
    }, delayMs);
    launch(a);
  });
}

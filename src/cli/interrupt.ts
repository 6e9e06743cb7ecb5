import type { CliIO } from './io.js';

export interface Interrupt {
  signal: AbortSignal;
  /** Removes the signal handlers again (a no-op for an injected signal). */
  dispose(): void;
}

/**
 * What stops a command that runs until interrupted. With handlers installed Node no longer
 * exits on Ctrl-C, so the command can close its server or client and exit 0 by itself.
 */
export function interruptOf(io: CliIO): Interrupt {
  if (io.interrupt) return { signal: io.interrupt, dispose: () => {} };
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Resolves when `signal` aborts. */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

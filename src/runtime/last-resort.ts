import type { Logger } from '../log/index.js';
import type { Metrics } from '../metrics/index.js';

/**
 * The last resort of `rpcctl serve`, for a failure no part caught (every background task runs
 * under the supervisor, so one reaching here is a bug): a stray promise rejection is logged at
 * `error` and counted (`rpcctl_unhandled_errors_total{kind="rejection"}`) and the process keeps
 * serving; Node's default would end it, and with it every request in flight. An uncaught
 * exception leaves the process in a state nobody can vouch for: it is logged at `fatal`,
 * counted, and `onFatal` stops the service (usage written) so that it exits with status 1.
 * Returns the function that removes the handlers.
 */
export function lastResort(logger: Logger, metrics: Metrics, onFatal: (err: unknown) => void): () => void {
  const count = metrics.counter('unhandled_errors_total', 'Failures no part of the service caught (a bug): rejections are logged and served through, exceptions stop the process', ['kind']);
  const onRejection = (reason: unknown) => {
    count.inc({ kind: 'rejection' });
    logger.error({ component: 'serve', err: describe(reason) }, `unhandled promise rejection, serving on: ${describe(reason)}`);
  };
  const onException = (err: unknown) => {
    count.inc({ kind: 'exception' });
    logger.fatal({ component: 'serve', err: describe(err) }, `uncaught exception, stopping: ${describe(err)}`);
    onFatal(err);
  };
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return () => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  };
}

function describe(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

import { startService } from '../serve/service.js';
import { listAccounts } from '../store/index.js';
import { createLogger, lineLogger, parseLogFormat, parseLogLevel, type Logger } from '../log/index.js';
import { usageError, type CliIO } from './io.js';

/** Runs until SIGINT/SIGTERM, then shuts down cleanly. */
export async function runServe(io: CliIO, opts: { config?: string; dataDir?: string; database?: string; redis?: string; logFormat?: string; logLevel?: string }): Promise<void> {
  let logger: Logger;
  try {
    const isTTY = io.stderr.isTTY === true;
    logger = createLogger({
      format: parseLogFormat(opts.logFormat ?? io.env.RPCCTL_LOG_FORMAT, isTTY),
      level: parseLogLevel(opts.logLevel ?? io.env.RPCCTL_LOG_LEVEL),
      stream: io.stderr,
      color: isTTY && !(io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '') && io.env.TERM !== 'dumb',
    });
  } catch (err) {
    throw usageError((err as Error).message);
  }
  const log = lineLogger(logger.child({ component: 'serve' }));
  const service = await startService({ configFile: opts.config, dataDir: opts.dataDir, databaseUrl: opts.database, redisUrl: opts.redis, env: io.env, logger });
  const g = service.config.gateway;
  const lines = [
    'rpcctl serve is ready',
    `  api       ${service.apiUrl}`,
    `  gateway   ${service.gatewayUrl}`,
    ...(service.store.kind === 'postgres'
      ? ['  store     PostgreSQL (shared)', `  limits    ${service.limits.kind === 'redis' ? 'Redis (shared)' : 'in memory (this instance only: pass --redis to share them)'}`, `  instance  ${service.addressWatch.instanceId}`]
      : [`  data dir  ${service.dataDir}`]),
    `  endpoint URLs look like ${g.scheme}://${g.host_prefix}-{network}-{env}.${g.rpc_domain}/{endpoint_uuid}`,
  ];
  if ((await listAccounts(service.store)).length === 0) {
    const dd = opts.dataDir ? ` --data-dir ${opts.dataDir}` : '';
    const cf = opts.config ? ` --config ${opts.config}` : '';
    lines.push(
      '',
      'No accounts yet. Create one and an API key for it (the secret is shown once):',
      `  rpcctl admin accounts create --plan free${dd}${cf}`,
      `  rpcctl admin keys create --account 1${dd}${cf}`,
    );
  }
  // Handlers first, then the banner: whoever reads "ready" may signal at once, and a signal
  // that arrived before the handlers would kill the process instead of stopping it cleanly.
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      log(`received ${signal}, shutting down`);
      service.stop().then(resolve, (err: unknown) => {
        log(`shutdown failed: ${(err as Error).message}`);
        resolve();
      });
    };
    const onInt = () => stop('SIGINT');
    const onTerm = () => stop('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
  });
  io.stdout.write(`${lines.join('\n')}\n`);
  await stopped;
  log('stopped');
}

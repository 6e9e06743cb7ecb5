import type { Command } from 'commander';
import type { CliIO } from './io.js';
import { optionsOf } from './program.js';

export function registerServe(program: Command, io: CliIO): void {
  program.command('serve')
    .description('run the Public API, the JSON-RPC gateway and the background workers')
    .option('--config <file>', 'config file (JSON or YAML); default: config.yaml|json in the data dir, else built-in defaults')
    .option('--data-dir <dir>', 'where the store lives (default: $RPCCTL_DATA_DIR or the XDG data dir)')
    .option('--database <url>', 'a shared PostgreSQL (postgres://...) for several instances (default: $RPCCTL_DATABASE_URL, config store.url, else SQLite in the data dir)')
    .option('--redis <url>', 'a shared Redis (redis://...) for the instances\' rate limits (default: $RPCCTL_REDIS_URL, config redis.url)')
    .option('--log-format <format>', 'json (one object per line) or text (default: text on a terminal, else json; also $RPCCTL_LOG_FORMAT)')
    .option('--log-level <level>', 'trace, debug, info, warn, error, fatal or silent (default: info; also $RPCCTL_LOG_LEVEL)')
    .action(async (_opts, cmd: Command) => {
      const { runServe } = await import('./serve-run.js');
      await runServe(io, optionsOf<{ config?: string; dataDir?: string; database?: string; redis?: string; logFormat?: string; logLevel?: string }>(cmd));
    });
}

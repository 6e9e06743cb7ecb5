import type { Command } from 'commander';
import { lazyActions } from '../action.js';
import type { CliIO } from '../io.js';

export function registerServe(program: Command, io: CliIO): void {
  const act = lazyActions(io, () => import('./run.js'));
  program.command('serve')
    .description('run the Public API, the JSON-RPC gateway and the background workers')
    .option('--config <file>', 'config file (JSON or YAML); default: config.yaml|json in the data dir, else built-in defaults')
    .option('--data-dir <dir>', 'where the store lives (default: $RPCCTL_DATA_DIR or the XDG data dir)')
    .option('--host <address>', 'address the Public API and the gateway listen on (default: api.host/gateway.host of the config, 127.0.0.1)')
    .option('--port <n>', 'Public API port (default: api.port of the config, 8080)')
    .option('--gateway-port <n>', 'JSON-RPC gateway port (default: gateway.port of the config, 8545)')
    .option('--dev', 'local development: webhooks may go to loopback and private addresses (never in production)')
    .option('--database <url>', 'a shared PostgreSQL (postgres://...) for several instances (default: $RPCCTL_DATABASE_URL, config store.url, else SQLite in the data dir)')
    .option('--redis <url>', 'a shared Redis (redis://...) for the instances\' rate limits (default: $RPCCTL_REDIS_URL, config redis.url)')
    .option('--upstream <network-env=url>', 'this node for a network environment instead of the config\'s, e.g. eth-mainnet=http://127.0.0.1:8546 (repeatable)', (value: string, all: string[]) => [...all, value], [] as string[])
    .option('--log-format <format>', 'json (one object per line) or text (default: text on a terminal, else json; also $RPCCTL_LOG_FORMAT)')
    .option('--log-level <level>', 'trace, debug, info, warn, error, fatal or silent (default: info; also $RPCCTL_LOG_LEVEL)')
    .addHelpText('after', `
Examples:
  rpcctl serve                          # production defaults: 127.0.0.1:8080 and :8545
  rpcctl serve --dev                    # trying it out on this machine (see: rpcctl init --local)
  rpcctl serve --dev --upstream eth-mainnet=http://127.0.0.1:8546   # Ethereum on your own node (npx anvil --port 8546)
  rpcctl serve --port 9080 --gateway-port 9545 --data-dir ./data`)
    .action(act('runServe'));
}

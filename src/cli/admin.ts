import { Option, type Command } from 'commander';
import type { CliIO } from './io.js';
import { optionsOf } from './program.js';

export interface AdminOptions {
  config?: string;
  dataDir?: string;
}

type AdminAction = (io: CliIO, opts: Record<string, unknown> & AdminOptions & { json?: boolean; color?: boolean }, args: string[]) => Promise<void>;

/** `rpcctl admin`: operator commands on the same data dir as `serve`, safe while it runs. */
export function registerAdmin(program: Command, io: CliIO): void {
  const admin = program.command('admin')
    .description('operator commands: accounts, plans, API keys, networks')
    .option('--config <file>', 'config file; networks and plans are taken from it only when given (or when the store is new)')
    .option('--data-dir <dir>', 'the data dir of the service (default: $RPCCTL_DATA_DIR or the XDG data dir)');

  const act = (name: keyof typeof import('./admin-run.js')) =>
    async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as Command;
      const positional = args.slice(0, -2).filter((a): a is string => typeof a === 'string');
      const mod = await import('./admin-run.js');
      await (mod[name] as AdminAction)(io, optionsOf(cmd), positional);
    };

  const accounts = admin.command('accounts').description('merchant accounts');
  accounts.command('create').description('create an account')
    .requiredOption('--plan <slug>', 'plan slug (see: rpcctl admin plans list)')
    .option('--name <name>', 'a label for operators')
    .action(act('accountsCreate'));
  accounts.command('list').alias('ls').description('list accounts').action(act('accountsList'));
  accounts.command('get').description('show one account').argument('<user_id>').action(act('accountsGet'));
  accounts.command('set-plan').description('move an account to another plan').argument('<user_id>')
    .requiredOption('--plan <slug>', 'plan slug').action(act('accountsSetPlan'));

  const keys = admin.command('keys').description('Public API keys (the secret is shown once, at creation)');
  keys.command('create').description('create an API key for an account')
    .requiredOption('--account <user_id>', 'account id')
    .addOption(new Option('--allowed-ip <ip>', 'only accept requests from this address (repeatable)').argParser((v: string, prev: string[] = []) => [...prev, v]))
    .option('--name <name>', 'a label for the key')
    .action(act('keysCreate'));
  keys.command('list').alias('ls').description('list API keys (prefixes only)')
    .option('--account <user_id>', 'only this account\'s keys').action(act('keysList'));
  keys.command('revoke').description('revoke a key by id or prefix').argument('<key>').action(act('keysRevoke'));

  admin.command('webhook-secret').description('show (or rotate) an account\'s webhook signing secret')
    .requiredOption('--account <user_id>', 'account id')
    .option('--rotate', 'replace it with a new secret')
    .action(act('webhookSecret'));

  admin.command('plans').description('plans, from config').command('list').alias('ls').description('list plans').action(act('plansList'));
  admin.command('upstreams').description('per-upstream health, latency, lag and cache figures of the running gateway')
    .action(act('upstreamsShow'));
  admin.command('networks').description('networks and environments, from config').command('list').alias('ls')
    .description('list networks and environments').action(act('networksList'));
}

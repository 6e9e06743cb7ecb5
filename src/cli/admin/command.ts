import { Option, type Command } from 'commander';
import { lazyActions } from '../action.js';
import type { CliIO } from '../io.js';

/** `rpcctl admin`: operator commands on the same data dir as `serve`, safe while it runs. */
export function registerAdmin(program: Command, io: CliIO): void {
  const admin = program.command('admin')
    .description('operator commands: accounts, plans, API keys, networks')
    .option('--config <file>', 'config file; networks and plans are taken from it only when given (or when the store is new)')
    .option('--data-dir <dir>', 'the data dir of the service (default: $RPCCTL_DATA_DIR or the XDG data dir)')
    .option('--database <url>', 'the shared PostgreSQL of a multi-instance service (default: $RPCCTL_DATABASE_URL, config store.url)')
    // The same flags as serve, so one deployment's command lines fit both; admin itself keeps
    // no rate limits, so it needs nothing from Redis.
    .option('--redis <url>', 'accepted as serve takes it (admin shares no limits, so it does not connect)');

  const act = lazyActions(io, () => import('./run.js'));
  // `aml load` is the payments feature's; its work lives with it.
  const actAml = lazyActions(io, () => import('../payments/admin-aml.js'));

  const accounts = admin.command('accounts').description('merchant accounts');
  accounts.command('create').description('create an account')
    .option('--plan <slug>', 'plan slug (see: rpcctl admin plans list; default: the first plan)')
    .option('--name <name>', 'a label for operators')
    .option('--email <email>', 'sign-in e-mail for the web cabinet; the password is read from a prompt or stdin')
    .option('--no-password', 'with --email: no password; sign in with links from rpcctl admin login-link')
    .action(act('accountsCreate'));
  accounts.command('list').alias('ls').description('list accounts').action(act('accountsList'));
  accounts.command('get').description('show one account').argument('<user_id>').action(act('accountsGet', ['userId']));
  accounts.command('set-plan').description('move an account to another plan').argument('<user_id>')
    .requiredOption('--plan <slug>', 'plan slug').action(act('accountsSetPlan', ['userId']));
  accounts.command('set-password').description('set the cabinet sign-in password (from a prompt or stdin); ends the account\'s sessions')
    .argument('<user_id>')
    .option('--email <email>', 'also set (or change) the sign-in e-mail')
    .action(act('accountsSetPassword', ['userId']));
  accounts.command('reset-2fa').description('turn off the cabinet login\'s two-factor sign-in (a lost phone); ends its sessions')
    .argument('<user_id>')
    .action(act('accountsResetTwoFactor', ['userId']));

  admin.command('login-link').description('a one-time cabinet sign-in link (valid 15 minutes, used once)')
    .option('--email <email>', 'the member who signs in')
    .option('--account <user_id>', 'instead of --email: the account\'s first owner')
    .option('--base-url <url>', 'the cabinet\'s public address (default: the API listener from config)')
    .action(act('loginLink'));

  const members = admin.command('members').description('an account\'s cabinet members (logins with a role)');
  members.command('list').alias('ls').description('list the members of an account, invited ones included')
    .requiredOption('--account <user_id>', 'account id')
    .action(act('membersList'));
  members.command('reset').description('a member who lost their password or phone: a set-password link and/or two-factor off')
    .requiredOption('--account <user_id>', 'account id')
    .requiredOption('--email <email>', 'the member\'s sign-in e-mail')
    .option('--password-link', 'print a one-time link that sets a new password (valid 24 hours)')
    .option('--remove-2fa', 'turn off the member\'s two-factor sign-in and end their sessions')
    .option('--base-url <url>', 'the cabinet\'s public address (default: the API listener from config)')
    .action(act('membersReset'));

  const keys = admin.command('keys').description('Public API keys (the secret is shown once, at creation)');
  keys.command('create').description('create an API key for an account')
    .requiredOption('--account <user_id>', 'account id')
    .addOption(new Option('--allowed-ip <ip>', 'only accept requests from this address (repeatable)').argParser((v: string, prev: string[] = []) => [...prev, v]))
    .option('--name <name>', 'a label for the key')
    .action(act('keysCreate'));
  keys.command('list').alias('ls').description('list API keys (prefixes only)')
    .option('--account <user_id>', 'only this account\'s keys').action(act('keysList'));
  keys.command('revoke').description('revoke a key by id or prefix (asks first; scripts add --yes)').argument('<key>')
    .addOption(new Option('-y, --yes', 'do not ask for confirmation (needed in scripts)'))
    .action(act('keysRevoke', ['key']));

  admin.command('webhook-secret').description('show (or rotate) an account\'s webhook signing secret')
    .requiredOption('--account <user_id>', 'account id')
    .option('--rotate', 'replace it with a new secret (asks first: receivers verifying with the old one start refusing)')
    .addOption(new Option('-y, --yes', 'with --rotate: do not ask for confirmation (needed in scripts)'))
    .addHelpText('after', '\nExamples:\n  rpcctl admin webhook-secret --account 1\n  rpcctl admin webhook-secret --account 1 --rotate --yes')
    .action(act('webhookSecret'));

  admin.command('plans').description('plans, from config').command('list').alias('ls').description('list plans').action(act('plansList'));
  admin.command('upstreams').description('per-upstream health, latency, lag and cache figures of the running gateway')
    .action(act('upstreamsShow'));
  admin.command('reload').description('make the rpcctl serve of this data dir read its config again (SIGHUP); says what changed, or why it was refused')
    .action(lazyActions(io, () => import('./reload.js'))('reload'));
  admin.command('networks').description('networks and environments, from config').command('list').alias('ls')
    .description('list networks and environments').action(act('networksList'));

  const aml = admin.command('aml').description('AML screening of payment orders');
  aml.command('load').description('replace the sanctions list (plain list, JSON, or OFAC SDN_ADVANCED.XML)')
    .argument('<file>', 'the list file').action(actAml('amlLoad', ['file']));

  const actStore = lazyActions(io, () => import('./maintenance.js'));
  admin.command('backup').description('a consistent copy of the live SQLite store, taken while serve runs (PostgreSQL: pg_dump)')
    .argument('<file>', 'where the copy goes: a new file')
    .action(actStore('backup', ['file']));
  admin.command('migrate').description('apply the store\'s pending migrations, as serve does at start (--check: only list them)')
    .option('--check', 'list the pending migrations and apply nothing; exit 1 when there are any')
    .action(actStore('migrate'));

  const actRates = lazyActions(io, () => import('../payments/admin-rates.js'));
  const rates = admin.command('rates').description('exchange rates for payment orders priced in a fiat currency (payments.rates provider "static")');
  rates.command('set').description('set a rate (a running serve uses it at once; stale after payments.rates.ttl_s)')
    .argument('<asset>', 'the asset\'s symbol, e.g. ETH or USDT').argument('<currency>', 'ISO 4217 code, e.g. USD')
    .argument('<rate>', 'currency per asset unit, a decimal such as 3000.00')
    .action(actRates('ratesSet', ['asset', 'currency', 'rate']));
  rates.command('list').alias('ls').description('rates in the store and in the config, with their age').action(actRates('ratesList'));
}

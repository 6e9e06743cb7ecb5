import type { Command } from 'commander';
import { lazyActions } from '../action.js';
import type { CliIO } from '../io.js';

/** `rpcctl init`: the first-run wizard, or `--local` for a service on this machine. */
export function registerInit(program: Command, io: CliIO): void {
  const act = lazyActions(io, () => import('./run.js'));
  program.command('init').description('set up credentials: interactively, or --local for a service on this machine')
    .option('--local', 'create an account and key straight in the local data dir and save them as a profile (no copying secrets)')
    .option('--plan <slug>', 'with --local: the plan of the new account (default: the one with the most room, to try every feature)')
    .option('--data-dir <dir>', 'with --local: the data dir of `rpcctl serve` (default: $RPCCTL_DATA_DIR or the XDG data dir)')
    .option('--config <file>', 'with --local: the config file of `rpcctl serve` (for its API address)')
    .addHelpText('after', `
Without --local, asks for the base URL, key and secret, checks them and saves a profile (named by
--profile, else asked). --local saves the profile "local" (or --profile), with the webhook secret
that \`webhook listen\` verifies with. In scripts use \`rpcctl profile add\`.

Examples:
  rpcctl init                        # a key you were given: asks for it
  rpcctl init --local                # you run \`rpcctl serve --dev\` on this machine`)
    .action(act('init'));
}

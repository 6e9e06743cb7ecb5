import type { Command } from 'commander';
import { lazyActions } from '../action.js';
import type { CliIO } from '../io.js';

/** `rpcctl auth ...`: who this command line acts as, like `gh auth status`. */
export function registerAuth(program: Command, io: CliIO): void {
  const act = lazyActions(io, () => import('./run.js'));
  const auth = program.command('auth').description('the credentials in use: which profile, which key, whether it works');
  auth.command('status').description('show the profile, base URL and key prefix in use, and check the key with GET /v1/account')
    .addHelpText('after', '\nExit code 0 when the key works, 4 when it is refused, 1 when the service cannot be reached.\n\nExamples:\n  rpcctl auth status\n  rpcctl auth status --profile prod --json')
    .action(act('status'));
}

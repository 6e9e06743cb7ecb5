import type { Command } from 'commander';
import { lazyActions } from './action.js';
import type { CliIO } from './io.js';

/** `rpcctl init`: the first-run wizard. */
export function registerInit(program: Command, io: CliIO): void {
  const act = lazyActions(io, () => import('./init-run.js'));
  program.command('init').description('set up credentials interactively and create a first endpoint')
    .addHelpText('after', '\nSaves to the profile named by --profile (asked otherwise). In scripts use `rpcctl profile add`.')
    .action(act('init'));
}

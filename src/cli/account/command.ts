import type { Command } from 'commander';
import { lazyActions } from '../action.js';
import type { CliIO } from '../io.js';
import { chartOption, daysOption } from '../options.js';

/** `rpcctl account`, `usage`, `networks`: what the plan gives and what was used. */
export function registerAccount(program: Command, io: CliIO): void {
  const act = lazyActions(io, () => import('./run.js'));
  const account = program.command('account').description("plan, limits and this month's credits").action(act('account'));
  account.command('audit').description('who changed what, when and from where (cabinet, API keys, operator), newest first')
    .option('-n, --limit <n>', 'how many (1-200)', '20')
    .option('--action <action>', 'only this action (endpoint.create), or every action on a target (endpoint.)')
    .option('--before <id>', 'page back: entries older than this audit id')
    .action(act('audit'));
  program.command('usage').description('requests and credits per day and per method')
    .addOption(daysOption())
    .option('--endpoint <id>', 'only this endpoint (id, uuid or name)')
    .addOption(chartOption())
    .action(act('usage'));
  program.command('networks').description('networks and environments your plan can create endpoints on').action(act('networks'));
}

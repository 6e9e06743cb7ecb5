import type { Command } from 'commander';
import { lazyActions } from '../action.js';
import type { CliIO } from '../io.js';
import { yesOption } from '../options.js';

/** `rpcctl profile ...`: saved credentials, for scripts (`init` is the interactive way). */
export function registerProfile(program: Command, io: CliIO): void {
  const act = lazyActions(io, () => import('./run.js'));
  const profile = program.command('profile').description('saved credentials: add, list, use, remove');
  profile.command('add').description('save a profile; the secret is read from stdin (or asked for on a terminal)')
    .argument('<name>')
    .requiredOption('--api-key <key>', 'the API key (X-Api-Key)')
    .option('--no-verify', 'save without checking the key against GET /v1/account')
    .addHelpText('after', '\nThe base URL is --base-url, else $PUBLIC_API_BASE, else http://127.0.0.1:8080.')
    .action(act('add', ['name']));
  profile.command('list').alias('ls').description('list profiles (secrets shown as a prefix)').action(act('list'));
  profile.command('set').description('change one setting of a profile (the selected one, or --profile) without re-entering the secret')
    .argument('<key>', 'the setting: base_url, or gateway_url (for rpc UUID without a Public API call)')
    .argument('<value>')
    .addHelpText('after', '\nExamples:\n  rpcctl profile set base_url https://api.example.com\n  rpcctl profile set base_url http://127.0.0.1:9080 --profile local')
    .action(act('set', ['key', 'value']));
  profile.command('use').description('make a profile the one used by default').argument('<name>').action(act('use', ['name']));
  profile.command('remove').alias('rm').description('delete a saved profile').argument('<name>').addOption(yesOption()).action(act('remove', ['name']));
}

import { Option, type Command } from 'commander';
import { lazyActions } from '../action.js';
import type { CliIO } from '../io.js';

/** `rpcctl api`: any signed Public API request, raw JSON out (like `gh api`). */
export function registerApi(program: Command, io: CliIO): void {
  const act = lazyActions(io, () => import('./run.js'));
  program.command('api').description('send any signed Public API request and print the JSON answer')
    .argument('<method>', 'GET, POST, PUT, PATCH or DELETE')
    .argument('<path>', 'path under the base URL, e.g. /v1/endpoints?x=1')
    .addOption(new Option('-d, --data <json>', 'request body, sent exactly as given').conflicts('input'))
    .addOption(new Option('--input <file>', 'read the request body from a file (- for stdin)'))
    .addHelpText('after', `\nThe exit code follows the HTTP status: 0 for 2xx, 4 for 401/403, 1 otherwise; the body is printed either way.\n\nExamples:\n  rpcctl api GET /v1/account\n  rpcctl api PATCH /v1/endpoints/3/status --data '{"status":"paused"}'`)
    .action(act('api', ['method', 'path']));
}

import { Option, type Command } from 'commander';
import { lazyActions } from '../action.js';
import type { CliIO } from '../io.js';
import { chartOption, daysOption, yesOption } from '../options.js';

/** `rpcctl endpoints ...`: JSON-RPC endpoints, their status and IP allowlists. ID = id, uuid or name. */
export function registerEndpoints(program: Command, io: CliIO): void {
  const act = lazyActions(io, () => import('./run.js'));
  const endpoints = program.command('endpoints').alias('ep').description('JSON-RPC endpoints: list, create, pause, usage, request logs, IP allowlists');

  endpoints.command('list').alias('ls').description('list endpoints').action(act('list'));
  endpoints.command('get').description('show one endpoint').argument('<id>', 'id, uuid or name').action(act('get', ['ref']));
  endpoints.command('create').description('create an endpoint (see: rpcctl networks)')
    .requiredOption('--name <name>', 'display name')
    .option('--network <slug>', 'network slug, with --env')
    .option('--env <slug>', 'environment slug, with --network')
    .option('--environment-id <n>', 'network environment id (instead of --network/--env)')
    .addHelpText('after', '\nExamples:\n  rpcctl endpoints create --name main --network eth --env mainnet\n  rpcctl endpoints create --name archive --environment-id 2')
    .action(act('create'));
  endpoints.command('rename').description('give an endpoint another name').argument('<id>', 'id, uuid or name').argument('<new-name>')
    .action(act('rename', ['ref', 'newName']));
  endpoints.command('pause').description('stop JSON-RPC traffic to an endpoint').argument('<id>', 'id, uuid or name').action(act('pause', ['ref']));
  endpoints.command('resume').description('allow JSON-RPC traffic again').argument('<id>', 'id, uuid or name').action(act('resume', ['ref']));
  endpoints.command('usage').description("one endpoint's requests and credits").argument('<id>', 'id, uuid or name')
    .addOption(daysOption()).addOption(chartOption()).action(act('usage', ['ref']));
  endpoints.command('logs').description("one endpoint's recent gateway calls, oldest first (kept in the gateway's memory)").argument('<id>', 'id, uuid or name')
    .option('-f, --follow', 'keep polling and print new calls as they come (Ctrl-C stops)')
    .addOption(new Option('--status <which>', 'all calls, or only errors (HTTP or JSON-RPC)').choices(['all', 'error']).default('all'))
    .option('--method <name>', 'only calls of this JSON-RPC method')
    .option('-n, --limit <n>', 'the most recent n calls (1 to 1000)', '50')
    .option('--interval <seconds>', 'with --follow: seconds between polls', '1')
    .addHelpText('after', '\nExamples:\n  rpcctl endpoints logs main --status error\n  rpcctl endpoints logs main --follow --method eth_call\n'
      + 'Piped, each call is one tab-separated line: id, at, method, status, rpc_code, latency_ms, credits,\nclient_ip, cached, batch. --json prints one call object per line.')
    .action(act('logs', ['ref']));

  const allowlist = endpoints.command('allowlist').description('show or change the client IPs allowed to call an endpoint (empty: any)')
    .argument('<id>', 'id, uuid or name').action(act('allowlistShow', ['ref']));
  allowlist.command('set').description('replace the whole list').argument('<id>').argument('<ip...>').action(act('allowlistSet', ['ref', 'ips']));
  allowlist.command('add').description('add addresses to the list').argument('<id>').argument('<ip...>').action(act('allowlistAdd', ['ref', 'ips']));
  allowlist.command('remove').alias('rm').description('remove addresses from the list (removing the last one asks: any IP may then call)').argument('<id>').argument('<ip...>')
    .addOption(yesOption()).action(act('allowlistRemove', ['ref', 'ips']));
  allowlist.command('clear').description('remove the restriction: any IP may call').argument('<id>').addOption(yesOption()).action(act('allowlistClear', ['ref']));
}

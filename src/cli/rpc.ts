import type { Command } from 'commander';
import { lazyActions } from './action.js';
import type { CliIO } from './io.js';

/** `rpcctl rpc`: one JSON-RPC call through an endpoint's public URL. */
export function registerRpc(program: Command, io: CliIO): void {
  const act = lazyActions(io, () => import('./rpc-run.js'));
  program.command('rpc').description("send a JSON-RPC call to an endpoint's public URL and print the result")
    .argument('<endpoint>', 'endpoint id, uuid or name')
    .argument('<method>', 'JSON-RPC method, e.g. eth_blockNumber')
    .argument('[params]', 'params as JSON: an array or an object (default: [])')
    .addHelpText('after', `\nExamples:\n  rpcctl rpc main eth_blockNumber\n  rpcctl rpc 3 eth_getBalance '["0x0000000000000000000000000000000000000000", "latest"]'`)
    .action(act('rpc'));
}

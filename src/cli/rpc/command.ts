import type { Command } from 'commander';
import { lazyActions } from '../action.js';
import type { CliIO } from '../io.js';

/** `rpcctl rpc`: one JSON-RPC call through an endpoint's public URL. */
export function registerRpc(program: Command, io: CliIO): void {
  const act = lazyActions(io, () => import('./run.js'));
  program.command('rpc').description("send a JSON-RPC call to an endpoint's public URL and print the result")
    .argument('<endpoint>', 'endpoint id, uuid, name, or its full URL')
    .argument('<method>', 'JSON-RPC method, e.g. eth_blockNumber (EVM), getSlot (Solana), getblockcount (Bitcoin-style)')
    .argument('[params]', 'params as JSON: an array or an object (default: [])')
    .addHelpText('after', `\nA URL is called as it is, and a uuid through the profile's gateway_url (saved by init --local, or\nrpcctl profile set gateway_url URL), with no Public API call; an id or a name is looked up first.\n\nExamples:\n  rpcctl rpc main eth_blockNumber\n  rpcctl rpc http://rpc-eth-mainnet.localhost:8545/0cd2a3ae-bfbb-4e8c-9865-b0cec8d777bd eth_chainId\n  rpcctl rpc 3 eth_getBalance '["0x0000000000000000000000000000000000000000", "latest"]'\n  rpcctl rpc sol getSlot '[{"commitment": "finalized"}]'`)
    .action(act('rpc', ['ref', 'method', 'params']));
}

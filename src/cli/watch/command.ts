import type { Command } from 'commander';
import { lazyActions } from '../action.js';
import type { CliIO } from '../io.js';
import { eventTypeOption, yesOption } from '../options.js';

/** `rpcctl watch ...` (watched addresses) and `rpcctl events` (their feed). */
export function registerWatch(program: Command, io: CliIO): void {
  const act = lazyActions(io, () => import('./run.js'));
  const watch = program.command('watch').description('Address Watch: watched addresses and their slots');
  watch.command('add').description('watch an address (idempotent: an address already watched is returned as it is)')
    .requiredOption('--network <slug>', 'network: eth (its default environment), eth-sepolia, solana-devnet, ... (rpcctl networks)')
    .argument('<address>', 'EVM 0x address, Stellar account id (G...), Bitcoin-style address, Tron address (T...) or Solana public key (base58)')
    .action(act('add', ['address']));
  watch.command('list').alias('ls').description('list watched addresses (all pages)')
    .option('--network <slug>', 'only this network')
    .option('--address <address>', 'only this address')
    .action(act('list'));
  watch.command('remove').alias('rm').description('stop watching (frees the slot; the events stay in the feed)')
    .argument('<watch_id>', 'as shown by watch list').addOption(yesOption()).action(act('remove', ['watchId']));
  watch.command('status').description('slots used and free, whether a webhook is configured and enabled').action(act('status'));

  program.command('events').description('the Address Watch event feed, oldest first')
    .option('-f, --follow', 'keep polling and print new events as they come (Ctrl-C stops)')
    .addOption(eventTypeOption('only this event type'))
    .option('--network <slug>', 'only this network')
    .option('--after <id>', 'start after this event id (0: from the beginning)')
    .option('-n, --limit <n>', 'stop after n events (default: 100, or no limit with --follow)')
    .option('--interval <seconds>', 'with --follow: seconds between polls', '2')
    .addHelpText('after', `\nWithout --after, --follow prints only events that arrive from now on.\nPiped, each event is one tab-separated line: id, created_at, type, network, block_height, address,\ndirection, amount, token, tx_hash, block_hash. --json prints one event object per line.`)
    .action(act('events'));
}

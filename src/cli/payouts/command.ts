import { Option, type Command } from 'commander';
import { lazyActions } from '../action.js';
import type { CliIO } from '../io.js';
import { yesOption } from '../options.js';

const STATUSES = ['awaiting_approval', 'awaiting_address', 'awaiting_payment', 'sent', 'completed', 'canceled'];

/** `rpcctl payouts ...`: money going out that belongs to no order, paid from the merchant's own wallet. */
export function registerPayouts(program: Command, io: CliIO): void {
  const act = lazyActions(io, () => import('./run.js'));
  const payouts = program.command('payouts').description('payouts: money going out, paid from your own wallet, tracked to final');
  payouts.command('list').alias('ls').description('list payouts, newest first')
    .addOption(new Option('--status <status>', 'only this status').choices(STATUSES))
    .option('-n, --limit <n>', 'at most n payouts', '50')
    .action(act('list'));
  payouts.command('show').alias('get').description('one payout (or refund, by its rf_ id) with its lines and their payment requests')
    .argument('<payout_id>').action(act('show', ['payoutId']));
  payouts.command('create').description('create a payout from a CSV file (header: network,asset,address,amount,currency,reference); asks before it sends')
    .requiredOption('-f, --file <path>', 'the CSV file ("-" reads standard input); asset and currency may be empty, currency makes amount a fiat sum')
    .addOption(yesOption())
    .action(act('create'));
  payouts.command('approve').description('approve a payout or refund waiting for a second owner; its payment requests are shown from now')
    .argument('<payout_id>').addOption(yesOption()).action(act('approve', ['payoutId']));
  payouts.command('cancel').description('cancel the lines of a payout or refund nothing was paid to yet')
    .argument('<payout_id>').addOption(yesOption()).action(act('cancel', ['payoutId']));
  payouts.command('psbt').description('an unsigned BIP174 PSBT (base64) paying the lines from your paid orders\' coins (UTXO networks with an xpub)')
    .argument('<payout_id>')
    .option('--fee-rate <sat/vB>', 'fee rate in sat/vB (default: the node\'s estimatesmartfee)')
    .option('-o, --output <file>', 'write the PSBT to this file instead of standard output')
    .action(act('psbt', ['payoutId']));
  payouts.command('submit').description('send a signed transaction paying the lines: checked against them, broadcast, its hash recorded')
    .argument('<payout_id>')
    .argument('<signed_tx>', 'the signed transaction (hex, or a finalized PSBT in base64), or a file holding it ("-": standard input)')
    .option('--no-broadcast', 'only check and record it; you broadcast it yourself')
    .action(act('submit', ['payoutId', 'signedTx']));
}

import { Option, type Command } from 'commander';
import { lazyActions } from '../action.js';
import type { CliIO } from '../io.js';
import { yesOption } from '../options.js';

const STATUSES = ['pending', 'seen', 'aml_check', 'paid', 'failed', 'underpaid', 'expired'];

/** `rpcctl payments ...`: payment orders and their settings. */
export function registerPayments(program: Command, io: CliIO): void {
  const act = lazyActions(io, () => import('./run.js'));
  const payments = program.command('payments').description('payment orders: take money to an address, screened for AML');
  payments.command('create').description('create a payment order (idempotent by --order-id: the same flags return the same order)')
    .requiredOption('--order-id <id>', 'your order reference, unique per account')
    .requiredOption('--network <slug>', 'network: eth (its default environment) or eth-sepolia')
    .option('--amount <amount>', 'amount in units of the asset as a decimal, e.g. 12.50 (never rounded)')
    .option('--price <amount>', 'instead of --amount: a price in --currency, e.g. 19.99 (converted at a rate locked now, rounded up)')
    .option('--currency <code>', 'with --price: its ISO 4217 currency, e.g. USD or EUR')
    .option('--asset <asset>', 'native (default), a token symbol from the network\'s tokens, or its contract')
    .option('--address <address>', 'receive here (default: derived from your xpub, see payments settings)')
    .option('--expires-in <seconds>', 'seconds until the order expires (10..604800, default 3600)')
    .option('--webhook-url <url>', 'send this order\'s webhooks here instead of the Address Watch webhook URL')
    .option('--metadata <json>', 'a JSON object kept on the order and sent in its webhooks')
    .action(act('create'));
  payments.command('get').description('show one order').argument('<payment_id>').action(act('get', ['paymentId']));
  payments.command('list').alias('ls').description('list orders, newest first')
    .addOption(new Option('--status <status>', 'only this status').choices(STATUSES))
    .option('--network <slug>', 'only this network')
    .option('--order-id <id>', 'only this order reference')
    .option('-n, --limit <n>', 'at most n orders', '50')
    .action(act('list'));
  payments.command('cancel').description('cancel an order on which nothing was seen yet (it ends failed, reason canceled)')
    .argument('<payment_id>').addOption(yesOption()).action(act('cancel', ['paymentId']));
  const refunds = lazyActions(io, () => import('../payouts/run.js'));
  payments.command('refund').description('refund an order: to --address, or without it print a refund link for your customer')
    .argument('<payment_id>')
    .option('--amount <amount>', 'full (default: what it received less earlier refunds), overpaid (what arrived beyond the amount), or a number in the asset')
    .option('--currency <code>', 'with a number: the amount is in the order\'s fiat currency (e.g. EUR)')
    .addOption(new Option('--rate <rate>', 'with --currency: the order\'s locked rate (default) or today\'s').choices(['locked', 'current']))
    .option('--address <address>', 'the customer\'s address on the order\'s network (checked)')
    .option('--reference <text>', 'your reference, kept on the refund')
    .action(refunds('refund', ['paymentId']));
  payments.command('watch').description('follow one order live, one line per transition, until it ends (paid, failed or expired)')
    .argument('<payment_id>')
    .option('--interval <seconds>', 'seconds between polls', '2')
    .action(act('watch', ['paymentId']));
  payments.command('settings').description('show or change payment settings (with no flags: show them)')
    .option('--xpub <xpub>', 'extended public key to derive one EVM address per order ("" removes it)')
    .option('--xpub-utxo <key>', 'zpub/ypub/xpub (vpub/upub/tpub on test networks) to derive one Bitcoin-style address per order ("" removes it)')
    .option('--xpub-tron <xpub>', 'xpub of m/44\'/195\'/0\' to derive one Tron address per order ("" removes it)')
    .option('--wallet-solana <address>', 'your Solana wallet (base58) that Solana orders are paid to, each told apart by a Solana Pay reference ("" removes it)')
    .addOption(new Option('--aml-fail-at <level>', 'fail orders screened at or above this risk').choices(['medium', 'high', 'severe']))
    .option('--tolerance-bps <n>', 'accept payments short by up to this many basis points (100 = 1 %)')
    .option('--accept-late', 'complete orders paid within 24 h after expiry')
    .option('--no-accept-late', 'record late payments but leave the order expired')
    .option('--display-name <name>', 'your name on the checkout page ("" removes it)')
    .option('--redirect-url <url>', 'https page the checkout page sends a paid customer to, with ?order_id= ("" removes it)')
    .action(act('settings'));
}

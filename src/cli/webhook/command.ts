import { Option, type Command } from 'commander';
import { lazyActions } from '../action.js';
import type { CliIO } from '../io.js';
import { eventTypeOption } from '../options.js';

/** `rpcctl webhook ...`: the Address Watch webhook, its deliveries, and a local receiver. */
export function registerWebhook(program: Command, io: CliIO): void {
  const act = lazyActions(io, () => import('./run.js'));
  const webhook = program.command('webhook').description('Address Watch webhook: settings, test deliveries, delivery log, local receiver');
  webhook.command('get').description('show the webhook URL, switch, event filters and egress IPs').action(act('get'));

  const set = webhook.command('set').description('set the URL, switch it on or off, change event filters (filters not named are kept)')
    .option('--url <url>', 'where deliveries go (default: the current URL)')
    .addOption(new Option('--enable', 'send deliveries').conflicts('disable'))
    .addOption(new Option('--disable', 'stop sending deliveries (events stay in the feed)'));
  for (const kind of ['payment', 'payout', 'block']) {
    set.option(`--${kind} [networks]`, `send ${kind} events: alone for all networks, or only these (comma-separated)`)
      .option(`--no-${kind}`, `do not send ${kind} events`);
  }
  set.addHelpText('after', `\nExamples:\n  rpcctl webhook set --url https://shop.example.com/hooks --enable\n  rpcctl webhook set --payment=eth,polygon --no-block`).action(act('set'));

  webhook.command('test').description('queue a sample delivery through the real queue (never billed)')
    .addOption(eventTypeOption('event type').makeOptionMandatory())
    .requiredOption('--network <slug>', 'network of the sample event')
    .action(act('test'));
  webhook.command('deliveries').description('recent deliveries, newest first, with status and attempts')
    .option('-n, --limit <n>', 'how many (1-200)', '20')
    .addOption(new Option('--status <status>', 'only this status').choices(['pending', 'delivered', 'failed', 'cancelled']))
    .option('--event <id>', 'only deliveries of this event')
    .option('--before <id>', 'page back: deliveries older than this delivery id')
    .action(act('deliveries'));
  webhook.command('redeliver').description('send a delivery again now (same X-Webhook-Id, next attempt number)')
    .argument('<delivery_id>', 'from rpcctl webhook deliveries')
    .action(act('redeliver', ['deliveryId']));
  webhook.command('listen').description('a local receiver: verify X-Signature, print each event, answer 2xx, optionally forward')
    .option('--port <n>', 'port to listen on (0: a free one)', '0')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--forward-to <url>', 'POST each verified delivery on to this URL, body and signature headers unchanged')
    .addHelpText('after', `\nThe webhook secret (rpcctl admin webhook-secret) comes from $RPCCTL_WEBHOOK_SECRET, else the profile\n(saved there by rpcctl init --local), else stdin (a masked prompt on a terminal). It is never a flag: shell history and ps would keep it.\n\nExamples:\n  rpcctl webhook listen --port 4242\n  RPCCTL_WEBHOOK_SECRET=whsec_... rpcctl webhook listen --forward-to http://localhost:3000/hooks`)
    .action(act('listen'));
}

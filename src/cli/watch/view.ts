import type { WatchEvent, WebhookEventFilters, WebhookSettings } from '../../client/address-watch.js';
import { stripVTControlCharacters } from 'node:util';
import { escapeControl, escapeStrings, formatAmount, logTime, shortHex } from '../format.js';
import type { Output } from '../output.js';

/** The columns of a piped event line, in order (documented in docs/cli.md). */
const TSV_FIELDS = ['id', 'created_at', 'type', 'network', 'block_height', 'address', 'direction', 'amount', 'token', 'tx_hash', 'block_hash'] as const;

export interface EventContext {
  /** X-Webhook-Id and attempt of a received delivery (`webhook listen`). */
  webhookId?: string;
  attempt?: number;
}

/**
 * One event as one line: JSON with `--json`, tab-separated when piped, readable on a
 * terminal. One line each so `events --follow` and `webhook listen` can be piped to grep/jq.
 */
export function printEvent(out: Output, e: WatchEvent, ctx: EventContext = {}): void {
  if (out.json) return out.printJsonLine(e);
  if (!out.isTTY) {
    return out.tsv(TSV_FIELDS.map((f) => e[f]));
  }
  out.print(readableEvent(out, escapeStrings(e), ctx));
}

/**
 * A terminal line: local time, amounts in units with the raw value in brackets, and when the
 * line would not fit the terminal, addresses and hashes cut in the middle and the raw value
 * left to `--json` and piped output.
 */
function readableEvent(out: Output, e: WatchEvent, ctx: EventContext): string {
  const { c } = out;
  const columns = out.io.stdout.columns;
  const type = e.type === 'payment' ? c.green(e.type.padEnd(7)) : e.type === 'payout' ? c.yellow(e.type.padEnd(7)) : c.bold(e.type.padEnd(7));
  const line = (short: boolean) => {
    const hex = (v: string | undefined | null) => (v ? (short ? shortHex(v) : v) : '');
    const what = e.type === 'block'
      ? `${e.tx_count ?? 0} transaction${e.tx_count === 1 ? '' : 's'}  hash ${hex(e.block_hash)}`
      : `${e.direction ?? ''} ${hex(e.address)}  ${formatAmount(e, !short)}  tx ${hex(e.tx_hash)}`;
    const via = ctx.webhookId ? c.dim(`  ${escapeControl(ctx.webhookId)}${ctx.attempt ? ` attempt ${ctx.attempt}` : ''}`) : '';
    return `${c.bold(e.id)}  ${c.dim(logTime(e.created_at))}  ${type}  ${e.network}  #${e.block_height}  ${what}${e.test ? c.dim('  [test]') : ''}${via}`;
  };
  const full = line(false);
  return columns && stripVTControlCharacters(full).length > columns ? line(true) : full;
}

function filterText(on: boolean, networks: string[]): string {
  if (!on) return 'off';
  return networks.length ? `on: ${networks.join(',')}` : 'on: all networks';
}

/** `egress_ips` comes with GET only (the spec); after a PUT the table shows the rest. */
export function renderWebhook(out: Output, w: Omit<WebhookSettings, 'egress_ips'> & { egress_ips?: string[] }): void {
  if (out.json) return out.printJson(w);
  const f: WebhookEventFilters = w.events;
  out.fields([
    ['url', w.url ?? '(not set)'],
    w.enabled ? ['enabled', 'yes', 'green'] : ['enabled', 'no', 'yellow'],
    ['payment', filterText(f.payment, f.payment_networks)],
    ['payout', filterText(f.payout, f.payout_networks)],
    ['block', filterText(f.block, f.block_networks)],
    ...(w.egress_ips === undefined ? [] : [['egress ips', w.egress_ips.length ? w.egress_ips.join(out.isTTY ? ', ' : ',') : 'not configured'] as [string, string]]),
  ]);
}

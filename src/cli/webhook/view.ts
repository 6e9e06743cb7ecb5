import { stripVTControlCharacters } from 'node:util';
import type { WatchEvent } from '../../client/address-watch.js';
import type { PaymentWebhook } from '../../client/payments.js';
import { escapeControl, escapeStrings, logTime, shortHex } from '../format.js';
import type { Output } from '../output.js';
import { printEvent, type EventContext } from '../watch/view.js';

/** The columns of a piped payment-order line, in order (documented in docs/cli.md). */
const ORDER_TSV = ['id', 'created_at', 'type', 'network', 'event', 'payment_id', 'order_id', 'amount', 'asset_symbol', 'amount_received', 'tx_hash', 'address'] as const;

/**
 * One received delivery as one line. The service sends two body shapes to the same URL:
 * Address Watch events (`type` payment, payout, other, block) and payment orders
 * (`type=payment_order`, `product=payments`), whose fields are different; a type this CLI
 * does not know yet still shows its id, type and network rather than blanks.
 */
export function printDelivery(out: Output, body: Record<string, unknown>, ctx: EventContext = {}): void {
  if (body.type === 'payment_order') return printOrder(out, body as unknown as PaymentWebhook & OrderExtras, ctx);
  if (['payment', 'payout', 'other', 'block'].includes(String(body.type))) return printEvent(out, body as unknown as WatchEvent, ctx);
  if (out.json) return out.printJsonLine(body);
  const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? escapeControl(String(v)) : '');
  if (!out.isTTY) return out.tsv([body.id, body.created_at, body.type, body.network].map(text));
  // JSON.stringify escapes C0 controls but not DEL, C1 or the bidi ones.
  out.print(`${out.c.bold(text(body.id) || '?')}  ${out.c.bold(text(body.type) || '(no type)')}  ${text(body.network)}  ${escapeControl(JSON.stringify(body))}${via(out, ctx)}`);
}

/** Fields our payment-order bodies carry beyond the spec's list. */
interface OrderExtras {
  asset_symbol?: string;
  amount_received?: string;
  expires_at?: string;
}

function via(out: Output, ctx: EventContext): string {
  return ctx.webhookId ? out.c.dim(`  ${escapeControl(ctx.webhookId)}${ctx.attempt ? ` attempt ${ctx.attempt}` : ''}`) : '';
}

/**
 * `pay_…_3  14:03:05  order  aml_check  eth  order shop-42 pay_…  received 2/2 ETH  tx 0x…`:
 * the event leads and is coloured as `payments watch` colours statuses, so seen, aml_check
 * and paid tell apart at a glance; the AML verdict follows on `paid`, the reason on a failure.
 */
function printOrder(out: Output, o: PaymentWebhook & OrderExtras, ctx: EventContext): void {
  if (out.json) return out.printJsonLine(o);
  if (!out.isTTY) {
    return out.tsv(ORDER_TSV.map((f) => o[f]));
  }
  o = escapeStrings(o);
  const { c } = out;
  const event = String(o.event ?? o.status ?? '?');
  const paint = event === 'paid' ? c.green : event === 'failed' || event === 'expired' ? c.red : event === 'underpaid' ? c.yellow : c.bold;
  const asset = o.asset_symbol ?? '';
  const columns = out.io.stdout.columns;
  const line = (short: boolean) => {
    const hex = (v: string | null | undefined) => (v ? (short ? shortHex(v) : v) : '');
    const amount = o.amount_received !== undefined && o.amount_received !== o.amount
      ? `received ${o.amount_received}/${o.amount} ${asset}` : `${o.amount} ${asset}`;
    const parts = [
      c.bold(o.id), c.dim(o.created_at ? logTime(o.created_at) : ''), 'order', paint(event.padEnd(9)), o.network,
      `${o.order_id} ${c.dim(o.payment_id)}`, amount.trim(),
      o.tx_hash ? `tx ${hex(o.tx_hash)}` : `to ${hex(o.address)}`,
    ];
    if (o.aml) parts.push(`aml ${o.aml.risk_level} (${o.aml.score})`);
    if (o.reason) parts.push(`reason ${o.reason}`);
    if (o.late) parts.push('late');
    if (o.overpaid) parts.push('overpaid');
    return `${parts.filter(Boolean).join('  ')}${via(out, ctx)}`;
  };
  const full = line(false);
  out.print(columns && stripVTControlCharacters(full).length > columns ? line(true) : full);
}

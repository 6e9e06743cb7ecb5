import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { ApiError } from '../../client/errors.js';
import { PaymentsClient } from '../../client/payments.js';
import { PayoutsClient, RefundsClient, type Payout, type PayoutLineEntry, type Refund } from '../../client/payouts.js';
import type { CommandImpl } from '../action.js';
import { withApi, type ApiContext } from '../context.js';
import { CliError, usageError, type CliIO } from '../io.js';
import type { Output } from '../output.js';
import type { GlobalOptions } from '../globals.js';
import { confirmOrYes } from '../prompts.js';
import { readAll } from '../stdin.js';
import { positiveInt } from '../watch/run.js';
import { CsvError, parsePayoutCsv, totalsOf } from '../../payouts/csv.js';

function withPayouts<T>(io: CliIO, opts: GlobalOptions, fn: (ctx: ApiContext & { payouts: PayoutsClient }) => Promise<T>): Promise<T> {
  return withApi(io, opts, (ctx) => fn({ ...ctx, payouts: new PayoutsClient(ctx.api) }));
}

const statusStyle = (s: string) => (s === 'completed' ? 'green' : s === 'canceled' ? 'red' : s === 'awaiting_approval' ? 'yellow' : undefined);

function showPayout(out: Output, p: Payout): void {
  out.fields([
    ['payout_id', p.payout_id], ['status', p.status, statusStyle(p.status)], ['approval', p.approval + (p.approval_reason ? ` (${p.approval_reason})` : '')],
    ['created_by', p.created_by], ['approved_by', p.approved_by ?? ''], ['fiat_total', p.fiat_total === null ? '' : `${p.fiat_total} ${p.fiat_currency}`],
    ['lines', p.line_count], ['created_at', out.at(p.created_at)],
  ]);
  out.print();
  out.table(p.lines, [
    { header: 'LINE', value: (l: PayoutLineEntry) => String(l.line), keep: true },
    { header: 'STATUS', value: (l) => l.status, keep: true, style: (l) => statusStyle(l.status) },
    { header: 'NETWORK', value: (l) => l.network, priority: -1 },
    { header: 'AMOUNT', value: (l) => `${l.amount} ${l.asset_symbol}`, keep: true },
    { header: 'ADDRESS', value: (l) => l.address ?? '(awaiting the customer)' },
    { header: 'REFERENCE', value: (l) => l.reference ?? '', priority: -2 },
    { header: 'TX', value: (l) => l.tx_hash ?? '', priority: -3 },
    { header: 'PAY WITH', value: (l) => l.payment_request?.uri ?? '', priority: -4 },
  ]);
  if (p.approval === 'awaiting') out.note(`Waiting for a second owner: rpcctl payouts approve ${p.payout_id}`);
}

export const list: CommandImpl<{ status?: string; limit: string }> = (io, opts) => {
  const limit = positiveInt('--limit', opts.limit)!;
  return withPayouts(io, opts, async ({ payouts, out }) => {
    const rows: Payout[] = [];
    for (let page = 1; rows.length < limit; page++) {
      const r = await payouts.list({ status: opts.status as Payout['status'] | undefined, page, per_page: Math.min(200, limit) });
      rows.push(...r.payouts.slice(0, limit - rows.length));
      if (r.payouts.length < r.per_page) break;
    }
    if (out.json) return out.printJson(rows);
    out.table(rows, [
      { header: 'PAYOUT ID', value: (p) => p.payout_id, keep: true },
      { header: 'STATUS', value: (p) => p.status, keep: true, style: (p) => statusStyle(p.status) },
      { header: 'APPROVAL', value: (p) => p.approval, priority: -1 },
      { header: 'LINES', value: (p) => String(p.line_count) },
      { header: 'CREATED BY', value: (p) => p.created_by, priority: -3 },
      { header: 'CREATED', value: (p) => out.when(p.created_at), priority: -2 },
    ]);
  });
};

export const show: CommandImpl<{ payoutId: string }> = (io, opts) => withPayouts(io, opts, async ({ payouts, out }) => {
  const { payout } = await payouts.get(opts.payoutId);
  if (out.json) return out.printJson(payout);
  showPayout(out, payout);
});

async function readInput(io: CliIO, source: string): Promise<string> {
  if (source === '-') return readAll(io.stdin);
  try {
    return readFileSync(source, 'utf8');
  } catch (err) {
    throw usageError(`cannot read ${source}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

export const create: CommandImpl<{ file: string; yes?: boolean }> = async (io, opts) => {
  const name = opts.file === '-' ? 'stdin' : opts.file;
  let parsed: ReturnType<typeof parsePayoutCsv>;
  try {
    parsed = parsePayoutCsv(await readInput(io, opts.file));
  } catch (err) {
    if (err instanceof CsvError) throw usageError(`${name}: ${err.message}`);
    throw err;
  }
  return withPayouts(io, opts, async ({ payouts, out }) => {
    const totals = totalsOf(parsed.lines);
    out.note(`${parsed.lines.length} line${parsed.lines.length === 1 ? '' : 's'} from ${name}:`);
    for (const t of totals) out.note(`  ${t.network}  ${t.total} ${t.unit}  (${t.lines} line${t.lines === 1 ? '' : 's'})`);
    await confirmOrYes(io, opts, `Create this payout of ${parsed.lines.length} line${parsed.lines.length === 1 ? '' : 's'}?`);
    const { payout } = await payouts.create({ lines: parsed.lines }).catch((err: unknown) => {
      // The service counts lines from 0 in the body; the merchant counts them in the file.
      const m = err instanceof ApiError ? /^lines\[(\d+)\]\.(\w+): (.*)$/s.exec(err.message) : null;
      const fileLine = m ? parsed.fileLines[Number(m[1])] : undefined;
      throw fileLine !== undefined ? new CliError(`${name}: line ${fileLine}: ${m![2]}: ${m![3]}`) : err;
    });
    if (out.json) return out.printJson(payout);
    out.print(payout.payout_id);
    out.note(payout.approval === 'awaiting'
      ? `Created; it waits for a second owner: rpcctl payouts approve ${payout.payout_id}`
      : `Created. Pay it from your wallet (rpcctl payouts show ${payout.payout_id}), or on a UTXO network: rpcctl payouts psbt ${payout.payout_id}`);
  });
};

export const approve: CommandImpl<{ payoutId: string; yes?: boolean }> = (io, opts) => withPayouts(io, opts, async ({ payouts, out }) => {
  await confirmOrYes(io, opts, `Approve ${opts.payoutId}? Its payment requests are shown from now.`);
  const { payout } = await payouts.approve(opts.payoutId);
  if (out.json) return out.printJson(payout);
  out.note(`Approved ${payout.payout_id} (${payout.line_count} line${payout.line_count === 1 ? '' : 's'}, ${payout.status}).`);
});

export const cancel: CommandImpl<{ payoutId: string; yes?: boolean }> = (io, opts) => withPayouts(io, opts, async ({ payouts, out }) => {
  await confirmOrYes(io, opts, `Cancel the lines of ${opts.payoutId} nothing was paid to yet?`);
  const { payout } = await payouts.cancel(opts.payoutId);
  if (out.json) return out.printJson(payout);
  out.note(`${payout.payout_id} is ${payout.status}.`);
});

export const psbt: CommandImpl<{ payoutId: string; feeRate?: string; output?: string }> = (io, opts) => {
  if (opts.feeRate !== undefined && !/^\d{1,6}(\.\d{1,3})?$/.test(opts.feeRate)) throw usageError(`--fee-rate must be sat/vB such as 5 or 2.5, got "${opts.feeRate}"`);
  return withPayouts(io, opts, async ({ payouts, out }) => {
    const r = await payouts.psbt(opts.payoutId, { fee_rate: opts.feeRate });
    if (out.json) return out.printJson({ psbt: r.psbt, fee_raw: r.fee_raw });
    if (opts.output) {
      writeFileSync(opts.output, `${r.psbt}\n`);
      out.note(`Wrote the PSBT to ${opts.output}.`);
    } else out.print(r.psbt);
    if (r.fee_raw !== null) out.note(`Fee: ${r.fee_raw} sat. Sign it (Bitcoin Core: walletprocesspsbt, then finalizepsbt), then: rpcctl payouts submit ${opts.payoutId} SIGNED`);
  });
};

export const submit: CommandImpl<{ payoutId: string; signedTx: string; broadcast?: boolean }> = async (io, opts) => {
  const raw = opts.signedTx === '-' || existsSync(opts.signedTx) ? await readInput(io, opts.signedTx) : opts.signedTx;
  const signed = raw.trim();
  if (!signed) throw usageError('the signed transaction is empty');
  return withPayouts(io, opts, async ({ payouts, out }) => {
    const r = await payouts.submitTransaction(opts.payoutId, { signed_transaction: signed, broadcast: opts.broadcast !== false });
    if (out.json) return out.printJson({ tx_hash: r.tx_hash, payout: r.payout });
    out.print(r.tx_hash);
    out.note(`${opts.broadcast === false ? 'Recorded' : 'Broadcast and recorded'}: ${r.payout.payout_id} is ${r.payout.status}; only this transaction pays its lines now.`);
  });
};

/** `rpcctl payments refund`: a refund of an order, to an address or through a refund link for the customer. */
export const refund: CommandImpl<{ paymentId: string; amount?: string; currency?: string; rate?: 'locked' | 'current'; address?: string; reference?: string; yes?: boolean }> = (io, opts) => {
  const amount = opts.amount ?? 'full';
  if (opts.currency !== undefined && (amount === 'full' || amount === 'overpaid')) throw usageError('--currency goes with a number: --amount 10 --currency EUR');
  if (opts.rate !== undefined && opts.currency === undefined) throw usageError('--rate goes with --currency (a fiat amount): locked (the order\'s rate) or current (today\'s)');
  return withApi(io, opts, async ({ api, out }) => {
    if (opts.currency !== undefined) {
      const { payment } = await new PaymentsClient(api).get(opts.paymentId);
      if (payment.price_currency === null) throw usageError(`${payment.payment_id} is priced in ${payment.asset_symbol}: give --amount in ${payment.asset_symbol} without --currency`);
      if (payment.price_currency !== opts.currency.toUpperCase()) throw usageError(`${payment.payment_id} is priced in ${payment.price_currency}, not ${opts.currency}: give --currency ${payment.price_currency}`);
    }
    const body = opts.currency !== undefined
      ? { price_amount: amount, rate: opts.rate ?? 'locked' as const }
      : { amount };
    const { refund: r } = await new RefundsClient(api).create(opts.paymentId, { ...body, address: opts.address, reference: opts.reference });
    if (out.json) return out.printJson(r);
    printRefund(out, r);
  });
};

function printRefund(out: Output, r: Refund): void {
  if (r.refund_link?.url) {
    out.print(r.refund_link.url);
    out.note(`Refund ${r.refund_id} of ${r.amount} ${r.asset_symbol}: send this link to your customer (shown once; it expires ${out.at(r.refund_link.expires_at)}).`);
    return;
  }
  out.print(r.refund_id);
  if (r.approval === 'awaiting') out.note(`${r.amount} ${r.asset_symbol} to ${r.address}; it waits for a second owner: rpcctl payouts approve ${r.refund_id}`);
  else out.note(`Pay ${r.amount} ${r.asset_symbol} to ${r.address}${r.payment_request ? `: ${r.payment_request.uri}` : ''} (rpcctl payouts show ${r.refund_id})`);
}

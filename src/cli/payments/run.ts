import { AbortedError, ApiError } from '../../client/errors.js';
import { DEFAULT_FAMILY, DERIVING_FAMILIES, REFERENCE_FAMILIES } from '../../chains/traits.js';
import { PaymentsClient, type Payment } from '../../client/payments.js';
import type { CommandImpl } from '../action.js';
import { withApi, type ApiContext } from '../context.js';
import { escapeControl, logTime } from '../format.js';
import { interruptOf, sleep } from '../interrupt.js';
import { CliError, usageError, type CliIO } from '../io.js';
import type { Output } from '../output.js';
import type { GlobalOptions } from '../globals.js';
import { confirmOrYes } from '../prompts.js';
import { positiveInt } from '../watch/run.js';

function withPayments<T>(io: CliIO, opts: GlobalOptions, fn: (ctx: ApiContext & { payments: PaymentsClient }) => Promise<T>): Promise<T> {
  return withApi(io, opts, (ctx) => fn({ ...ctx, payments: new PaymentsClient(ctx.api) }));
}

/** Where an order stops moving (an expired order may still take a late payment, but watching ends). */
const FINAL = new Set(['paid', 'failed', 'expired']);

const units = (p: Payment, which: 'amount' | 'amount_received') => `${p[which]} ${p.asset_symbol}`;

function show(out: Output, p: Payment): void {
  out.fields([
    ['payment_id', p.payment_id], ['order_id', p.order_id], ['status', p.status + (p.reason ? ` (${p.reason})` : '')],
    ['network', p.network], ['address', p.address], ['amount', units(p, 'amount')], ['received', units(p, 'amount_received')],
    ['asset', p.asset], ['expires_at', out.at(p.expires_at)], ['lifecycle', p.lifecycle], ['late', p.late], ['overpaid', p.overpaid],
    ['aml', p.aml ? `${p.aml.provider}: ${p.aml.risk_level} (score ${p.aml.score})` : ''], ['tx_hashes', p.tx_hashes.join(' ')],
    ['webhook_url', p.webhook_url], ['watch_id', p.watch_id], ['checkout_url', p.checkout_url],
    ...(p.price_amount === null ? [] : [
      ['price', `${p.price_amount} ${p.price_currency}`], ['rate', rateLine(out, p)],
    ] as Array<[string, string]>),
  ]);
}

/** "3000.5 USD/ETH (http, 2026-11-26 05:50:00)": the rate a fiat-priced order was converted at, and when (local on a terminal). */
const rateLine = (out: Output, p: Payment) => `${p.rate} ${p.price_currency}/${p.asset_symbol} (${p.rate_source}, ${out.at(p.rate_at)})`;

/** The settings flag of a family's key (`xpubs.utxo` in the API): `--xpub-utxo`, the default family's plain `--xpub`. */
const xpubFlag = (family: string) => (family === DEFAULT_FAMILY ? '--xpub' : `--xpub-${family}`);
/** The flag's key in commander's options (`--xpub-utxo`: `xpubUtxo`). */
const xpubOption = (family: string) => xpubFlag(family).slice(2).replace(/-(\w)/g, (_m, c: string) => c.toUpperCase());

/** The settings flag of a family's wallet (`wallets.solana` in the API): `--wallet-solana`. */
const walletFlag = (family: string) => `--wallet-${family}`;
const walletOption = (family: string) => walletFlag(family).slice(2).replace(/-(\w)/g, (_m, c: string) => c.toUpperCase());

/** The API's "set a key first (PUT /v1/payments/settings ...)", said as the command that does it here. */
export function settingsHint(message: string): string {
  return message
    .replace(/\(PUT \/v1\/payments\/settings with xpubs\.(\w+)\)/, (_m, family: string) => `(rpcctl payments settings ${xpubFlag(family)} KEY)`)
    .replace(/\(PUT \/v1\/payments\/settings with wallets\.(\w+)\)/, (_m, family: string) => `(rpcctl payments settings ${walletFlag(family)} ADDRESS)`)
    .replace(/\(PUT \/v1\/payments\/settings\)/, '(rpcctl payments settings)')
    // The API's words are the contract's (clients match them); what to do is said here.
    .replace(/^Rate unavailable for (\w+)\/(\w+)\.$/, (m, asset: string, currency: string) =>
      `${m} The service's operator sets one: rpcctl admin rates set ${asset} ${currency} RATE (or an http rates source in the config: payments.rates, docs/payments.md#fiat-prices).`);
}

export const create: CommandImpl<{
  orderId: string; network: string; amount?: string; price?: string; currency?: string; asset?: string; address?: string; expiresIn?: string; webhookUrl?: string; metadata?: string;
}> = (io, opts) => {
  let metadata: Record<string, unknown> | undefined;
  if (opts.metadata !== undefined) {
    try {
      metadata = JSON.parse(opts.metadata) as Record<string, unknown>;
    } catch {
      throw usageError('--metadata must be a JSON object, e.g. \'{"cart": 42}\'');
    }
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) throw usageError('--metadata must be a JSON object');
  }
  if ((opts.amount === undefined) === (opts.price === undefined)) throw usageError('give --amount (in the asset) or --price with --currency');
  if ((opts.price === undefined) !== (opts.currency === undefined)) throw usageError('--price and --currency go together, e.g. --price 19.99 --currency USD');
  const expiresIn = positiveInt('--expires-in', opts.expiresIn);
  return withPayments(io, opts, async ({ payments, out }) => {
    const { payment, created } = await payments.create({
      order_id: opts.orderId, network_slug: opts.network, amount: opts.amount, price_amount: opts.price, price_currency: opts.currency,
      asset: opts.asset, address: opts.address,
      expires_in: expiresIn, webhook_url: opts.webhookUrl, metadata,
    }).catch((err: unknown) => {
      const hinted = err instanceof ApiError ? settingsHint(err.message) : undefined;
      throw hinted !== undefined && hinted !== (err as Error).message ? new CliError(hinted) : err;
    });
    if (out.json) return out.printJson({ ...payment, created });
    out.print(payment.payment_id);
    out.note(`${created ? 'Created' : 'Already exists (same body)'}: pay ${units(payment, 'amount')} to ${payment.address} on ${payment.network} by ${out.at(payment.expires_at)}.`);
    if (payment.price_amount !== null) out.note(`Priced ${payment.price_amount} ${payment.price_currency} at ${rateLine(out, payment)}.`);
    out.note(`Checkout page for your customer: ${payment.checkout_url}`);
    out.note(`Follow it: rpcctl payments watch ${payment.payment_id}`);
  });
};

export const get: CommandImpl<{ paymentId: string }> = (io, opts) => withPayments(io, opts, async ({ payments, out }) => {
  const { payment } = await payments.get(opts.paymentId);
  if (out.json) return out.printJson(payment);
  show(out, payment);
});

export const list: CommandImpl<{ status?: string; network?: string; orderId?: string; limit: string }> = (io, opts) => {
  const limit = positiveInt('--limit', opts.limit)!;
  return withPayments(io, opts, async ({ payments, out }) => {
    const rows: Payment[] = [];
    for (let page = 1; rows.length < limit; page++) {
      const r = await payments.list({ status: opts.status, network: opts.network, order_id: opts.orderId, page, per_page: Math.min(200, limit) });
      rows.push(...r.payments.slice(0, limit - rows.length));
      if (r.payments.length === 0 || page * r.per_page >= r.total) break;
    }
    if (out.json) return out.printJson(rows);
    out.table(rows, [
      // On a narrow terminal the id, status and amount stay whole and the order id is cut;
      // the address is cut, then it, the time, the network and the amount received are
      // left out (`payments get` and piped output have them).
      { header: 'PAYMENT ID', value: (p) => p.payment_id, keep: true },
      { header: 'ORDER', value: (p) => p.order_id },
      { header: 'STATUS', value: (p) => p.status + (p.reason ? ` (${p.reason})` : ''), priority: 2, style: (p) => (p.status === 'paid' ? 'green' : p.status === 'failed' ? 'red' : undefined) },
      { header: 'NETWORK', value: (p) => p.network, priority: -2 },
      { header: 'AMOUNT', value: (p) => units(p, 'amount'), priority: 2 },
      { header: 'RECEIVED', value: (p) => units(p, 'amount_received'), priority: -1 },
      { header: 'ADDRESS', value: (p) => p.address, priority: -4 },
      { header: 'CREATED', value: (p) => out.when(p.created_at), priority: -3 },
    ]);
  });
};

export const cancel: CommandImpl<{ paymentId: string; yes?: boolean }> = (io, opts) => withPayments(io, opts, async ({ payments, out }) => {
  const id = opts.paymentId;
  await confirmOrYes(io, opts, `Cancel payment ${id}? It ends failed (canceled) and its address is released.`);
  const { payment } = await payments.cancel(id);
  if (out.json) return out.printJson(payment);
  out.note(`Canceled ${payment.payment_id} (order ${payment.order_id}).`);
});

/** One line per status the order takes, as `lifecycle` grows; exits when the order ends. */
export const watch: CommandImpl<{ paymentId: string; interval: string }> = (io, opts) => {
  const id = opts.paymentId;
  const intervalMs = Number(opts.interval) * 1000;
  if (!Number.isFinite(intervalMs) || intervalMs < 100) throw usageError(`--interval must be at least 0.1 seconds, got "${opts.interval}"`);
  return withPayments(io, opts, async ({ payments, out }) => {
    const interrupt = interruptOf(io);
    const signal = interrupt.signal;
    let shown = 0;
    try {
      for (;;) {
        const { payment: p } = await payments.get(id, signal);
        const steps = p.lifecycle.split('>');
        if (shown === 0 && !out.json) out.note(`Watching ${p.payment_id}: ${units(p, 'amount')} to ${p.address} on ${p.network} (Ctrl-C to stop)`);
        for (const step of steps.slice(shown)) {
          // Through Output like every command's JSON, so the global --jq applies to each line.
          if (out.json) out.printJsonLine({ status: step, payment: p });
          else {
            // A terminal gets the local time as event lines do; piped, the ISO-8601 UTC time.
            const now = new Date().toISOString();
            const cells = [out.isTTY ? logTime(now) : now, step, `${p.amount_received}/${p.amount} ${p.asset_symbol}`, p.reason ?? '', p.tx_hashes.at(-1) ?? ''];
            if (out.isTTY) out.print(cells.map(escapeControl).join('  ').trimEnd());
            else out.tsv(cells);
          }
        }
        shown = steps.length;
        if (FINAL.has(p.status)) break;
        await sleep(intervalMs, signal);
        if (signal.aborted) break;
      }
    } catch (err) {
      if (!(err instanceof AbortedError)) throw err;
    } finally {
      interrupt.dispose();
    }
  });
};

export const settings: CommandImpl<{
  xpub?: string; xpubUtxo?: string; xpubTron?: string; walletSolana?: string; amlFailAt?: 'medium' | 'high' | 'severe'; toleranceBps?: string; acceptLate?: boolean;
  displayName?: string; redirectUrl?: string;
}> = (io, opts) => {
  const patch: Parameters<PaymentsClient['putSettings']>[0] = {};
  for (const family of DERIVING_FAMILIES) {
    const key = (opts as Record<string, unknown>)[xpubOption(family)];
    if (typeof key === 'string') patch.xpubs = { ...patch.xpubs, [family]: key };
  }
  // Checked by the API, which names the setting and what an address of the family is.
  for (const family of REFERENCE_FAMILIES) {
    const wallet = (opts as Record<string, unknown>)[walletOption(family)];
    if (typeof wallet === 'string') patch.wallets = { ...patch.wallets, [family]: wallet };
  }
  if (opts.amlFailAt !== undefined) patch.aml_fail_at = opts.amlFailAt;
  if (opts.toleranceBps !== undefined) {
    if (!/^\d{1,5}$/.test(opts.toleranceBps) || Number(opts.toleranceBps) > 10_000) throw usageError(`--tolerance-bps must be an integer from 0 to 10000, got "${opts.toleranceBps}"`);
    patch.underpaid_tolerance_bps = Number(opts.toleranceBps);
  }
  // commander sets acceptLate only when one of the two flags is given.
  if (opts.acceptLate !== undefined) patch.accept_late = opts.acceptLate;
  // Checked by the API, which names what is wrong ("" removes either).
  if (opts.displayName !== undefined) patch.display_name = opts.displayName;
  if (opts.redirectUrl !== undefined) patch.redirect_url = opts.redirectUrl;
  return withPayments(io, opts, async ({ payments, out }) => {
    const s = Object.keys(patch).length === 0 ? await payments.settings() : await payments.putSettings(patch);
    const { ok: _ok, ...rest } = s;
    if (out.json) return out.printJson(rest);
    out.fields([
      ['xpub (evm)', s.xpubs.evm ?? '(none: orders need --address)'],
      ['first address', s.derived.evm?.first_address ?? ''],
      ['next index', s.derived.evm?.next_index ?? ''],
      ...(s.xpubs.utxo ? [
        ['xpub (utxo)', s.xpubs.utxo], ['first address', `${s.derived.utxo?.first_address ?? ''} (${s.derived.utxo?.network ?? ''})`], ['next index', s.derived.utxo?.next_index ?? ''],
      ] as Array<[string, string | number]> : []),
      ...(s.xpubs.tron ? [
        ['xpub (tron)', s.xpubs.tron], ['first address', s.derived.tron?.first_address ?? ''], ['next index', s.derived.tron?.next_index ?? ''],
      ] as Array<[string, string | number]> : []),
      ...REFERENCE_FAMILIES.filter((f) => s.wallets[f]).map((f) => [`wallet (${f})`, s.wallets[f]!] as [string, string]),
      ['aml_fail_at', s.aml_fail_at],
      ['tolerance', `${s.underpaid_tolerance_bps} bps`],
      ['accept_late', s.accept_late],
      ['display_name', s.display_name ?? '(none)'],
      ['redirect_url', s.redirect_url ?? '(none)'],
    ]);
    if (s.derived.evm && opts.xpub) out.note(`Check that ${s.derived.evm.first_address} is the first address of that wallet before taking payments.`);
    if (s.derived.utxo && opts.xpubUtxo) out.note(`Check that ${s.derived.utxo.first_address} is that wallet's first receive address; raise its gap limit above your open orders (it stops looking after 20 unused addresses).`);
    if (s.derived.tron && opts.xpubTron) out.note(`Check that ${s.derived.tron.first_address} is the first address of that wallet before taking payments.`);
  });
};

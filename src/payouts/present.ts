import QRCode from 'qrcode';
import type { Config } from '../config/index.js';
import type { Store } from '../store/index.js';
import { chainOf } from '../chains/index.js';
import type { EnvironmentChains } from '../watch/chains.js';
import { fromBaseUnits } from '../payments/amounts.js';
import { assetOfRow } from '../payments/assets.js';
import type { Approval, Payout, PayoutLineEntry, PayoutStatus, Refund } from '../wire/payouts.js';
import { PAYOUT_STATUSES } from '../wire/payouts.js';
import type { LineRow, LinkRow, PayoutRow } from './rows.js';

export interface PresentDeps {
  store: Store;
  config: Config;
  chains: EnvironmentChains;
  log: (line: string) => void;
}

/**
 * The chain's payment URI for a line any wallet can pay (BIP21, EIP-681, the address), with its
 * QR code when asked; none before approval, without an address, or once paid.
 */
async function paymentRequest(d: PresentDeps, payout: PayoutRow, l: LineRow, qr: boolean, away: NodeAway): Promise<PayoutLineEntry['payment_request']> {
  if (payout.approval === 'awaiting' || l.status !== 'awaiting_payment' || l.address === null) return null;
  const env = d.store.catalog.environment(l.network_environment_id);
  if (!env) return null;
  let uri: string;
  try {
    uri = await chainOf(env.network.family).payments.paymentUri(
      { env, address: l.address, asset: l.asset, amountRaw: BigInt(l.amount_raw), decimals: l.decimals }, () => d.chains.of(env));
  } catch (err) {
    // The node is away (an EVM chain id): the bare address still lets the merchant pay.
    away.note(`${env.network.slug}-${env.slug}`, l.line_no, err as Error);
    uri = l.address;
  }
  return { uri, qr_svg: qr ? await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 }) : null };
}

/**
 * Lines whose payment URI went without the node, told in one line per environment once the
 * payout is presented: a batch of 1,000 lines on a network whose node is down is one log line.
 */
class NodeAway {
  readonly #byEnv = new Map<string, { lines: number[]; message: string }>();

  note(env: string, lineNo: number, err: Error): void {
    const seen = this.#byEnv.get(env);
    if (seen) seen.lines.push(lineNo);
    else this.#byEnv.set(env, { lines: [lineNo], message: err.message });
  }

  tell(d: PresentDeps, payout: PayoutRow): void {
    for (const [env, { lines, message }] of this.#byEnv) {
      const which = lines.length === 1 ? `line ${lines[0]}` : `${lines.length} lines`;
      d.log(`payouts: payment URI of ${payout.payout_id} ${which} on ${env} without the node (${message}); the address alone`);
    }
  }
}

export async function presentLine(d: PresentDeps, payout: PayoutRow, l: LineRow, qr: boolean, away?: NodeAway): Promise<PayoutLineEntry> {
  const own = away ?? new NodeAway();
  const entry = await lineEntry(d, payout, l, qr, own);
  if (!away) own.tell(d, payout);
  return entry;
}

async function lineEntry(d: PresentDeps, payout: PayoutRow, l: LineRow, qr: boolean, away: NodeAway): Promise<PayoutLineEntry> {
  const env = d.store.catalog.environment(l.network_environment_id);
  return {
    line: l.line_no, status: l.status as PayoutStatus, network: l.network, asset: l.asset, asset_symbol: assetOfRow(d.config, env, l.asset, l.decimals).symbol,
    decimals: l.decimals, address: l.address, amount: fromBaseUnits(l.amount_raw, l.decimals), amount_raw: l.amount_raw,
    price_amount: l.price_amount, price_currency: l.price_currency, rate: l.rate, reference: l.reference,
    tx_hash: l.tx_hash, expected_tx: l.expected_tx, lifecycle: l.lifecycle,
    payment_request: await paymentRequest(d, payout, l, qr, away), updated_at: l.updated_at,
  };
}

function approvalOf(p: PayoutRow) {
  return {
    approval: p.approval as Approval, approval_reason: p.approval_reason as 'role' | 'amount' | null,
    created_by: p.created_by_label, approved_by: p.approved_by_label, approved_at: p.approved_at,
    fiat_total: p.fiat_total, fiat_currency: p.fiat_currency,
  };
}

/** The payout's status: the least advanced of its lines not canceled; canceled when all are. */
export function batchStatus(lines: Array<{ status: string }>): PayoutStatus {
  const live = lines.filter((l) => l.status !== 'canceled');
  if (live.length === 0) return 'canceled';
  return PAYOUT_STATUSES[Math.min(...live.map((l) => PAYOUT_STATUSES.indexOf(l.status as PayoutStatus)))]!;
}

/** A payout with its lines (each with its payment request when `withLines`; QR codes when `qr`). */
export async function presentPayout(d: PresentDeps, p: PayoutRow, lines: LineRow[], o: { withLines: boolean; qr: boolean }): Promise<Payout> {
  const away = new NodeAway();
  const entries = o.withLines ? await Promise.all(lines.map((l) => presentLine(d, p, l, o.qr, away))) : [];
  away.tell(d, p);
  return {
    payout_id: p.payout_id, status: batchStatus(lines), ...approvalOf(p),
    lines: entries, line_count: lines.length,
    created_at: p.created_at, updated_at: p.updated_at,
  };
}

/** A refund: its one line, its order, and its link (the URL only when just made: the token is kept hashed). */
export async function presentRefund(
  d: PresentDeps, p: PayoutRow, line: LineRow, order: { payment_id: string; order_id: string },
  link: { row: LinkRow | undefined; url?: string }, qr: boolean,
): Promise<Refund> {
  const { line: _n, ...rest } = await presentLine(d, p, line, qr);
  return {
    refund_id: p.payout_id, payment_id: order.payment_id, order_id: order.order_id, amount_kind: p.refund_amount as Refund['amount_kind'],
    ...approvalOf(p), ...rest,
    refund_link: link.row ? { url: link.url ?? null, expires_at: link.row.expires_at, claimed: link.row.claimed_at !== null } : null,
    created_at: p.created_at,
  };
}

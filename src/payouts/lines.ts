import type { Kysely } from 'kysely';
import type { Config } from '../config/index.js';
import type { Database, Environment, Store, WatchedAddressRow } from '../store/index.js';
import { parseAddress } from '../watch/addresses.js';
import { watchesForPayout } from '../watch/watches.js';
import { toBaseUnits } from '../payments/amounts.js';
import { resolveAsset, type Asset } from '../payments/assets.js';
import { canonicalDecimal, isCurrency, priceToBaseUnits } from '../payments/fiat.js';
import type { LockedRate, RateSource } from '../payments/rates.js';
import type { PayoutLineInput } from '../wire/payouts.js';
import { PayoutError } from './rows.js';

/** A line checked against the catalog and config: what the insert writes. */
export interface CheckedLine {
  env: Environment;
  networkSlug: string;
  asset: Asset;
  address: { display: string; key: string } | null;
  amountRaw: bigint;
  price: { amount: string; currency: string; rate: LockedRate } | null;
  reference: string | null;
}

const invalid = (message: string) => new PayoutError('E_PAYOUT_INVALID', message);

/** The address on `env`, checked by the family's codec (network, prefix, checksum): a 400 naming `field`. */
export function checkAddress(env: Environment, input: string, field: string): { display: string; key: string } {
  try {
    return parseAddress(env, input);
  } catch (err) {
    throw invalid(`${field}: ${(err as Error).message}`);
  }
}

/** One payout line: network, asset, address, and an amount in the asset or a fiat price at a rate locked now. */
export async function checkLine(store: Store, config: Config, rates: RateSource, input: PayoutLineInput, at: string): Promise<CheckedLine> {
  const env = store.catalog.environmentBySlug(input.network);
  if (!env) throw invalid(`${at}.network: unknown network "${input.network}" (use a network slug such as "eth", or "{network}-{environment}")`);
  let asset: Asset;
  try {
    asset = resolveAsset(config, env, input.asset);
  } catch (err) {
    throw invalid(`${at}.asset: ${(err as Error).message}`);
  }
  const address = checkAddress(env, input.address, `${at}.address`);
  const reference = input.reference ?? null;
  if (input.amount !== undefined && input.price_amount !== undefined) throw invalid(`${at}.price_amount: give either amount or price_amount with price_currency, not both`);
  if (input.price_amount === undefined) {
    if (input.amount === undefined) throw invalid(`${at}.amount: is required (a decimal string in the asset), or give price_amount with price_currency`);
    return { env, networkSlug: input.network, asset, address, amountRaw: amountIn(input.amount, asset, `${at}.amount`), price: null, reference };
  }
  const currency = input.price_currency;
  if (currency === undefined || !isCurrency(currency)) throw invalid(`${at}.price_currency: must be an ISO 4217 currency code in capitals, such as "USD", with price_amount`);
  const amount = decimalIn(input.price_amount, `${at}.price_amount`);
  const rate = await rates.rate(asset.symbol.toUpperCase(), currency);
  return { env, networkSlug: input.network, asset, address, amountRaw: priceToBaseUnits(amount, rate.rate, asset.decimals), price: { amount, currency, rate }, reference };
}

export function amountIn(value: string, asset: Asset, field: string): bigint {
  try {
    return toBaseUnits(value, asset.decimals);
  } catch (err) {
    throw invalid(`${field}: ${(err as Error).message}`);
  }
}

export function decimalIn(value: string, field: string): string {
  try {
    return canonicalDecimal(value);
  } catch (err) {
    throw invalid(`${field}: ${(err as Error).message}`);
  }
}

/**
 * Inserts the lines (in chunks: 1,000 lines in one statement would pass SQLite's variable
 * limit) and, for those already awaiting payment, their watches through Address Watch's writer.
 * Returns the watches made, for the registry after the commit.
 */
export async function insertLines(
  trx: Kysely<Database>, p: { payoutPk: number; accountId: number; status: string; now: string }, lines: CheckedLine[],
): Promise<WatchedAddressRow[]> {
  const made: WatchedAddressRow[] = [];
  // The watches of a network's lines made together: a 1,000-line batch costs a few statements.
  const watchIds: Array<string | null> = lines.map(() => null);
  if (p.status === 'awaiting_payment') {
    const byEnv = new Map<number, number[]>();
    for (const [i, l] of lines.entries()) {
      if (!l.address) continue;
      const group = byEnv.get(l.env.id);
      if (group) group.push(i);
      else byEnv.set(l.env.id, [i]);
    }
    for (const idx of byEnv.values()) {
      const first = lines[idx[0]!]!;
      const watches = await watchesForPayout(trx, { accountId: p.accountId, env: first.env, networkSlug: first.networkSlug, createdAt: p.now }, idx.map((i) => lines[i]!.address!));
      for (const [k, w] of watches.entries()) {
        if (w.created && !made.includes(w.row)) made.push(w.row);
        watchIds[idx[k]!] = w.row.watch_id;
      }
    }
  }
  const rows = [];
  for (const [i, l] of lines.entries()) {
    const watchId = watchIds[i]!;
    rows.push({
      payout_pk: p.payoutPk, account_id: p.accountId, line_no: i + 1, network_environment_id: l.env.id, network: l.networkSlug,
      asset: l.asset.id, decimals: l.asset.decimals, address: l.address?.display ?? null, address_key: l.address?.key ?? null,
      amount_raw: l.amountRaw.toString(), price_amount: l.price?.amount ?? null, price_currency: l.price?.currency ?? null,
      rate: l.price?.rate.rate ?? null, rate_source: l.price?.rate.source ?? null, rate_at: l.price?.rate.at ?? null,
      reference: l.reference, status: p.status, lifecycle: p.status, seq: 0, watch_id: watchId, expected_tx: null,
      tx_hash: null, event_id: null, block_height: null, created_at: p.now, updated_at: p.now,
    });
  }
  for (let i = 0; i < rows.length; i += 100) await trx.insertInto('payout_lines').values(rows.slice(i, i + 100)).execute();
  return made;
}

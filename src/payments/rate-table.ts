import type { Kysely } from 'kysely';
import { PAIR_PATTERN, RATE_PATTERN } from '../config/payments.js';
import type { Database } from '../store/index.js';
import { RpcctlError } from '../util/errors.js';
import { isCurrency } from './fiat.js';

/** A rate the operator typed wrong (`rpcctl admin rates set`); the API never writes rates. */
export class RateInputError extends RpcctlError {
  readonly code = 'E_RATE_INPUT';
}

/** The rate table the static provider reads besides the config: written by `rpcctl admin rates set`. */
export async function setStoredRate(db: Kysely<Database>, asset: string, currency: string, rate: string, nowMs = Date.now()): Promise<{ asset: string; currency: string; rate: string; updated_at: string }> {
  const pair = `${asset.toUpperCase()}/${currency.toUpperCase()}`;
  if (!PAIR_PATTERN.test(pair)) throw new RateInputError(`${pair}: the asset is its symbol (1-12 letters, digits or dots, e.g. ETH, USDT) and the currency an ISO 4217 code (e.g. USD)`);
  const [a, c] = pair.split('/') as [string, string];
  if (!isCurrency(c)) throw new RateInputError(`${c}: not an ISO 4217 currency code (e.g. USD, EUR)`);
  if (!RATE_PATTERN.test(rate)) throw new RateInputError(`${rate}: a rate is a positive decimal such as 3000.00 (${c} per ${a})`);
  const row = { asset: a, currency: c, rate, updated_at: new Date(nowMs).toISOString() };
  await db.insertInto('payment_rates').values(row)
    .onConflict((oc) => oc.columns(['asset', 'currency']).doUpdateSet({ rate, updated_at: row.updated_at })).execute();
  return row;
}

export async function listStoredRates(db: Kysely<Database>) {
  return db.selectFrom('payment_rates').selectAll().orderBy('asset').orderBy('currency').execute();
}


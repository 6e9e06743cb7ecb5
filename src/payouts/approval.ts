import type { Kysely } from 'kysely';
import { parseDecimal } from '../payments/fiat.js';
import { getSettings } from '../payments/orders.js';
import { RateUnavailableError, type RateSource } from '../payments/rates.js';
import type { Database, Role, Store } from '../store/index.js';
import { getMember } from '../store/index.js';
import type { Approval } from '../wire/payouts.js';

/**
 * Who may move money out, and when a second person must agree. Owners create; a developer's
 * payout waits for an owner (`role`); above the account's `payouts_approval_over` (a payment
 * setting, off by default) an owner other than its maker must approve (`amount`). Until then
 * no payment request or PSBT is shown.
 */

/** The person behind a call: the member who made the key (or signed in to the cabinet), else the key. */
export interface Caller {
  id: string;
  label: string;
  role: Role;
}

export async function callerOf(store: Store, key: { id: string; member?: number | null; role: Role }): Promise<Caller> {
  if (key.member != null) {
    const member = await getMember(store, key.member);
    return { id: `member:${key.member}`, label: member?.email ?? `member ${key.member}`, role: key.role };
  }
  // A key no member made names no person (`rpcctl admin`, or made before members): all of them
  // are one maker, or whoever holds two such keys would approve their own payout.
  return { id: 'key:no-member', label: `API key ${key.id.slice(0, 8)}`, role: key.role };
}

export interface Threshold {
  amount: string;
  currency: string;
}

/** The account's approval threshold, or undefined when off. */
export async function thresholdOf(db: Kysely<Database>, accountId: number): Promise<Threshold | undefined> {
  return (await getSettings(db, accountId)).payouts_approval_over ?? undefined;
}

/** What a line is worth for the threshold: its amount in the asset, or a fiat price already given. */
export interface Valued {
  amountRaw: bigint;
  decimals: number;
  symbol: string;
  price?: { amount: string; currency: string };
}

const SCALE = 8;

/** `amountRaw` at `rate` (currency per unit) in units of 10^-8 of the currency, rounded up. */
function valueAt(amountRaw: bigint, decimals: number, rate: string): bigint {
  const r = parseDecimal(rate);
  const num = amountRaw * r.units * 10n ** BigInt(SCALE);
  const den = 10n ** BigInt(decimals + r.scale);
  return (num + den - 1n) / den;
}

function scaled(value: string): bigint {
  const d = parseDecimal(value);
  return d.scale <= SCALE ? d.units * 10n ** BigInt(SCALE - d.scale) : (d.units + 10n ** BigInt(d.scale - SCALE) - 1n) / 10n ** BigInt(d.scale - SCALE);
}

function text(units: bigint): string {
  const s = units.toString().padStart(SCALE + 1, '0');
  const frac = s.slice(-SCALE).replace(/0+$/, '');
  return `${s.slice(0, -SCALE)}${frac ? `.${frac}` : ''}`;
}

/** The lines' worth in the threshold's currency (a decimal string), or null when a rate is missing. */
export async function fiatTotal(rates: RateSource, lines: Valued[], currency: string): Promise<string | null> {
  let total = 0n;
  for (const l of lines) {
    if (l.price && l.price.currency === currency) {
      total += scaled(l.price.amount);
      continue;
    }
    try {
      total += valueAt(l.amountRaw, l.decimals, (await rates.rate(l.symbol.toUpperCase(), currency)).rate);
    } catch (err) {
      if (err instanceof RateUnavailableError) return null;
      throw err;
    }
  }
  return text(total);
}

/** Whether and why a new payout waits for approval: a developer's always; above the threshold (or unpriced), an owner's too. */
export function approvalFor(caller: Caller, threshold: Threshold | undefined, total: string | null): { approval: Approval; reason: 'role' | 'amount' | null } {
  if (caller.role !== 'owner') return { approval: 'awaiting', reason: 'role' };
  if (!threshold) return { approval: 'not_needed', reason: null };
  if (total === null || scaled(total) > scaled(threshold.amount)) return { approval: 'awaiting', reason: 'amount' };
  return { approval: 'not_needed', reason: null };
}

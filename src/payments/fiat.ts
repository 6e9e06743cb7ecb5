import { RpcctlError } from '../util/errors.js';

/**
 * Fiat prices in exact integer arithmetic: a price and a rate are decimal strings, and the
 * order's amount in base units is their quotient rounded up, so the merchant is never paid
 * less than the price at the locked rate. No float ever holds a price, a rate or an amount.
 */
export class DecimalError extends RpcctlError {
  readonly code = 'E_AMOUNT';
}

/** A decimal as an integer and a power of ten: "12.50" → { units: 1250n, scale: 2 }. */
interface Decimal {
  units: bigint;
  scale: number;
}

const DECIMAL = /^(\d{1,30})(?:\.(\d{1,30}))?$/;

/** Parses a positive decimal string (digits, at most one dot, no sign or exponent). */
export function parseDecimal(value: string): Decimal {
  const m = DECIMAL.exec(value);
  if (!m) throw new DecimalError('must be a decimal string such as "12.50" (digits, at most one dot, no sign or exponent)');
  const frac = (m[2] ?? '').replace(/0+$/, '');
  const units = BigInt(m[1]! + frac);
  if (units <= 0n) throw new DecimalError('must be greater than 0');
  return { units, scale: frac.length };
}

/** The same number spelled one way ("10.010" and "10.01" are one price): no leading or trailing zeros. */
export function canonicalDecimal(value: string): string {
  const { units, scale } = parseDecimal(value);
  if (scale === 0) return units.toString();
  const digits = units.toString().padStart(scale + 1, '0');
  return `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/**
 * `price` (currency) at `rate` (currency per asset unit) in the asset's base units, rounded
 * up: ceil(price / rate × 10^decimals).
 */
export function priceToBaseUnits(price: string, rate: string, decimals: number): bigint {
  const p = parseDecimal(price);
  const r = parseDecimal(rate);
  // price / rate × 10^d = (p.units / 10^p.scale) / (r.units / 10^r.scale) × 10^d
  const num = p.units * 10n ** BigInt(decimals + r.scale);
  const den = r.units * 10n ** BigInt(p.scale);
  return (num + den - 1n) / den;
}

/**
 * A JSON number from a rate source as a decimal string. JavaScript prints a parsed number in
 * its shortest round-trip form, which is the digits the source sent, except that it may use
 * an exponent (1.5e-7): that is spelled out here.
 */
export function numberToDecimal(n: number): string {
  if (!Number.isFinite(n)) throw new DecimalError('is not a finite number');
  const s = String(n);
  const m = /^(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const digits = m[1]! + (m[2] ?? '');
  const point = m[1]!.length + Number(m[3]);
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** ISO 4217 codes the runtime knows (Node's ICU: the current ones). */
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

export function isCurrency(code: string): boolean {
  return /^[A-Z]{3}$/.test(code) && CURRENCIES.has(code);
}

import { RpcctlError } from '../util/errors.js';
/**
 * Decimal strings to base units and back, in bigint only: `0.1 + 0.2` must be exactly 0.3
 * of a token, and an 18-decimal amount does not fit a double.
 */
export class AmountError extends RpcctlError {
  readonly code = 'E_AMOUNT';
}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** "1.5" with 18 decimals → 1500000000000000000n. Rejects more fraction digits than `decimals`, signs, exponents and zero. */
export function toBaseUnits(amount: string, decimals: number): bigint {
  const m = DECIMAL.exec(amount);
  if (!m) throw new AmountError('must be a decimal string such as "12.5" (digits, at most one dot, no sign or exponent)');
  const whole = m[1]!;
  const frac = (m[2] ?? '').replace(/0+$/, '');
  if (frac.length > decimals) throw new AmountError(`has more than ${decimals} decimal place${decimals === 1 ? '' : 's'} (the asset's decimals)`);
  const raw = BigInt(whole) * 10n ** BigInt(decimals) + (frac ? BigInt(frac.padEnd(decimals, '0')) : 0n);
  if (raw <= 0n) throw new AmountError('must be greater than 0');
  return raw;
}

/** 1500000000000000000n with 18 decimals → "1.5"; no trailing zeros, no exponent. */
export function fromBaseUnits(raw: bigint | string, decimals: number): string {
  const v = BigInt(raw);
  const neg = v < 0n;
  const abs = neg ? -v : v;
  const base = 10n ** BigInt(decimals);
  const whole = abs / base;
  const frac = decimals === 0 ? '' : (abs % base).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

/** Whether `received` covers `amount` less a tolerance in basis points (exact integer arithmetic). */
export function covers(received: bigint, amount: bigint, toleranceBps: number): boolean {
  return received * 10_000n >= amount * BigInt(10_000 - toleranceBps);
}

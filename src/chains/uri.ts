import type { PaymentUri } from './family.js';

/**
 * The address alone: for chains whose wallets agree on no payment URI (Tron; Stellar, whose
 * SEP-7 few wallets read), the customer types the amount the page shows.
 */
export const plainAddressUri: PaymentUri = async (request) => request.address;

/** 150000000n with 8 decimals → "1.5" (a URI's amount in units, no exponent, no trailing zeros). */
export function unitsOf(raw: bigint, decimals: number): string {
  const base = 10n ** BigInt(decimals);
  const frac = decimals === 0 ? '' : (raw % base).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${raw / base}${frac ? `.${frac}` : ''}`;
}

import type { PaymentUri } from '../family.js';
import { unitsOf } from '../uri.js';

/**
 * A Solana Pay transfer request: `solana:<recipient>?amount=<units>&spl-token=<mint>&reference=<key>
 * &label=…&message=…`, the amount in the asset's decimal units (SOL, not lamports), `spl-token`
 * only for a token, label and message URL-encoded (the specification's order of fields).
 */
export const solanaPayUri: PaymentUri = async ({ address, asset, amountRaw, decimals, reference, label, message }) => {
  const fields: Array<[string, string]> = [['amount', unitsOf(amountRaw, decimals)]];
  if (asset !== 'native') fields.push(['spl-token', asset]);
  if (reference) fields.push(['reference', reference]);
  if (label) fields.push(['label', label]);
  if (message) fields.push(['message', message]);
  return `solana:${address}?${fields.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}`;
};

import type { PaymentUri } from '../family.js';
import { unitsOf } from '../uri.js';

/** BIP21 schemes of the forks wallets know by their own name; any other network is Bitcoin's. */
const SCHEMES: Record<string, string> = { litecoin: 'litecoin', ltc: 'litecoin', dogecoin: 'dogecoin', doge: 'dogecoin' };

/** BIP21: `bitcoin:ADDRESS?amount=0.0015` (the amount in coins, not satoshis). */
export const bip21Uri: PaymentUri = async ({ env, address, amountRaw, decimals }) =>
  `${SCHEMES[env.network.slug] ?? 'bitcoin'}:${address}?amount=${unitsOf(amountRaw, decimals)}`;

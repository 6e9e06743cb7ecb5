import { randomBytes } from 'node:crypto';
import { getAddressDecoder } from '@solana/kit';
import type { OrderReference } from '../family.js';

/**
 * What a reference is watched under: base58 has no `:`, so no wallet's match key (its address)
 * can be a reference's.
 */
const REFERENCE_KEY = 'reference:';

/**
 * Solana Pay references: a fresh public key per order, 32 random bytes (almost surely no point
 * on the curve, so nobody holds a key for it; Solana Pay asks only that it be unique). The
 * customer's wallet adds it to the transfer instruction as a read-only account, so it is among
 * the transaction's account keys, where the scanner finds it and `getSignaturesForAddress` does.
 */
export const solanaReference: OrderReference = {
  create: () => getAddressDecoder().decode(randomBytes(32)),
  watchKey: (reference) => `${REFERENCE_KEY}${reference}`,
};

import { isAddress } from '@solana/kit';
import { InvalidAddressError, type ParsedAddress } from '../address.js';

/**
 * Solana addresses: base58 of a 32-byte ed25519 public key (a wallet) or of a program-derived
 * address (a token account, a mint). One spelling per key, so display and match key are the
 * same string; no case folding (base58 is case-sensitive).
 */
export function parseSolanaAddress(input: string): ParsedAddress {
  const s = input.trim();
  if (!/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(s)) throw new InvalidAddressError('must be a Solana address (32 to 44 base58 characters)');
  if (!isAddress(s)) throw new InvalidAddressError('is not a Solana address (its base58 is not 32 bytes)');
  return { display: s, key: s };
}

import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { getAddressDecoder } from '@solana/kit';
import { InvalidAddressError } from '../address.js';
import { parseSolanaAddress } from './address.js';

/** An ed25519 public key's address, encoded by kit's own codec (independent of the parser's check). */
function randomAddress(): string {
  const der = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' });
  return getAddressDecoder().decode(new Uint8Array(der.subarray(der.length - 32)));
}

describe('Solana addresses', () => {
  it('wallets, mints and the system program parse to themselves; surrounding blanks go', () => {
    for (const a of ['EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', '11111111111111111111111111111111', randomAddress()]) {
      expect(parseSolanaAddress(` ${a}\\n`.replace('\\n', '\n'))).toEqual({ display: a, key: a });
    }
  });

  it('random ed25519 keys round-trip', () => {
    for (let i = 0; i < 20; i++) {
      const a = randomAddress();
      expect(parseSolanaAddress(a).display).toBe(a);
    }
  });

  it('not base58, wrong length, or not 32 bytes: refused saying what a Solana address is', () => {
    const usdc = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
    for (const bad of ['', '0x52908400098527886E0F7030069857D2E4169EE7', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', `${usdc}1`, usdc.replace('E', '0'), usdc.toLowerCase(), 'z'.repeat(44)]) {
      expect(() => parseSolanaAddress(bad), bad).toThrow(InvalidAddressError);
      expect(() => parseSolanaAddress(bad), bad).toThrow(/Solana address/);
    }
  });
});

import { keccak_256 } from '@noble/hashes/sha3';
import { InvalidAddressError, type ParsedAddress } from '../address.js';

const HEX40 = /^0x[0-9a-fA-F]{40}$/;

/** EIP-55 mixed-case checksum of a 20-byte hex address. */
export function toChecksumAddress(address: string): string {
  const lower = address.slice(2).toLowerCase();
  const hash = keccak_256(new TextEncoder().encode(lower));
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0xf;
    const c = lower[i]!;
    out += nibble >= 8 ? c.toUpperCase() : c;
  }
  return out;
}

/**
 * Any case is accepted, but a mixed-case address must carry a valid EIP-55 checksum: mixed
 * case is how wallets write checksummed addresses, so a wrong one is a typo, not a style.
 */
export function parseEvmAddress(input: string): ParsedAddress {
  const s = input.trim();
  if (!HEX40.test(s)) throw new InvalidAddressError('must be a 20-byte hex address (0x followed by 40 hex digits)');
  const checksummed = toChecksumAddress(s);
  const body = s.slice(2);
  const mixed = body !== body.toLowerCase() && body !== body.toUpperCase();
  if (mixed && s !== checksummed) throw new InvalidAddressError(`has an invalid EIP-55 checksum (did you mean ${checksummed}?)`);
  return { display: checksummed, key: s.toLowerCase() };
}

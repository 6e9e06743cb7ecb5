import { keccak_256 } from '@noble/hashes/sha3';
import type { Environment } from '../store/index.js';
import { parseTronAddress } from './tron/address.js';
import { parseUtxoAddress } from './utxo/address.js';

/** An address as stored: `display` is what we return, `key` is what we match on. */
export interface ParsedAddress {
  display: string;
  key: string;
}

export class InvalidAddressError extends Error {
  readonly code = 'E_INVALID_ADDRESS';
}

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

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const ED25519_PUBLIC_KEY_VERSION = 6 << 3; // 'G'

/** Stellar account ids: StrKey `G...` (56 base32 chars: version, 32-byte key, CRC16-XModem). */
export function parseStellarAddress(input: string): ParsedAddress {
  const s = input.trim().toUpperCase();
  if (!/^G[A-Z2-7]{55}$/.test(s)) throw new InvalidAddressError('must be a Stellar account id (G followed by 55 base32 characters)');
  const bytes = base32Decode(s);
  if (bytes.length !== 35 || bytes[0] !== ED25519_PUBLIC_KEY_VERSION) throw new InvalidAddressError('is not a Stellar account id');
  const crc = crc16xmodem(bytes.subarray(0, 33));
  if (bytes[33] !== (crc & 0xff) || bytes[34] !== (crc >> 8)) throw new InvalidAddressError('has an invalid StrKey checksum');
  return { display: s, key: s };
}

function base32Decode(s: string): Uint8Array {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of s) {
    value = (value << 5) | BASE32.indexOf(ch);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Uint8Array.from(out);
}

function crc16xmodem(bytes: Uint8Array): number {
  let crc = 0;
  for (const b of bytes) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** An address given for a watch on `env`, validated by the environment's family. */
export function parseAddress(env: Environment, input: string): ParsedAddress {
  switch (env.network.family) {
    case 'stellar': return parseStellarAddress(input);
    case 'utxo': return parseUtxoAddress(env.addressFormat!, input);
    case 'tron': return parseTronAddress(input);
    default: return parseEvmAddress(input);
  }
}

import { InvalidAddressError, type ParsedAddress } from '../address.js';

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

import { sha256 } from '@noble/hashes/sha2';
import { createBase58check, hex } from '@scure/base';
import { InvalidAddressError, type ParsedAddress } from '../address.js';

const base58check = createBase58check(sha256);
/** Every Tron account address: 0x41 followed by the 20-byte account id. */
const TRON_PREFIX = 0x41;

/**
 * Tron addresses: base58check `T…` (what wallets show) or the hex form `41…` (what the HTTP
 * API answers by default). Returned as `T…`; matched on the lower-case hex form, which is
 * how blocks and transaction infos carry them.
 */
export function parseTronAddress(input: string): ParsedAddress {
  const s = input.trim();
  let bytes: Uint8Array;
  if (/^(0x)?41[0-9a-fA-F]{40}$/.test(s)) {
    bytes = hex.decode(s.replace(/^0x/, '').toLowerCase());
  } else if (/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(s)) {
    try {
      bytes = base58check.decode(s);
    } catch {
      throw new InvalidAddressError('has an invalid base58check checksum');
    }
  } else {
    throw new InvalidAddressError('must be a Tron address (T followed by 33 base58 characters, or 41 followed by 40 hex digits)');
  }
  if (bytes.length !== 21 || bytes[0] !== TRON_PREFIX) throw new InvalidAddressError('is not a Tron account address');
  return { display: base58check.encode(bytes), key: hex.encode(bytes) };
}

/** `T…` for the hex forms the API answers with: `41…` (21 bytes) or a 20-byte EVM-style id. */
export function tronBase58(hexAddress: string): string {
  const h = hexAddress.replace(/^0x/, '').toLowerCase();
  return base58check.encode(hex.decode(h.length === 40 ? `41${h}` : h));
}

/** The match key (lower-case `41…` hex) of an address the API reports in hex. */
export function tronKey(hexAddress: string): string {
  const h = hexAddress.replace(/^0x/, '').toLowerCase();
  return h.length === 40 ? `41${h}` : h;
}

import type { HDKey } from '@scure/bip32';
import { evmAddressOfPublicKey } from '../evm/derive.js';
import { checkIndex, parseXpub } from '../xpub.js';
import { parseTronAddress } from './address.js';

/**
 * The Tron address of child `0/index` of an account-level xpub (m/44'/195'/0'): Tron derives
 * secp256k1 keys as EVM chains do and writes the same 20-byte account id, prefixed 0x41 and
 * base58check-encoded (`T…`).
 */
export function tronAddressAt(xpub: string | HDKey, index: number): string {
  checkIndex(index);
  const key = typeof xpub === 'string' ? parseXpub(xpub) : xpub;
  const child = key.depth >= 4 ? key.deriveChild(index) : key.deriveChild(0).deriveChild(index);
  return parseTronAddress(`41${evmAddressOfPublicKey(child.publicKey!).slice(2)}`).display;
}


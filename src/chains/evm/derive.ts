import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';
import type { HDKey } from '@scure/bip32';
import { checkIndex, parseXpub } from '../xpub.js';
import { toChecksumAddress } from './address.js';

/**
 * The EVM address of non-hardened child `0/index` of an account-level xpub (m/44'/60'/0'):
 * the same address wallets show as account `index` of that seed. A key already at the
 * external-chain level (depth 4, m/44'/60'/0'/0) derives `index` directly.
 */
export function evmAddressAt(xpub: string | HDKey, index: number): string {
  checkIndex(index);
  const key = typeof xpub === 'string' ? parseXpub(xpub) : xpub;
  const child = key.depth >= 4 ? key.deriveChild(index) : key.deriveChild(0).deriveChild(index);
  return evmAddressOfPublicKey(child.publicKey!);
}

/** keccak256 of the uncompressed point (without its 0x04 prefix), last 20 bytes, EIP-55. */
export function evmAddressOfPublicKey(publicKey: Uint8Array): string {
  const uncompressed = secp256k1.ProjectivePoint.fromHex(publicKey).toRawBytes(false);
  const hash = keccak_256(uncompressed.subarray(1));
  return toChecksumAddress(`0x${Buffer.from(hash.subarray(12)).toString('hex')}`);
}


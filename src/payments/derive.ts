import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';
import { HDKey } from '@scure/bip32';
import { toChecksumAddress } from '../watch/addresses.js';

export class XpubError extends Error {
  readonly code = 'E_XPUB';
}

/** Version bytes of extended public keys we take: BIP32 mainnet `xpub` and testnet `tpub`. */
const PUBLIC_VERSIONS = [
  { public: 0x0488b21e, private: 0x0488ade4 },
  { public: 0x043587cf, private: 0x04358394 },
];

/**
 * Parses an extended public key. A private one (`xprv`/`tprv`) is refused: the service
 * derives addresses only and must never hold a key that can spend.
 */
export function parseXpub(xpub: string): HDKey {
  const s = xpub.trim();
  if (/^[xt]prv/.test(s)) throw new XpubError('is an extended PRIVATE key (xprv/tprv); give the extended public key (xpub) — the service never holds private keys');
  for (const versions of PUBLIC_VERSIONS) {
    try {
      const key = HDKey.fromExtendedKey(s, versions);
      if (key.privateKey) throw new XpubError('is an extended private key; give the extended public key (xpub)');
      return key;
    } catch (err) {
      if (err instanceof XpubError) throw err;
    }
  }
  throw new XpubError('is not a valid BIP32 extended public key (xpub... or tpub..., base58check)');
}

/**
 * The EVM address of non-hardened child `0/index` of an account-level xpub (m/44'/60'/0'):
 * the same address wallets show as account `index` of that seed. A key already at the
 * external-chain level (depth 4, m/44'/60'/0'/0) derives `index` directly.
 */
export function evmAddressAt(xpub: string | HDKey, index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= 0x80000000) throw new XpubError(`child index ${index} is outside the non-hardened range`);
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

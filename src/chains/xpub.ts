// Extended public keys shared by the families that derive order addresses (BIP32).
import { HDKey } from '@scure/bip32';
import { RpcctlError } from '../util/errors.js';

export class XpubError extends RpcctlError {
  readonly code = 'E_XPUB';
}

/** A valid key that cannot derive addresses on an environment (a mainnet key on a test network); the message says why. */
export class KeyMisfitError extends RpcctlError {
  readonly code = 'E_KEY_MISFIT';
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

export function checkIndex(index: number): void {
  if (!Number.isInteger(index) || index < 0 || index >= 0x80000000) throw new XpubError(`child index ${index} is outside the non-hardened range`);
}


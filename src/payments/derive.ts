import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';
import { HDKey } from '@scure/bip32';
import { p2pkh, p2sh, p2wpkh } from '@scure/btc-signer';
import type { Environment, UtxoAddressFormat } from '../store/index.js';
import { toChecksumAddress } from '../chains/evm/address.js';
import { parseTronAddress } from '../chains/tron/address.js';
import { RpcctlError } from '../util/errors.js';

export class XpubError extends RpcctlError {
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

/** SLIP-132 versions: what an extended public key says about the addresses of its wallet. */
type Script = 'wpkh' | 'sh-wpkh' | 'default';
const UTXO_VERSIONS: Array<{ prefix: string; public: number; private: number; testnet: boolean; script: Script }> = [
  { prefix: 'zpub', public: 0x04b24746, private: 0x04b2430c, testnet: false, script: 'wpkh' },
  { prefix: 'vpub', public: 0x045f1cf6, private: 0x045f18bc, testnet: true, script: 'wpkh' },
  { prefix: 'ypub', public: 0x049d7cb2, private: 0x049d7878, testnet: false, script: 'sh-wpkh' },
  { prefix: 'upub', public: 0x044a5262, private: 0x044a4e28, testnet: true, script: 'sh-wpkh' },
  { prefix: 'xpub', public: 0x0488b21e, private: 0x0488ade4, testnet: false, script: 'default' },
  { prefix: 'tpub', public: 0x043587cf, private: 0x04358394, testnet: true, script: 'default' },
];

/** A UTXO wallet's account key: which network its version names and which address type it derives. */
export interface UtxoXpub {
  key: HDKey;
  prefix: string;
  testnet: boolean;
  script: Script;
}

/**
 * zpub/vpub (BIP84 native segwit), ypub/upub (BIP49 P2SH-wrapped segwit) or xpub/tpub (which
 * say nothing of the script: native segwit, BIP84's, unless the chain has no segwit, then
 * P2PKH). Private versions are refused like xprv.
 */
export function parseUtxoXpub(xpub: string): UtxoXpub {
  const s = xpub.trim();
  if (/^[xtyuzv]prv/.test(s)) throw new XpubError(`is an extended PRIVATE key (${s.slice(0, 4)}); give the extended public key — the service never holds private keys`);
  for (const v of UTXO_VERSIONS) {
    try {
      const key = HDKey.fromExtendedKey(s, v);
      if (key.privateKey) throw new XpubError('is an extended private key; give the extended public key');
      return { key, prefix: v.prefix, testnet: v.testnet, script: v.script };
    } catch (err) {
      if (err instanceof XpubError) throw err;
    }
  }
  throw new XpubError('is not a valid extended public key (zpub/vpub, ypub/upub or xpub/tpub, base58check)');
}

/**
 * Why `x` cannot derive order addresses on `env` (undefined when it can). Every environment
 * but `mainnet` (testnet, signet, regtest) is a test chain and takes vpub/upub/tpub: a mainnet
 * key on a test chain (or the reverse) belongs to a wallet that would never look for the coins.
 */
export function utxoKeyFits(x: UtxoXpub, env: Environment): string | undefined {
  const testnetEnv = env.slug !== 'mainnet';
  if (x.testnet !== testnetEnv) {
    return `xpubs.utxo is a ${x.testnet ? 'test-network' : 'mainnet'} key (${x.prefix}); ${env.network.slug}-${env.slug} takes a ${testnetEnv ? 'test-network key (vpub, upub or tpub)' : 'mainnet key (zpub, ypub or xpub)'}`;
  }
  if (x.script !== 'default' && !env.addressFormat?.bech32) return `xpubs.utxo (${x.prefix}) derives segwit addresses, which ${env.network.slug} has not (give its xpub/tpub: P2PKH addresses)`;
  return undefined;
}

/**
 * The address of non-hardened child `0/index` (the external chain) of a UTXO account key
 * (m/84'/0'/0' for a zpub), in the chain's own prefixes. A key at the external-chain level
 * (depth 4) derives `index` directly.
 */
export function utxoAddressAt(x: UtxoXpub, format: UtxoAddressFormat, index: number): string {
  checkIndex(index);
  const child = x.key.depth >= 4 ? x.key.deriveChild(index) : x.key.deriveChild(0).deriveChild(index);
  const net = { bech32: format.bech32 ?? '', pubKeyHash: format.pub_key_hash, scriptHash: format.script_hash, wif: 0x80 };
  const script = x.script === 'default' ? (format.bech32 ? 'wpkh' : 'pkh') : x.script;
  if (script === 'pkh') return p2pkh(child.publicKey!, net).address!;
  if (script === 'sh-wpkh') return p2sh(p2wpkh(child.publicKey!, net), net).address!;
  return p2wpkh(child.publicKey!, net).address!;
}

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

function checkIndex(index: number): void {
  if (!Number.isInteger(index) || index < 0 || index >= 0x80000000) throw new XpubError(`child index ${index} is outside the non-hardened range`);
}

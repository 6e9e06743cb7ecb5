import { HDKey } from '@scure/bip32';
import { p2pkh, p2sh, p2wpkh } from '@scure/btc-signer';
import type { ChainEnvironment } from '../family.js';
import { checkIndex, XpubError } from '../xpub.js';
import type { UtxoAddressFormat } from './address.js';

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

/**
 * Where a key sits under its wallet's master key (BIP380 key origin, `[d34db33f/84'/1'/0']`):
 * what a PSBT's BIP32 derivations name so that a hardware wallet or Bitcoin Core recognises its
 * own inputs. An extended public key alone cannot tell it: its header carries only its parent's
 * fingerprint and its own child number.
 */
export interface KeyOrigin {
  /** The master key's fingerprint (first 4 bytes of HASH160 of its public key), big-endian. */
  fingerprint: number;
  /** From the master key to this key; hardened steps have bit 31 set. */
  path: number[];
}

/** A UTXO wallet's account key: which network its version names and which address type it derives. */
export interface UtxoXpub {
  key: HDKey;
  prefix: string;
  testnet: boolean;
  script: Script;
  /** As given before the key (`[fingerprint/path]xpub`); undefined when the settings gave the bare key. */
  origin: KeyOrigin | undefined;
}

const HARDENED = 0x80000000;
const ORIGIN = /^\[([0-9a-fA-F]{8})((?:\/\d+['hH]?)*)\]/;

/** `[fingerprint/path]` in front of a key, as descriptors and wallet exports write it; checked against the key's depth and child number. */
function parseOrigin(text: string, key: HDKey): KeyOrigin {
  const m = ORIGIN.exec(text)!;
  const path = m[2]!.split('/').slice(1).map((step) => {
    const hardened = /['hH]$/.test(step);
    const n = Number(hardened ? step.slice(0, -1) : step);
    if (!Number.isSafeInteger(n) || n >= HARDENED) throw new XpubError(`key origin step ${step} is out of range`);
    return hardened ? n + HARDENED : n;
  });
  if (path.length !== key.depth) throw new XpubError(`key origin [${m[1]}${m[2]}] names ${path.length} derivation steps but the key is at depth ${key.depth}`);
  if (path.length > 0 && path[path.length - 1] !== key.index) throw new XpubError(`key origin [${m[1]}${m[2]}] ends in another child number than the key's own (${key.index >= HARDENED ? `${key.index - HARDENED}'` : key.index})`);
  const fingerprint = Number.parseInt(m[1]!, 16);
  if (key.depth === 1 && key.parentFingerprint !== fingerprint) throw new XpubError(`key origin fingerprint ${m[1]} is not the key's parent's (${key.parentFingerprint.toString(16).padStart(8, '0')})`);
  if (key.depth === 0 && key.fingerprint !== fingerprint) throw new XpubError(`key origin fingerprint ${m[1]} is not the master key's own`);
  return { fingerprint, path };
}

/** The key without its origin (two settings naming the same key, one with its origin, derive the same addresses). */
export function bareUtxoKey(xpub: string): string {
  return xpub.trim().replace(ORIGIN, '');
}

/**
 * The key may be preceded by its origin, `[fingerprint/path]` (BIP380), which payout PSBTs need.
 * zpub/vpub (BIP84 native segwit), ypub/upub (BIP49 P2SH-wrapped segwit) or xpub/tpub (which
 * say nothing of the script: native segwit, BIP84's, unless the chain has no segwit, then
 * P2PKH). Private versions are refused like xprv.
 */
export function parseUtxoXpub(xpub: string): UtxoXpub {
  const text = xpub.trim();
  if (text.startsWith('[') && !ORIGIN.test(text)) throw new XpubError('has a key origin that is not [fingerprint/path] (8 hex digits, then /84\'/1\'/0\' and the like)');
  const s = bareUtxoKey(text);
  if (/^[xtyuzv]prv/.test(s)) throw new XpubError(`is an extended PRIVATE key (${s.slice(0, 4)}); give the extended public key — the service never holds private keys`);
  for (const v of UTXO_VERSIONS) {
    try {
      const key = HDKey.fromExtendedKey(s, v);
      if (key.privateKey) throw new XpubError('is an extended private key; give the extended public key');
      return { key, prefix: v.prefix, testnet: v.testnet, script: v.script, origin: s === text ? undefined : parseOrigin(text, key) };
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
export function utxoKeyFits(x: UtxoXpub, env: ChainEnvironment): string | undefined {
  const testnetEnv = env.slug !== 'mainnet';
  if (x.testnet !== testnetEnv) {
    return `xpubs.utxo is a ${x.testnet ? 'test-network' : 'mainnet'} key (${x.prefix}); ${env.network.slug}-${env.slug} takes a ${testnetEnv ? 'test-network key (vpub, upub or tpub)' : 'mainnet key (zpub, ypub or xpub)'}`;
  }
  if (x.script !== 'default' && !env.addressFormat?.bech32) return `xpubs.utxo (${x.prefix}) derives segwit addresses, which ${env.network.slug} has not (give its xpub/tpub: P2PKH addresses)`;
  return undefined;
}

/**
 * An order address's key: child `0/index` of an account key, `index` of an external-chain key
 * (depth 4). `chain` 1: the internal (change) chain, `1/index`, which only an account key has.
 */
export function utxoChildAt(x: UtxoXpub, index: number, chain: 0 | 1 = 0): { key: HDKey; steps: number[] } {
  checkIndex(index);
  if (chain === 1 && x.key.depth >= 4) throw new XpubError('is an external-chain key (depth 4): it has no internal chain');
  const steps = x.key.depth >= 4 ? [index] : [chain, index];
  return { key: steps.reduce((k, step) => k.deriveChild(step), x.key), steps };
}

/**
 * The BIP32 derivation of an order address's key as a PSBT names it: from the master key when
 * the settings gave the key origin; else rooted at the account key itself (its own fingerprint,
 * the path below it), as Bitcoin Core reports a descriptor key imported without an origin.
 */
export function utxoDerivationAt(x: UtxoXpub, index: number): { pubkey: Uint8Array; fingerprint: number; path: number[] } {
  const { key, steps } = utxoChildAt(x, index);
  const origin = x.origin ?? { fingerprint: x.key.fingerprint, path: [] };
  return { pubkey: key.publicKey!, fingerprint: origin.fingerprint, path: [...origin.path, ...steps] };
}

/** The output script type an account key derives on a chain: segwit where the chain has it, unless the key's version says otherwise. */
export function utxoScriptType(x: UtxoXpub, format: UtxoAddressFormat): 'pkh' | 'sh-wpkh' | 'wpkh' {
  return x.script === 'default' ? (format.bech32 ? 'wpkh' : 'pkh') : x.script;
}

/** btc-signer's payment (output script, address, P2SH redeem script) of order address `index`. */
export function utxoPaymentAt(x: UtxoXpub, format: UtxoAddressFormat, index: number, chain: 0 | 1 = 0): { script: Uint8Array; address: string; redeemScript?: Uint8Array } {
  const pub = utxoChildAt(x, index, chain).key.publicKey!;
  const net = { bech32: format.bech32 ?? '', pubKeyHash: format.pub_key_hash, scriptHash: format.script_hash, wif: 0x80 };
  const type = utxoScriptType(x, format);
  if (type === 'pkh') return { script: p2pkh(pub, net).script, address: p2pkh(pub, net).address! };
  if (type === 'wpkh') return { script: p2wpkh(pub, net).script, address: p2wpkh(pub, net).address! };
  const p = p2sh(p2wpkh(pub, net), net);
  return { script: p.script, address: p.address!, redeemScript: p.redeemScript! };
}

/**
 * The address of non-hardened child `0/index` (the external chain) of a UTXO account key
 * (m/84'/0'/0' for a zpub), in the chain's own prefixes. A key at the external-chain level
 * (depth 4) derives `index` directly.
 */
export function utxoAddressAt(x: UtxoXpub, format: UtxoAddressFormat, index: number): string {
  return utxoPaymentAt(x, format, index).address;
}


import { Address, OutScript } from '@scure/btc-signer';
import { hex } from '@scure/base';
import { InvalidAddressError, type ParsedAddress } from '../address.js';

/** A UTXO chain's address prefixes (Bitcoin Core's chainparams). */
export interface UtxoAddressFormat {
  bech32: string | null;
  pub_key_hash: number;
  script_hash: number;
}

type BtcNetwork = Parameters<typeof Address>[0];

const networks = new Map<string, BtcNetwork>();

/** btc-signer's network object for a chain's prefixes (wif is unused: we never handle keys). */
function network(f: UtxoAddressFormat): BtcNetwork {
  const id = `${f.bech32}:${f.pub_key_hash}:${f.script_hash}`;
  let n = networks.get(id);
  if (!n) networks.set(id, (n = { bech32: f.bech32 ?? '', pubKeyHash: f.pub_key_hash, scriptHash: f.script_hash, wif: 0x80 }));
  return n;
}

/**
 * P2PKH, P2SH (base58check) and segwit v0 / taproot (bech32 / bech32m) addresses of one
 * chain. The match key is the output script in hex: what a node reports for every output
 * (`scriptPubKey.hex`), whatever address form it prints, so matching never depends on the
 * node's address rendering (older Litecoin/Dogecoin nodes print `addresses[]`, newer ones
 * `address`). The display form is the canonical encoding (bech32 in lower case).
 */
export function parseUtxoAddress(format: UtxoAddressFormat, input: string): ParsedAddress {
  const s = input.trim();
  const net = network(format);
  const coder = Address(net);
  // BIP-173 allows an all-upper-case bech32 address (QR codes); it is the same address.
  const candidate = format.bech32 && s.toLowerCase().startsWith(`${format.bech32}1`) && s === s.toUpperCase() ? s.toLowerCase() : s;
  let decoded: ReturnType<typeof coder.decode>;
  try {
    decoded = coder.decode(candidate);
  } catch (err) {
    throw new InvalidAddressError(`is not a valid address on this network (${describe(format)}): ${(err as Error).message}`);
  }
  let script: Uint8Array;
  try {
    script = OutScript.encode(decoded);
  } catch {
    // A taproot program that is no point on the curve: coins sent there could never be spent.
    throw new InvalidAddressError('is a taproot address whose output key is not a valid public key');
  }
  return { display: coder.encode(decoded), key: hex.encode(script) };
}

function describe(f: UtxoAddressFormat): string {
  const parts = [`base58 version ${f.pub_key_hash}/${f.script_hash}`];
  if (f.bech32) parts.unshift(`${f.bech32}1… segwit`);
  return parts.join(' or ');
}

/** The match key of an output script the node reports. */
export function scriptKey(scriptHex: string): string {
  return scriptHex.toLowerCase();
}

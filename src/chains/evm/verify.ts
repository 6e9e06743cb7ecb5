// Checks a signed EVM payout transaction before rpcctl broadcasts it and records its hash.
//
//   verifyEvmTransaction(raw: string, expected: ExpectedTransfer): VerifiedTransaction   (throws PayoutTxError)
//
// `raw`: the signed transaction as `eth_sendRawTransaction` takes it (0x hex): legacy with
// EIP-155 replay protection, EIP-2930 (type 1) or EIP-1559 (type 2). It pays exactly one line
// (`expected.lines` has one): the native coin with `to` = the line's address, `value` = its
// amount and no calldata; an ERC-20 with `to` = the token contract, `value` 0 and calldata
// `transfer(line address, line amount)`, nothing more. Its chain id must be `expected.chainId`.
// The sender is recovered from the signature and returned (rpcctl knows no merchant's EVM
// wallet to compare it with; the node checks the nonce and balance when it is broadcast).
//
// Parsed with @noble/curves and @noble/hashes (dependencies already, for order addresses) and
// the RLP reader below, rather than viem, which would add 64 MB of dependencies for three
// transaction types; the unit tests check it against transactions viem signs.

import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';
import { hex } from '@scure/base';
import type { ExpectedLine, ExpectedTransfer, VerifiedTransaction } from '../family.js';
import { PayoutTxError } from '../payout-tx.js';
import { toChecksumAddress } from './address.js';

type Rlp = Uint8Array | Rlp[];

/** `transfer(address,uint256)`. */
const TRANSFER_SELECTOR = 'a9059cbb';

interface ParsedTx {
  chainId: bigint | undefined;
  nonce: bigint;
  to: string | undefined;
  value: bigint;
  data: Uint8Array;
  /** What was signed: keccak256 of it is the signature's message. */
  signingPayload: Uint8Array;
  yParity: number;
  r: bigint;
  s: bigint;
}

export function verifyEvmTransaction(raw: string, expected: ExpectedTransfer): VerifiedTransaction {
  const text = raw.trim();
  if (!/^(0x)?(?:[0-9a-fA-F]{2})+$/.test(text)) throw new PayoutTxError('E_TX_DECODE', 'is not a signed EVM transaction (0x hex, as eth_sendRawTransaction takes it)');
  const bytes = hex.decode(text.replace(/^0x/, '').toLowerCase());
  const tx = parseTransaction(bytes);
  if (tx.chainId === undefined) throw new PayoutTxError('E_TX_CHAIN', 'is signed without a chain id (pre-EIP-155): it could be replayed on any chain; sign it for this network');
  if (expected.chainId === undefined) throw new PayoutTxError('E_TX_CHAIN', 'the network\'s chain id is unknown');
  if (tx.chainId !== BigInt(expected.chainId)) throw new PayoutTxError('E_TX_CHAIN', `is signed for chain id ${tx.chainId}, not this network's ${expected.chainId}`);
  if (expected.lines.length !== 1) throw new PayoutTxError('E_TX_MISMATCH', `an EVM transaction pays one line; ${expected.lines.length} were given`);
  checkLine(tx, expected.lines[0]!);
  const from = sender(tx);
  // One transaction per sender and nonce confirms: a second with the same ones is a replacement.
  return { txHash: `0x${hex.encode(keccak_256(bytes))}`, raw: `0x${hex.encode(bytes)}`, from, spends: [`${from.toLowerCase()}:${tx.nonce}`] };
}

function checkLine(tx: ParsedTx, line: ExpectedLine): void {
  const want = line.address.toLowerCase();
  if (tx.to === undefined) throw new PayoutTxError('E_TX_MISMATCH', 'creates a contract instead of paying the line');
  if (line.token === undefined) {
    if (tx.to !== want) throw new PayoutTxError('E_TX_MISMATCH', `pays ${toChecksumAddress(tx.to)}, not the line's ${toChecksumAddress(want)}`);
    if (tx.value !== line.amountRaw) throw new PayoutTxError('E_TX_MISMATCH', `sends ${tx.value} wei, not the line's ${line.amountRaw}`);
    if (tx.data.length > 0) throw new PayoutTxError('E_TX_MISMATCH', 'carries calldata; a payment of the native coin has none');
    return;
  }
  const token = line.token.toLowerCase();
  if (tx.to !== token) throw new PayoutTxError('E_TX_MISMATCH', `calls ${toChecksumAddress(tx.to)}, not the token contract ${toChecksumAddress(token)}`);
  if (tx.value !== 0n) throw new PayoutTxError('E_TX_MISMATCH', `sends ${tx.value} wei of the native coin along with the token transfer`);
  const data = hex.encode(tx.data);
  if (data.length !== 8 + 64 * 2 || !data.startsWith(TRANSFER_SELECTOR)) throw new PayoutTxError('E_TX_MISMATCH', 'is not an ERC-20 transfer(address,uint256) call');
  const [toWord, amountWord] = [data.slice(8, 72), data.slice(72)];
  if (!toWord.startsWith('0'.repeat(24))) throw new PayoutTxError('E_TX_MISMATCH', 'has a transfer recipient that is not an address');
  const recipient = `0x${toWord.slice(24)}`;
  if (recipient !== want) throw new PayoutTxError('E_TX_MISMATCH', `transfers the token to ${toChecksumAddress(recipient)}, not the line's ${toChecksumAddress(want)}`);
  const amount = BigInt(`0x${amountWord}`);
  if (amount !== line.amountRaw) throw new PayoutTxError('E_TX_MISMATCH', `transfers ${amount} of the token's smallest unit, not the line's ${line.amountRaw}`);
}

function sender(tx: ParsedTx): string {
  try {
    const signature = new secp256k1.Signature(tx.r, tx.s).addRecoveryBit(tx.yParity);
    const pub = signature.recoverPublicKey(keccak_256(tx.signingPayload)).toRawBytes(false);
    return toChecksumAddress(`0x${hex.encode(keccak_256(pub.subarray(1)).subarray(12))}`);
  } catch (err) {
    throw new PayoutTxError('E_TX_UNSIGNED', `has no valid signature: ${(err as Error).message}`, { cause: err });
  }
}

/** Legacy (an RLP list), type 1 (EIP-2930) or type 2 (EIP-1559). */
function parseTransaction(bytes: Uint8Array): ParsedTx {
  const type = bytes[0]!;
  if (type >= 0xc0) return parseLegacy(list(decodeRlp(bytes), 9, 'legacy'));
  if (type !== 1 && type !== 2) throw new PayoutTxError('E_TX_DECODE', `is a type ${type} transaction; a payout takes legacy, type 1 or type 2 (EIP-1559)`);
  const fields = list(decodeRlp(bytes.subarray(1)), type === 2 ? 12 : 11, `type ${type}`);
  const unsigned = fields.slice(0, -3);
  const [yParity, r, s] = fields.slice(-3).map((f) => uint(f, 'signature'));
  if (yParity! > 1n) throw new PayoutTxError('E_TX_UNSIGNED', `has signature y-parity ${yParity}`);
  const at = type === 2 ? { to: 5, value: 6, data: 7 } : { to: 4, value: 5, data: 6 };
  return {
    chainId: uint(fields[0]!, 'chainId'),
    nonce: uint(fields[1]!, 'nonce'),
    to: address(fields[at.to]!),
    value: uint(fields[at.value]!, 'value'),
    data: bytesOf(fields[at.data]!, 'data'),
    signingPayload: new Uint8Array([type, ...encodeRlp(unsigned)]),
    yParity: Number(yParity), r: r!, s: s!,
  };
}

function parseLegacy(fields: Rlp[]): ParsedTx {
  const v = uint(fields[6]!, 'v');
  const [r, s] = [uint(fields[7]!, 'r'), uint(fields[8]!, 's')];
  const base = { nonce: uint(fields[0]!, 'nonce'), to: address(fields[3]!), value: uint(fields[4]!, 'value'), data: bytesOf(fields[5]!, 'data'), r, s };
  if (v === 27n || v === 28n) return { ...base, chainId: undefined, yParity: Number(v - 27n), signingPayload: encodeRlp(fields.slice(0, 6)) };
  if (v < 35n) throw new PayoutTxError('E_TX_UNSIGNED', `has signature v ${v}`);
  const chainId = (v - 35n) / 2n;
  const empty = new Uint8Array(0);
  return { ...base, chainId, yParity: Number((v - 35n) % 2n), signingPayload: encodeRlp([...fields.slice(0, 6), bigBytes(chainId), empty, empty]) };
}

function list(item: Rlp, length: number, what: string): Rlp[] {
  if (!Array.isArray(item) || item.length !== length) throw new PayoutTxError('E_TX_DECODE', `is not a signed ${what} transaction (${Array.isArray(item) ? `${item.length} fields, not ${length}` : 'not a list'})`);
  return item;
}

function bytesOf(item: Rlp, field: string): Uint8Array {
  if (Array.isArray(item)) throw new PayoutTxError('E_TX_DECODE', `field ${field} is a list`);
  return item;
}

function uint(item: Rlp, field: string): bigint {
  const b = bytesOf(item, field);
  if (b.length > 32) throw new PayoutTxError('E_TX_DECODE', `field ${field} is longer than 32 bytes`);
  return b.length === 0 ? 0n : BigInt(`0x${hex.encode(b)}`);
}

/** Lower-case 0x address; undefined for a contract creation (empty `to`). */
function address(item: Rlp): string | undefined {
  const b = bytesOf(item, 'to');
  if (b.length === 0) return undefined;
  if (b.length !== 20) throw new PayoutTxError('E_TX_DECODE', `field to has ${b.length} bytes, not 20`);
  return `0x${hex.encode(b)}`;
}

function bigBytes(n: bigint): Uint8Array {
  if (n === 0n) return new Uint8Array(0);
  const h = n.toString(16);
  return hex.decode(h.length % 2 ? `0${h}` : h);
}

/** One RLP item that fills `bytes` exactly. */
export function decodeRlp(bytes: Uint8Array): Rlp {
  const [item, end] = readItem(bytes, 0);
  if (end !== bytes.length) throw new PayoutTxError('E_TX_DECODE', `has ${bytes.length - end} bytes after the transaction`);
  return item;
}

function readItem(b: Uint8Array, at: number): [Rlp, number] {
  const need = (n: number) => {
    if (n > b.length) throw new PayoutTxError('E_TX_DECODE', 'ends inside an RLP item');
  };
  need(at + 1);
  const p = b[at]!;
  if (p < 0x80) return [b.subarray(at, at + 1), at + 1];
  const isList = p >= 0xc0;
  const short = isList ? 0xc0 : 0x80;
  let length: number;
  let start: number;
  if (p - short < 56) {
    length = p - short;
    start = at + 1;
  } else {
    const lengthBytes = p - short - 55;
    need(at + 1 + lengthBytes);
    length = Number(BigInt(`0x${hex.encode(b.subarray(at + 1, at + 1 + lengthBytes))}`));
    start = at + 1 + lengthBytes;
  }
  const end = start + length;
  need(end);
  if (!isList) return [b.subarray(start, end), end];
  const items: Rlp[] = [];
  for (let pos = start; pos < end;) {
    const [item, next] = readItem(b, pos);
    if (next > end) throw new PayoutTxError('E_TX_DECODE', 'has an RLP item longer than its list');
    items.push(item);
    pos = next;
  }
  return [items, end];
}

export function encodeRlp(item: Rlp): Uint8Array {
  if (!Array.isArray(item)) {
    if (item.length === 1 && item[0]! < 0x80) return item;
    return new Uint8Array([...lengthPrefix(item.length, 0x80), ...item]);
  }
  const body = item.map(encodeRlp);
  const length = body.reduce((n, b) => n + b.length, 0);
  const out = new Uint8Array(lengthPrefix(length, 0xc0).length + length);
  const prefix = lengthPrefix(length, 0xc0);
  out.set(prefix);
  let pos = prefix.length;
  for (const b of body) {
    out.set(b, pos);
    pos += b.length;
  }
  return out;
}

function lengthPrefix(length: number, short: number): Uint8Array {
  if (length < 56) return new Uint8Array([short + length]);
  const bytes = bigBytes(BigInt(length));
  return new Uint8Array([short + 55 + bytes.length, ...bytes]);
}

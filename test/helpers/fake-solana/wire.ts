import {
  type Address, type EncodedAccount, type Transaction,
  getBase58Decoder, getBase58Encoder, getBase64Decoder, getBase64Encoder,
  getCompiledTransactionMessageDecoder, getTransactionDecoder,
} from '@solana/kit';

/** Real nodes answer with these two strings (agave 2.2 on mainnet-beta in 2026). */
export const SOLANA_CORE_VERSION = '2.2.16';
export const FEATURE_SET = 3294202862;
export const LAMPORTS_PER_SIGNATURE = 5000n;
/** A blockhash is usable for this many blocks after the block that made it (MAX_PROCESSING_AGE). */
export const BLOCKHASH_VALID_BLOCKS = 150;
/** u64::MAX: what nodes report as `rentEpoch` of rent-exempt accounts. */
export const RENT_EPOCH_EXEMPT = 18446744073709551615n;

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PazHQxPXjHkqWSC';
export const ATA_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
export const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
export const MEMO_V1_PROGRAM = 'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo';
export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
export const ADDRESS_LOOKUP_TABLE_PROGRAM = 'AddressLookupTab1e1111111111111111111111111';

const b58enc = getBase58Encoder();
const b58dec = getBase58Decoder();
const b64enc = getBase64Encoder();
const b64dec = getBase64Decoder();

export const toBase58 = (bytes: Uint8Array | ReadonlyArray<number>): string => b58dec.decode(Uint8Array.from(bytes));
export const fromBase58 = (s: string): Uint8Array => Uint8Array.from(b58enc.encode(s));
export const toBase64 = (bytes: Uint8Array): string => b64dec.decode(bytes);
export const fromBase64 = (s: string): Uint8Array => Uint8Array.from(b64enc.encode(s));

/** A JSON-RPC error as the node sends it (`data` only where agave sends one). */
export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

export const invalidParams = (message: string) => new RpcError(-32602, message);
export const blockNotAvailable = (slot: number) => new RpcError(-32004, `Block not available for slot ${slot}`);
export const slotSkipped = (slot: number) => new RpcError(-32007, `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`);
export const longTermSlotSkipped = (slot: number) => new RpcError(-32009, `Slot ${slot} was skipped, or missing in long-term storage`);
export const blockCleanedUp = (slot: number, first: number) =>
  new RpcError(-32001, `Block ${slot} cleaned up, does not exist on node. First available block: ${first}`);
export const nodeUnhealthy = (behind: number | null) =>
  new RpcError(-32005, behind === null ? 'Node is unhealthy' : `Node is behind by ${behind} slots`, { numSlotsBehind: behind });
export const unsupportedVersion = (v: number) => new RpcError(-32015,
  `Transaction version (${v}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${v}`);
export const minContextSlotNotReached = (contextSlot: number) =>
  new RpcError(-32016, 'Minimum context slot has not been reached', { contextSlot });

/**
 * JSON with u64 values exact: bigints are written as bare numbers (rentEpoch is u64::MAX on real
 * nodes, beyond a double), everything else as JSON.stringify would.
 */
export function stringify(value: unknown): string {
  let any = false;
  const text = JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v !== 'bigint') return v;
    any = true;
    return `${BIGINT_MARK}${v.toString()}`;
  });
  return any ? text.replace(BIGINT_RE, '$1') : text;
}

const BIGINT_MARK = '~fake-solana-u64~';
const BIGINT_RE = /"~fake-solana-u64~(-?\d+)"/g;

export interface AccountKey { pubkey: string; signer: boolean; writable: boolean; source: 'transaction' | 'lookupTable' }

export interface CompiledIx { programIdIndex: number; accounts: number[]; data: Uint8Array }

/** A transaction as it came off the wire, decoded with kit's own codecs. */
export interface DecodedTx {
  wire: Uint8Array;
  tx: Transaction;
  signature: string;
  signatures: string[];
  version: 'legacy' | 0;
  header: { numRequiredSignatures: number; numReadonlySignedAccounts: number; numReadonlyUnsignedAccounts: number };
  staticKeys: string[];
  recentBlockhash: string;
  instructions: CompiledIx[];
  lookups: Array<{ accountKey: string; writableIndexes: number[]; readonlyIndexes: number[] }>;
}

export function decodeTransaction(wire: Uint8Array): DecodedTx {
  const tx = getTransactionDecoder().decode(wire);
  const msg = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  if (msg.version !== 'legacy' && msg.version !== 0) throw invalidParams(`unsupported transaction version ${String(msg.version)}`);
  const signatures = Object.values(tx.signatures).map((s) => (s ? toBase58(s) : toBase58(new Uint8Array(64))));
  const lookups = msg.version === 0 ? (msg.addressTableLookups ?? []) : [];
  return {
    wire, tx, signature: signatures[0]!, signatures, version: msg.version,
    header: {
      numRequiredSignatures: msg.header.numSignerAccounts,
      numReadonlySignedAccounts: msg.header.numReadonlySignerAccounts,
      numReadonlyUnsignedAccounts: msg.header.numReadonlyNonSignerAccounts,
    },
    staticKeys: [...msg.staticAccounts],
    recentBlockhash: String(msg.lifetimeToken),
    instructions: msg.instructions.map((ix) => ({
      programIdIndex: ix.programAddressIndex, accounts: [...(ix.accountIndices ?? [])], data: Uint8Array.from(ix.data ?? []),
    })),
    lookups: lookups.map((l) => ({ accountKey: l.lookupTableAddress, writableIndexes: [...l.writableIndexes], readonlyIndexes: [...l.readonlyIndexes] })),
  };
}

/** Base58 (legacy and `base58`) or base64 wire bytes, as sendTransaction/simulateTransaction take them. */
export function wireFrom(encoded: unknown, encoding: unknown): Uint8Array {
  if (typeof encoded !== 'string') throw invalidParams('invalid type: expected a string transaction');
  try {
    return encoding === 'base64' ? fromBase64(encoded) : fromBase58(encoded);
  } catch {
    throw invalidParams(`invalid transaction: failed to deserialize ${encoding === 'base64' ? 'base64' : 'base58'}`);
  }
}

/** Static keys plus those loaded from lookup tables, with their roles (agave's account_keys order). */
export function accountKeys(d: DecodedTx, readLookup: (table: string) => string[]): AccountKey[] {
  const n = d.staticKeys.length;
  const { numRequiredSignatures: sig, numReadonlySignedAccounts: roSig, numReadonlyUnsignedAccounts: roUnsig } = d.header;
  const keys: AccountKey[] = d.staticKeys.map((pubkey, i) => ({
    pubkey, signer: i < sig, writable: i < sig ? i < sig - roSig : i < n - roUnsig, source: 'transaction',
  }));
  const loadedW: string[] = [];
  const loadedR: string[] = [];
  for (const l of d.lookups) {
    const table = readLookup(l.accountKey);
    for (const i of l.writableIndexes) loadedW.push(table[i] ?? '');
    for (const i of l.readonlyIndexes) loadedR.push(table[i] ?? '');
  }
  for (const pubkey of loadedW) keys.push({ pubkey, signer: false, writable: true, source: 'lookupTable' });
  for (const pubkey of loadedR) keys.push({ pubkey, signer: false, writable: false, source: 'lookupTable' });
  return keys;
}

/** The addresses an address lookup table account holds (after its 56-byte header). */
export function lookupTableAddresses(data: Uint8Array): string[] {
  const out: string[] = [];
  for (let off = 56; off + 32 <= data.length; off += 32) out.push(toBase58(data.subarray(off, off + 32)));
  return out;
}

/** The fee the runtime charges: 5000 lamports a signature plus the compute-unit price times the limit. */
export function transactionFee(d: DecodedTx): bigint {
  let price = 0n;
  let limit: bigint | undefined;
  let others = 0;
  for (const ix of d.instructions) {
    const program = d.staticKeys[ix.programIdIndex];
    if (program !== COMPUTE_BUDGET_PROGRAM) { others++; continue; }
    const view = new DataView(ix.data.buffer, ix.data.byteOffset, ix.data.byteLength);
    if (ix.data[0] === 2 && ix.data.length >= 5) limit = BigInt(view.getUint32(1, true));
    if (ix.data[0] === 3 && ix.data.length >= 9) price = view.getBigUint64(1, true);
  }
  const units = limit ?? BigInt(Math.min(1_400_000, 200_000 * others));
  const priority = (price * units + 999_999n) / 1_000_000n;
  return LAMPORTS_PER_SIGNATURE * BigInt(d.header.numRequiredSignatures) + priority;
}

export type Encoding = 'base58' | 'base64' | 'jsonParsed' | 'binary' | 'json';

/** Account data in the encoding asked for; jsonParsed falls back to base64 where no parser applies. */
export function encodeAccountData(data: Uint8Array, encoding: string | undefined, parsed: () => unknown): unknown {
  switch (encoding) {
    case undefined:
    case 'binary':
      checkBase58Size(data);
      return toBase58(data);
    case 'base58':
      checkBase58Size(data);
      return [toBase58(data), 'base58'];
    case 'base64': return [toBase64(data), 'base64'];
    case 'jsonParsed': return parsed() ?? [toBase64(data), 'base64'];
    default: throw invalidParams(`Invalid params: unknown variant \`${String(encoding)}\`, expected one of \`binary\`, \`base58\`, \`base64\`, \`jsonParsed\`, \`base64+zstd\``);
  }
}

function checkBase58Size(data: Uint8Array): void {
  if (data.length > 128) throw new RpcError(-32600, 'Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.');
}

export function uiAccount(acc: EncodedAccount | null, encoding: string | undefined, parsed: (a: EncodedAccount) => unknown): unknown {
  if (!acc) return null;
  return {
    data: encodeAccountData(Uint8Array.from(acc.data), encoding, () => parsed(acc)),
    executable: acc.executable,
    lamports: acc.lamports,
    owner: acc.programAddress,
    rentEpoch: RENT_EPOCH_EXEMPT,
    space: acc.data.length,
  };
}

export function uiTokenAmount(amount: bigint, decimals: number): { amount: string; decimals: number; uiAmount: number; uiAmountString: string } {
  const s = amount.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, s.length - decimals);
  const frac = s.slice(s.length - decimals).replace(/0+$/, '');
  const uiAmountString = frac ? `${whole}.${frac}` : whole;
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}

export const asAddress = (s: string) => s as Address;

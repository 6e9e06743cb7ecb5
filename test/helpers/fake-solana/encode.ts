import type { ExecutedTx, FakeBlock, FakeSolanaChain, TxMeta } from './chain.js';
import { parseInstruction } from './parse.js';
import { type CompiledIx, invalidParams, toBase58, toBase64, unsupportedVersion } from './wire.js';

export type TxEncoding = 'json' | 'jsonParsed' | 'base64' | 'base58';
export type TransactionDetails = 'full' | 'signatures' | 'none' | 'accounts';

export function txEncoding(v: unknown): TxEncoding {
  if (v === undefined || v === null) return 'json';
  if (v === 'binary') return 'base58';
  if (v === 'json' || v === 'jsonParsed' || v === 'base64' || v === 'base58') return v;
  throw invalidParams(`Invalid params: unknown variant \`${String(v)}\`, expected one of \`binary\`, \`base64\`, \`base58\`, \`json\`, \`jsonParsed\``);
}

/** `maxSupportedTransactionVersion` absent: a v0 transaction is an error and no `version` field is written. */
function checkVersion(tx: ExecutedTx, max: number | undefined): void {
  if (tx.decoded.version === 0 && (max === undefined || max < 0)) throw unsupportedVersion(0);
}

const versionField = (tx: ExecutedTx, max: number | undefined) => (max === undefined ? {} : { version: tx.decoded.version });

function jsonIx(ix: CompiledIx, stackHeight: number | null) {
  return { programIdIndex: ix.programIdIndex, accounts: ix.accounts, data: toBase58(ix.data), stackHeight };
}

function parsedIx(chain: FakeSolanaChain, tx: ExecutedTx, ix: CompiledIx, stackHeight: number | null) {
  const keys = tx.keys.map((k) => k.pubkey);
  const programId = keys[ix.programIdIndex] ?? '';
  const accounts = ix.accounts.map((i) => keys[i] ?? '');
  const parsed = parseInstruction(programId, accounts, ix.data, (m) => chain.decimalsOf(m));
  return parsed ? { program: parsed.program, programId, parsed: parsed.parsed, stackHeight } : { accounts, data: toBase58(ix.data), programId, stackHeight };
}

function uiMeta(chain: FakeSolanaChain, tx: ExecutedTx, parsed: boolean): Record<string, unknown> {
  const m: TxMeta = tx.meta;
  const out: Record<string, unknown> = {
    computeUnitsConsumed: m.computeUnitsConsumed,
    err: m.err,
    fee: m.fee,
    innerInstructions: m.innerInstructions.map((g) => ({
      index: g.index,
      instructions: g.instructions.map((ix) => (parsed ? parsedIx(chain, tx, ix, ix.stackHeight) : jsonIx(ix, ix.stackHeight))),
    })),
    logMessages: m.logMessages,
    postBalances: m.postBalances,
    postTokenBalances: m.postTokenBalances,
    preBalances: m.preBalances,
    preTokenBalances: m.preTokenBalances,
    rewards: [],
    status: m.err === null ? { Ok: null } : { Err: m.err },
  };
  if (!parsed) {
    out.loadedAddresses = {
      writable: tx.keys.filter((k) => k.source === 'lookupTable' && k.writable).map((k) => k.pubkey),
      readonly: tx.keys.filter((k) => k.source === 'lookupTable' && !k.writable).map((k) => k.pubkey),
    };
  }
  if (m.returnData) out.returnData = { programId: m.returnData.programId, data: [toBase64(m.returnData.data), 'base64'] };
  return out;
}

function uiTransaction(chain: FakeSolanaChain, tx: ExecutedTx, encoding: TxEncoding): unknown {
  const d = tx.decoded;
  if (encoding === 'base64') return [toBase64(d.wire), 'base64'];
  if (encoding === 'base58') return [toBase58(d.wire), 'base58'];
  const lookups = d.version === 0 ? { addressTableLookups: d.lookups } : {};
  if (encoding === 'jsonParsed') {
    return {
      message: {
        accountKeys: tx.keys.map((k) => ({ pubkey: k.pubkey, signer: k.signer, source: k.source, writable: k.writable })),
        instructions: d.instructions.map((ix) => parsedIx(chain, tx, ix, null)),
        recentBlockhash: d.recentBlockhash,
        ...lookups,
      },
      signatures: d.signatures,
    };
  }
  return {
    message: { accountKeys: d.staticKeys, header: d.header, instructions: d.instructions.map((ix) => jsonIx(ix, null)), recentBlockhash: d.recentBlockhash, ...lookups },
    signatures: d.signatures,
  };
}

/** One transaction with its meta, as getTransaction and getBlock's `full` details write it. */
export function encodeTransactionWithMeta(chain: FakeSolanaChain, tx: ExecutedTx, encoding: TxEncoding, max: number | undefined): Record<string, unknown> {
  checkVersion(tx, max);
  return { meta: uiMeta(chain, tx, encoding === 'jsonParsed'), transaction: uiTransaction(chain, tx, encoding), ...versionField(tx, max) };
}

export function encodeGetTransaction(chain: FakeSolanaChain, tx: ExecutedTx, block: FakeBlock, encoding: TxEncoding, max: number | undefined): unknown {
  return { blockTime: block.blockTime, slot: tx.slot, ...encodeTransactionWithMeta(chain, tx, encoding, max) };
}

export function encodeBlock(chain: FakeSolanaChain, b: FakeBlock, o: { encoding: TxEncoding; details: TransactionDetails; rewards: boolean; max: number | undefined }): unknown {
  const out: Record<string, unknown> = {
    blockHeight: b.blockHeight, blockTime: b.blockTime, blockhash: b.blockhash, parentSlot: b.parentSlot, previousBlockhash: b.previousBlockhash,
  };
  if (o.rewards) out.rewards = [];
  if (o.details === 'signatures') out.signatures = b.txs.map((t) => t.decoded.signature);
  if (o.details === 'full') out.transactions = b.txs.map((t) => encodeTransactionWithMeta(chain, t, o.encoding, o.max));
  if (o.details === 'accounts') {
    out.transactions = b.txs.map((t) => {
      checkVersion(t, o.max);
      const meta = uiMeta(chain, t, true);
      return {
        meta: { err: meta.err, fee: meta.fee, postBalances: meta.postBalances, postTokenBalances: meta.postTokenBalances, preBalances: meta.preBalances, preTokenBalances: meta.preTokenBalances, status: meta.status },
        transaction: { accountKeys: t.keys.map((k) => ({ pubkey: k.pubkey, signer: k.signer, source: k.source, writable: k.writable })), signatures: t.decoded.signatures },
        ...versionField(t, o.max),
      };
    });
  }
  return out;
}

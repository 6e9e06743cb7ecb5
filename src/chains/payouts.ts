// The family-neutral entry for payout transactions (issue 34): what the payouts feature calls,
// with no family's name in it. rpcctl never signs: it builds an unsigned transaction where it
// knows the merchant's coins (UTXO: a PSBT), checks what the merchant's wallet signed, and
// relays it through the network's upstreams.
//
//   verifySignedTransaction(family: string, raw: string, expected: ExpectedTransfer): VerifiedTransaction
//   buildUnsignedTransaction(family: string, adapter: ChainAdapter, request: UnsignedRequest): Promise<UnsignedTransaction>
//   broadcastTransaction(adapter: ChainAdapter, raw: string): Promise<string>
//   payoutFeeRate(adapter: ChainAdapter): Promise<number | undefined>
//   canVerifySignedTransactions(family: string) / canBuildUnsignedTransactions(family: string): boolean
//
// Every refusal is a `PayoutTxError` (codes in payout-tx.ts); a PSBT that cannot be built is a
// `PsbtError` (`E_PSBT_INVALID`, `E_PSBT_FUNDS`); a bad settings key an `XpubError`. `adapter`
// is the environment's `chainOf(family).scanner(upstreams)`.

import type { ChainAdapter, ExpectedTransfer, UnsignedRequest, UnsignedTransaction, VerifiedTransaction } from './family.js';
import { chainOf } from './index.js';
import { PayoutTxError } from './payout-tx.js';

const PAY_FROM_REQUEST = 'pay from the payment request (its address or URI) with any wallet; rpcctl sees the transfer on the chain';

export function canVerifySignedTransactions(family: string): boolean {
  return chainOf(family).payouts.verify !== undefined;
}

export function canBuildUnsignedTransactions(family: string): boolean {
  return chainOf(family).payouts.unsigned !== undefined;
}

/** Checks a signed transaction against the lines it must pay; returns its hash and raw form, or throws `PayoutTxError` saying what is wrong. */
export function verifySignedTransaction(family: string, raw: string, expected: ExpectedTransfer): VerifiedTransaction {
  const verify = chainOf(family).payouts.verify;
  if (!verify) throw new PayoutTxError('E_TX_UNSUPPORTED', `${expected.env.network.slug} takes no signed transactions: ${PAY_FROM_REQUEST}`);
  if (typeof raw !== 'string' || raw.trim() === '') throw new PayoutTxError('E_TX_DECODE', 'the signed transaction is empty');
  // A transaction checked against no line would pass with any outputs the change rule allows.
  if (expected.lines.length === 0) throw new PayoutTxError('E_TX_MISMATCH', 'there is no line to check the transaction against');
  return verify(raw, expected);
}

/** The unsigned transaction of a batch (UTXO: a PSBT spending the paid orders' coins). */
export function buildUnsignedTransaction(family: string, adapter: ChainAdapter, request: UnsignedRequest): Promise<UnsignedTransaction> {
  const unsigned = chainOf(family).payouts.unsigned;
  if (!unsigned) return Promise.reject(new PayoutTxError('E_TX_UNSUPPORTED', `rpcctl builds no unsigned transaction on ${request.env.network.slug}: ${PAY_FROM_REQUEST}`));
  return unsigned(adapter, request);
}

/** Relays a verified transaction (`VerifiedTransaction.raw`) through the environment's upstreams; returns the node's hash for it. */
export function broadcastTransaction(adapter: ChainAdapter, raw: string): Promise<string> {
  if (!adapter.broadcast) return Promise.reject(new PayoutTxError('E_TX_UNSUPPORTED', `this network takes no signed transactions from rpcctl: ${PAY_FROM_REQUEST}`));
  return adapter.broadcast(raw);
}

/** sat/vB the node suggests (UTXO); undefined where the family has no fee rate to choose. */
export function payoutFeeRate(adapter: ChainAdapter): Promise<number | undefined> {
  return adapter.feeRate ? adapter.feeRate() : Promise.resolve(undefined);
}

export { PayoutTxError, type PayoutTxCode } from './payout-tx.js';
export { PsbtError } from './utxo/psbt.js';
export { bareUtxoKey } from './utxo/derive.js';
export type { CoinSource, ExpectedLine, ExpectedTransfer, UnsignedRequest, UnsignedTransaction, UtxoOwnership, VerifiedTransaction } from './family.js';

// The one error of payout transactions (building aside: utxo/psbt.ts PsbtError). A leaf module:
// chains/<family>/ import it, and the family-neutral entry (chains/payouts.ts) re-exports it,
// so no import circle forms through chains/index.ts. The shapes are in family.ts.

import { RpcctlError } from '../util/errors.js';

/**
 * Why a signed transaction is refused (every code is the client's mistake, a 4xx, but `E_TX_UPSTREAM`):
 * - `E_TX_DECODE`: not a transaction of the family's forms at all (or a form it does not take);
 * - `E_TX_UNSIGNED`: a PSBT not finalized, an input without signature;
 * - `E_TX_MISMATCH`: an expected line unpaid or paid another amount, an output to someone else;
 * - `E_TX_FOREIGN_INPUTS`: spends coins that are not the merchant's (a PSBT from another wallet);
 * - `E_TX_CHAIN`: signed for another chain (EVM chain id), or for none (pre-EIP-155);
 * - `E_TX_UNSUPPORTED`: the family takes no signed transactions: pay from the payment request;
 * - `E_TX_REJECTED`: the node refused to relay it (spent inputs, fee too low): its message says why;
 * - `E_TX_UPSTREAM`: no upstream answered the broadcast (the service's side: 502/503).
 */
export class PayoutTxError extends RpcctlError {
  readonly code: 'E_TX_DECODE' | 'E_TX_UNSIGNED' | 'E_TX_MISMATCH' | 'E_TX_FOREIGN_INPUTS' | 'E_TX_CHAIN' | 'E_TX_UNSUPPORTED' | 'E_TX_REJECTED' | 'E_TX_UPSTREAM';
  constructor(code: PayoutTxCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

export type PayoutTxCode = PayoutTxError['code'];

// Unsigned payout transactions for UTXO networks: a BIP174 PSBT that spends the merchant's coins
// (outputs paid to order addresses derived from the settings' xpub) to a batch of payout lines,
// for the merchant's own wallet to sign. rpcctl holds no private key, so it never signs.
//
//   buildPayoutPsbt(request: PsbtRequest): BuiltPsbt     (throws PsbtError)
//
// Every input carries `witnessUtxo` (segwit) and `nonWitnessUtxo` (the whole funding transaction:
// required for P2PKH inputs, and hardware wallets ask it for segwit v0 ones too since the
// fee-overpayment attack of 2020) and its BIP32 derivation; the change output carries its
// derivation as well, so the signing wallet shows it as its own rather than as a payment. Inputs
// signal BIP125 replaceability (`RBF_SEQUENCE`), so the merchant's wallet can bump the fee.
//
// Coin selection: largest coins first until the lines and the fee at `feeRate` are covered
// (btc-signer's `accumBiggest`); what is left over goes to the change address unless it is dust,
// which then adds to the fee. Inputs and outputs keep their order (no BIP69): outputs are the
// lines in the order given, then the change.
//
// Change: the order address at `changeIndex` (`0/changeIndex`, the same chain orders use, so any
// wallet watching the order addresses sees the change). The caller must reserve that index the way
// an order reserves its own (advance the settings' `next_index_utxo` past it) before showing the
// PSBT; `BuiltPsbt.change.index` echoes it.

import { hex, base64 } from '@scure/base';
import { Address, selectUTXO, type Transaction } from '@scure/btc-signer';
import { RpcctlError } from '../../util/errors.js';
import type { UtxoAddressFormat } from './address.js';
import { parseUtxoXpub, utxoDerivationAt, utxoPaymentAt, utxoScriptType, type UtxoXpub } from './derive.js';

/** One unspent output paid to an order address, as `findCoins` (coins.ts) reports it. */
export interface UtxoCoin {
  txid: string;
  vout: number;
  amountSats: bigint;
  /** The output script, hex: checked against the script derived at `index`. */
  script: string;
  /** The order address's child index (the order's `derivation_index`). */
  index: number;
  /** The funding transaction, hex (the PSBT's `nonWitnessUtxo`). */
  rawTx: string;
}

/** One payment of a payout batch: `amountSats` (> 0) to `address`. */
export interface PayoutLine {
  address: string;
  amountSats: bigint;
}

export interface PsbtRequest {
  /** The settings' `xpubs.utxo`, ideally with its key origin (`[fingerprint/path]vpub…`). */
  xpub: string;
  /** The network environment's address prefixes. */
  format: UtxoAddressFormat;
  coins: UtxoCoin[];
  lines: PayoutLine[];
  /** Satoshis per virtual byte (`feeRate()` of the adapter, or the merchant's own); whole sat/vB, at least 1. */
  feeRate: number;
  /** A child index no order uses, reserved by the caller (see above). */
  changeIndex: number;
}

export interface BuiltPsbt {
  /** BIP174, base64: what a wallet's "load PSBT" takes. */
  psbt: string;
  /** The coins spent, in input order. */
  inputs: Array<{ txid: string; vout: number; amountSats: bigint }>;
  feeSats: bigint;
  /** Undefined when what was left over was dust (it went to the fee). */
  change: { address: string; index: number; amountSats: bigint } | undefined;
  /** The signed transaction's estimated virtual size. */
  vsize: number;
}

/** Why no PSBT can be built; `E_PSBT_FUNDS`: the coins do not cover the lines and the fee. */
export class PsbtError extends RpcctlError {
  readonly code: 'E_PSBT_INVALID' | 'E_PSBT_FUNDS';
  constructor(code: PsbtError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

type BtcNetwork = Parameters<typeof Address>[0];

/**
 * Every input's nSequence: BIP125's opt-in to replacement. A payout takes a second transaction
 * only as a fee bump of the first (payouts/submit.ts), and a node without full RBF (Bitcoin Core
 * before 28; Litecoin Core with `-mempoolreplacement=1`, off by default) relays a replacement
 * only of a transaction that signalled it: with btc-signer's default (0xffffffff) a payout stuck
 * at a low fee could never be bumped. Below 0xfffffffe, so lockTime (0) stays unenforced.
 */
export const RBF_SEQUENCE = 0xfffffffd;

export function btcNetwork(format: UtxoAddressFormat): BtcNetwork {
  return { bech32: format.bech32 ?? '', pubKeyHash: format.pub_key_hash, scriptHash: format.script_hash, wif: 0x80 };
}

export function buildPayoutPsbt(request: PsbtRequest): BuiltPsbt {
  const x = parseUtxoXpub(request.xpub);
  const network = btcNetwork(request.format);
  if (request.lines.length === 0) throw new PsbtError('E_PSBT_INVALID', 'a payout transaction needs at least one line');
  if (!Number.isFinite(request.feeRate) || request.feeRate < 1) throw new PsbtError('E_PSBT_INVALID', `fee rate ${request.feeRate} sat/vB is below 1`);
  const outputs = request.lines.map((line, i) => {
    if (line.amountSats <= 0n) throw new PsbtError('E_PSBT_INVALID', `line ${i + 1}: amount must be positive`);
    try {
      Address(network).decode(line.address);
    } catch (err) {
      throw new PsbtError('E_PSBT_INVALID', `line ${i + 1}: ${line.address} is not an address of this network (${(err as Error).message})`);
    }
    return { address: line.address, amount: line.amountSats };
  });
  const taken = request.coins.find((c) => c.index === request.changeIndex);
  if (taken) throw new PsbtError('E_PSBT_INVALID', `change index ${request.changeIndex} is an order's address (coin ${taken.txid}:${taken.vout}); reserve an unused one`);
  const change = utxoPaymentAt(x, request.format, request.changeIndex);
  const selected = selectUTXO(request.coins.map((c) => coinInput(x, request.format, c)), outputs, 'accumBiggest', {
    feePerByte: BigInt(Math.ceil(request.feeRate)),
    changeAddress: change.address,
    network,
    bip69: false,
    createTx: true,
  });
  if (!selected?.tx) {
    const have = request.coins.reduce((s, c) => s + c.amountSats, 0n);
    const want = request.lines.reduce((s, l) => s + l.amountSats, 0n);
    throw new PsbtError('E_PSBT_FUNDS', `the merchant's coins (${have} sats in ${request.coins.length}) do not cover ${want} sats and the fee at ${request.feeRate} sat/vB`);
  }
  const tx = selected.tx as Transaction;
  let changeOut: BuiltPsbt['change'];
  if (selected.change) {
    const at = tx.outputsLength - 1;
    const d = utxoDerivationAt(x, request.changeIndex);
    tx.updateOutput(at, { bip32Derivation: [[d.pubkey, { fingerprint: d.fingerprint, path: d.path }]] });
    changeOut = { address: change.address, index: request.changeIndex, amountSats: tx.getOutput(at).amount! };
  }
  const byOutpoint = new Map(request.coins.map((c) => [`${c.txid.toLowerCase()}:${c.vout}`, c.amountSats]));
  const inputs = Array.from({ length: tx.inputsLength }, (_, i) => {
    const input = tx.getInput(i);
    const txid = hex.encode(input.txid!);
    return { txid, vout: input.index!, amountSats: byOutpoint.get(`${txid}:${input.index!}`)! };
  });
  return { psbt: base64.encode(tx.toPSBT()), inputs, feeSats: selected.fee!, change: changeOut, vsize: Math.ceil(selected.weight / 4) };
}

/** A coin as a PSBT input, after checking it is paid to the key's address at its index. */
function coinInput(x: UtxoXpub, format: UtxoAddressFormat, coin: UtxoCoin) {
  const payment = utxoPaymentAt(x, format, coin.index);
  if (hex.encode(payment.script) !== coin.script.toLowerCase()) {
    throw new PsbtError('E_PSBT_INVALID', `coin ${coin.txid}:${coin.vout} is not paid to the address at child index ${coin.index} of the settings' key`);
  }
  const d = utxoDerivationAt(x, coin.index);
  return {
    txid: hex.decode(coin.txid.toLowerCase()),
    index: coin.vout,
    sequence: RBF_SEQUENCE,
    // BIP174: witness_utxo only for segwit inputs; a P2PKH input is signed over the whole previous transaction.
    ...(utxoScriptType(x, format) === 'pkh' ? {} : { witnessUtxo: { script: payment.script, amount: coin.amountSats } }),
    nonWitnessUtxo: hex.decode(coin.rawTx),
    ...(payment.redeemScript ? { redeemScript: payment.redeemScript } : {}),
    bip32Derivation: [[d.pubkey, { fingerprint: d.fingerprint, path: d.path }]] as [Uint8Array, { fingerprint: number; path: number[] }][],
  };
}

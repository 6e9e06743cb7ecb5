// Checks a signed UTXO payout transaction before rpcctl broadcasts it and records its hash.
//
//   verifyUtxoTransaction(raw: string, expected: ExpectedTransfer): VerifiedTransaction   (throws PayoutTxError)
//
// `raw`: a finalized PSBT (base64, as `finalizepsbt` prints it with `extract: false`, or any
// wallet's signed PSBT export) or the network's raw transaction in hex. It is accepted when:
// - every input is signed (a PSBT: finalized) and spends one of `expected.utxo.coins`, the coins
//   the merchant's paid orders received: anything else is another wallet's money;
// - every expected line is paid by an output of its own: to the line's address (same output
//   script), exactly its amount (two lines to one address need two outputs);
// - every other output is change to the merchant's own key: an address at `0/i` for `i` in
//   `expected.utxo.changeIndexes` (what rpcctl's PSBT uses), or on the key's internal chain
//   `1/i` for i < 100 (what a wallet that rebuilt the transaction uses). Nothing else.

import { base64, hex } from '@scure/base';
import { Address, OutScript, Transaction } from '@scure/btc-signer';
import type { ExpectedTransfer, VerifiedTransaction } from '../family.js';
import { PayoutTxError } from '../payout-tx.js';
import { parseUtxoAddress, type UtxoAddressFormat } from './address.js';
import { parseUtxoXpub, utxoPaymentAt, type UtxoXpub } from './derive.js';
import { btcNetwork } from './psbt.js';

/**
 * How far the internal (change) chain is searched for a rebuilt transaction's change: a
 * derivation costs about 1.5 ms, so the set is derived only when an output needs it and kept
 * for the last few keys.
 */
const INTERNAL_CHAIN_LIMIT = 100;
const KEYS_KEPT = 16;
const internalSets = new Map<string, Set<string>>();
const TX_OPTS = { allowUnknownOutputs: true, allowUnknownInputs: true, disableScriptCheck: true, allowLegacyWitnessUtxo: true };

export function verifyUtxoTransaction(raw: string, expected: ExpectedTransfer): VerifiedTransaction {
  const own = expected.utxo;
  const format = expected.env.addressFormat;
  if (!own || !format) throw new PayoutTxError('E_TX_DECODE', 'a UTXO transaction is checked against the merchant\'s key and coins; none were given');
  const tx = decode(raw.trim());
  const x = parseUtxoXpub(own.xpub);
  const coins = new Set(own.coins.map((c) => `${c.txid.toLowerCase()}:${c.vout}`));
  const spends: string[] = [];
  for (let i = 0; i < tx.inputsLength; i++) {
    const input = tx.getInput(i);
    const outpoint = `${hex.encode(input.txid!)}:${input.index}`;
    spends.push(outpoint);
    if (!coins.has(outpoint)) throw new PayoutTxError('E_TX_FOREIGN_INPUTS', `input ${i + 1} spends ${outpoint}, which is no coin of the merchant's paid orders: this transaction comes from another wallet`);
    if (!input.finalScriptWitness?.length && !input.finalScriptSig?.length) throw new PayoutTxError('E_TX_UNSIGNED', `input ${i + 1} (${outpoint}) is not signed`);
  }
  const outputs = Array.from({ length: tx.outputsLength }, (_, i) => {
    const o = tx.getOutput(i);
    return { script: hex.encode(o.script!), amount: o.amount!, used: false };
  });
  expected.lines.forEach((line, i) => {
    if (line.token !== undefined) throw new PayoutTxError('E_TX_MISMATCH', `line ${i + 1} names a token; this network has only its native coin`);
    const script = parseUtxoAddress(format, line.address).key;
    const out = outputs.find((o) => !o.used && o.script === script && o.amount === line.amountRaw);
    if (out) return void (out.used = true);
    const other = outputs.filter((o) => !o.used && o.script === script).map((o) => `${o.amount}`);
    throw new PayoutTxError('E_TX_MISMATCH', `line ${i + 1} (${line.amountRaw} sats to ${line.address}) is not paid: ${other.length ? `the transaction pays that address ${other.join(', ')} sats` : 'no output pays that address'}`);
  });
  const change: NonNullable<VerifiedTransaction['change']> = [];
  const isChange = changeMatcher(x, format, own.changeIndexes);
  for (const [i, o] of outputs.entries()) {
    if (o.used) continue;
    const address = addressOf(format, o.script);
    if (!isChange(o.script)) throw new PayoutTxError('E_TX_MISMATCH', `output ${i + 1} pays ${o.amount} sats to ${address}, which is neither a line of this payout nor a change address of the merchant's key`);
    change.push({ address, amountRaw: o.amount });
  }
  return { txHash: tx.id, raw: hex.encode(tx.toBytes(true, true)), change, spends };
}

/** A finalized PSBT (base64, or its hex) or a raw transaction (hex). */
function decode(text: string): Transaction {
  const isHex = /^(?:[0-9a-fA-F]{2})+$/.test(text);
  const bytes = isHex ? hex.decode(text) : tryBase64(text);
  if (!bytes) throw new PayoutTxError('E_TX_DECODE', 'is neither a PSBT (base64) nor a raw transaction (hex)');
  const psbt = bytes.length > 5 && hex.encode(bytes.subarray(0, 5)) === '70736274ff';
  try {
    if (!psbt) return Transaction.fromRaw(bytes, TX_OPTS);
    const tx = Transaction.fromPSBT(bytes, TX_OPTS);
    if (!tx.isFinal) throw new PayoutTxError('E_TX_UNSIGNED', 'the PSBT is not finalized: sign every input and finalize it (Bitcoin Core: walletprocesspsbt, then finalizepsbt)');
    return tx;
  } catch (err) {
    if (err instanceof PayoutTxError) throw err;
    throw new PayoutTxError('E_TX_DECODE', `is not a valid ${psbt ? 'PSBT' : 'raw transaction'}: ${(err as Error).message}`, { cause: err });
  }
}

function tryBase64(text: string): Uint8Array | undefined {
  try {
    return base64.decode(text);
  } catch {
    return undefined;
  }
}

/**
 * Whether an output script is one of the merchant's change addresses: the reserved `0/i` first,
 * then the internal chain, derived only when an output needs it (a thousand derivations).
 */
function changeMatcher(x: UtxoXpub, format: UtxoAddressFormat, indexes: readonly number[]): (script: string) => boolean {
  const reserved = new Set(indexes.map((i) => hex.encode(utxoPaymentAt(x, format, i).script)));
  return (script) => {
    if (reserved.has(script)) return true;
    // An external-chain key (depth 4) has no internal chain under it.
    if (x.key.depth >= 4) return false;
    return internalChain(x, format).has(script);
  };
}

function internalChain(x: UtxoXpub, format: UtxoAddressFormat): Set<string> {
  const id = `${x.key.publicExtendedKey}:${format.bech32}:${format.pub_key_hash}:${format.script_hash}`;
  let set = internalSets.get(id);
  if (!set) {
    set = new Set(Array.from({ length: INTERNAL_CHAIN_LIMIT }, (_, i) => hex.encode(utxoPaymentAt(x, format, i, 1).script)));
    if (internalSets.size >= KEYS_KEPT) internalSets.delete(internalSets.keys().next().value!);
    internalSets.set(id, set);
  }
  return set;
}

function addressOf(format: UtxoAddressFormat, script: string): string {
  try {
    return Address(btcNetwork(format)).encode(OutScript.decode(hex.decode(script)));
  } catch {
    return `script ${script}`;
  }
}

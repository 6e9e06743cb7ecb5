import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { base64, hex } from '@scure/base';
import { p2wpkh, RawTx, Transaction } from '@scure/btc-signer';
import { describe, expect, it } from 'vitest';
import type { ChainEnvironment, ExpectedTransfer } from '../family.js';
import { PayoutTxError } from '../payout-tx.js';
import { bareUtxoKey, parseUtxoXpub, utxoAddressAt, utxoPaymentAt } from './derive.js';
import { btcNetwork, buildPayoutPsbt, PsbtError, type UtxoCoin } from './psbt.js';
import { verifyUtxoTransaction } from './verify.js';

// BIP84's test vector ("abandon ... about"): master fingerprint 73c5da0a, account m/84'/1'/0'.
const MASTER = HDKey.fromMasterSeed(mnemonicToSeedSync('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'));
const VPUB = 'vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc';
const ORIGIN = "[73c5da0a/84'/1'/0']";
const LTC_REGTEST = { bech32: 'rltc', pub_key_hash: 111, script_hash: 58 };
const ENV: ChainEnvironment = { slug: 'regtest', network: { slug: 'litecoin', family: 'utxo' }, upstreams: [], addressFormat: LTC_REGTEST };
const H = 0x80000000;
const x = parseUtxoXpub(ORIGIN + VPUB);
const orderAddress = (i: number) => utxoAddressAt(x, LTC_REGTEST, i);
/** A stranger's address (another seed). */
const STRANGER = p2wpkh(HDKey.fromMasterSeed(new Uint8Array(32).fill(7)).derive('m/0').publicKey!, btcNetwork(LTC_REGTEST)).address!;
const STRANGER2 = p2wpkh(HDKey.fromMasterSeed(new Uint8Array(32).fill(8)).derive('m/0').publicKey!, btcNetwork(LTC_REGTEST)).address!;

/** A funding transaction paying `sats` to order address `index` (its input is made up: only its outputs matter). */
function coin(index: number, sats: bigint, salt: number): UtxoCoin {
  const funding = new Transaction({ allowUnknownInputs: true });
  funding.addOutput({ script: p2wpkh(MASTER.derive('m/0').publicKey!).script, amount: 1000n });
  funding.addOutputAddress(orderAddress(index), sats, btcNetwork(LTC_REGTEST));
  funding.addInput({ txid: new Uint8Array(32).fill(salt), index: 0, finalScriptSig: new Uint8Array([0x51]) });
  return { txid: funding.id, vout: 1, amountSats: sats, script: hex.encode(utxoPaymentAt(x, LTC_REGTEST, index).script), index, rawTx: hex.encode(funding.toBytes(true)) };
}

const COINS = [coin(0, 50_000_000n, 1), coin(1, 120_000_000n, 2), coin(2, 30_000_000n, 3)];
const LINES = [{ address: STRANGER, amountSats: 100_000_000n }, { address: STRANGER2, amountSats: 25_000_000n }];

/** What the merchant's wallet does: sign every input with the key its derivation names, finalize. */
function sign(psbt: string): Transaction {
  const tx = Transaction.fromPSBT(base64.decode(psbt));
  for (let i = 0; i < tx.inputsLength; i++) {
    const [, d] = tx.getInput(i).bip32Derivation![0]!;
    tx.signIdx(d.path.reduce((k, step) => k.deriveChild(step), MASTER).privateKey!, i);
  }
  tx.finalize();
  return tx;
}

const expectation = (lines = LINES.map((l) => ({ address: l.address, amountRaw: l.amountSats })), changeIndexes = [7]): ExpectedTransfer => ({
  env: ENV, lines, utxo: { xpub: ORIGIN + VPUB, coins: COINS.map((c) => ({ txid: c.txid, vout: c.vout })), changeIndexes },
});

function refused(run: () => unknown): PayoutTxError {
  try {
    run();
  } catch (err) {
    if (err instanceof PayoutTxError) return err;
    throw err;
  }
  throw new Error('accepted');
}

describe('UTXO payout PSBT', () => {
  it('reads a key origin before the key and checks it against the key', () => {
    expect(x.origin).toEqual({ fingerprint: 0x73c5da0a, path: [84 + H, 1 + H, 0 + H] });
    expect(MASTER.fingerprint).toBe(0x73c5da0a);
    expect(parseUtxoXpub(VPUB).origin).toBeUndefined();
    expect(bareUtxoKey(ORIGIN + VPUB)).toBe(VPUB);
    expect(orderAddress(0)).toBe(utxoAddressAt(parseUtxoXpub(VPUB), LTC_REGTEST, 0));
    expect(() => parseUtxoXpub(`[73c5da0a/84'/1']${VPUB}`)).toThrow(/2 derivation steps but the key is at depth 3/);
    expect(() => parseUtxoXpub(`[73c5da0a/84'/1'/1']${VPUB}`)).toThrow(/another child number/);
    expect(() => parseUtxoXpub(`[73c5da0a/84'/1'/0'${VPUB}`)).toThrow(/key origin/);
  });

  it('a 2-line batch: largest coins first, every input with witnessUtxo, nonWitnessUtxo and its BIP32 derivation, change at the reserved index', () => {
    const built = buildPayoutPsbt({ xpub: ORIGIN + VPUB, format: LTC_REGTEST, coins: COINS, lines: LINES, feeRate: 3, changeIndex: 7 });
    // 125_000_000 + fee: the 1.2 coin and then the 0.5 one; the 0.3 one stays.
    expect(built.inputs.map((i) => i.amountSats)).toEqual([120_000_000n, 50_000_000n]);
    const tx = Transaction.fromPSBT(base64.decode(built.psbt));
    expect(tx.inputsLength).toBe(2);
    for (let i = 0; i < 2; i++) {
      const input = tx.getInput(i);
      const c = COINS.find((k) => k.txid === hex.encode(input.txid!))!;
      expect(input.witnessUtxo).toEqual({ script: hex.decode(c.script), amount: c.amountSats });
      expect(hex.encode(RawTx.encode(input.nonWitnessUtxo!))).toBe(c.rawTx);
      const [pub, d] = input.bip32Derivation![0]!;
      expect(d).toEqual({ fingerprint: 0x73c5da0a, path: [84 + H, 1 + H, H, 0, c.index] });
      expect(hex.encode(pub)).toBe(hex.encode(MASTER.derive(`m/84'/1'/0'/0/${c.index}`).publicKey!));
      // BIP125's opt-in: a node without full RBF takes a fee bump of it only so.
      expect(input.sequence).toBe(0xfffffffd);
    }
    expect(tx.outputsLength).toBe(3);
    const outs = [0, 1, 2].map((i) => tx.getOutput(i));
    expect(outs.slice(0, 2).map((o) => o.amount)).toEqual([100_000_000n, 25_000_000n]);
    expect(built.change).toMatchObject({ address: orderAddress(7), index: 7 });
    expect(outs[2]!.amount).toBe(built.change!.amountSats);
    expect(outs[2]!.bip32Derivation![0]![1]).toEqual({ fingerprint: 0x73c5da0a, path: [84 + H, 1 + H, H, 0, 7] });
    expect(170_000_000n - 125_000_000n - built.change!.amountSats).toBe(built.feeSats);
    // 3 sat/vB over the estimated size.
    expect(built.feeSats).toBe(BigInt(built.vsize * 3));

    // Round trip: the signed, finalized PSBT is accepted, as a PSBT and as raw hex, with its change.
    const signed = sign(built.psbt);
    const verified = verifyUtxoTransaction(base64.encode(signed.toPSBT()), expectation());
    expect(verified.txHash).toBe(signed.id);
    expect(verified.change).toEqual([{ address: orderAddress(7), amountRaw: built.change!.amountSats }]);
    // What it spends, as the PSBT's inputs name their coins: a second transaction sharing one replaces it.
    expect([...verified.spends].sort()).toEqual(built.inputs.map((i) => `${i.txid}:${i.vout}`).sort());
    expect(verifyUtxoTransaction(hex.encode(signed.extract()), expectation()).txHash).toBe(signed.id);
  });

  it('without a key origin, derivations are rooted at the account key (its own fingerprint), as Bitcoin Core reports such a key', () => {
    const built = buildPayoutPsbt({ xpub: VPUB, format: LTC_REGTEST, coins: COINS, lines: LINES.slice(0, 1), feeRate: 1, changeIndex: 3 });
    const d = Transaction.fromPSBT(base64.decode(built.psbt)).getInput(0).bip32Derivation![0]![1];
    expect(d).toEqual({ fingerprint: MASTER.derive("m/84'/1'/0'").fingerprint, path: [0, 1] });
  });

  it('dust change goes to the fee; too little money and bad lines are refused', () => {
    const exact = buildPayoutPsbt({ xpub: VPUB, format: LTC_REGTEST, coins: [COINS[2]!], lines: [{ address: STRANGER, amountSats: 30_000_000n - 200n }], feeRate: 1, changeIndex: 3 });
    expect(exact.change).toBeUndefined();
    expect(exact.feeSats).toBe(200n);
    const funds = () => buildPayoutPsbt({ xpub: VPUB, format: LTC_REGTEST, coins: COINS, lines: [{ address: STRANGER, amountSats: 200_000_000n }], feeRate: 1, changeIndex: 3 });
    expect(funds).toThrow(PsbtError);
    expect(funds).toThrow(/do not cover 200000000 sats/);
    expect(() => buildPayoutPsbt({ xpub: VPUB, format: LTC_REGTEST, coins: COINS, lines: [{ address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', amountSats: 1n }], feeRate: 1, changeIndex: 3 })).toThrow(/line 1: .* is not an address of this network/);
    expect(() => buildPayoutPsbt({ xpub: VPUB, format: LTC_REGTEST, coins: [{ ...COINS[0]!, index: 5 }], lines: LINES, feeRate: 1, changeIndex: 3 })).toThrow(/not paid to the address at child index 5/);
    expect(() => buildPayoutPsbt({ xpub: VPUB, format: LTC_REGTEST, coins: COINS, lines: LINES, feeRate: 1, changeIndex: 1 })).toThrow(/change index 1 is an order's address/);
    expect(() => buildPayoutPsbt({ xpub: VPUB, format: LTC_REGTEST, coins: COINS, lines: LINES, feeRate: 0.5, changeIndex: 3 })).toThrow(/below 1/);
  });
});

describe('signed UTXO transaction check', () => {
  const built = buildPayoutPsbt({ xpub: ORIGIN + VPUB, format: LTC_REGTEST, coins: COINS, lines: LINES, feeRate: 2, changeIndex: 7 });

  /** The merchant's coins spent to `outputs`, signed. */
  function spend(outputs: Array<[address: string, sats: bigint]>, coins = COINS.slice(0, 2)): string {
    const tx = new Transaction();
    for (const c of coins) tx.addInput({ txid: c.txid, index: c.vout, witnessUtxo: { script: hex.decode(c.script), amount: c.amountSats } });
    for (const [address, sats] of outputs) tx.addOutputAddress(address, sats, btcNetwork(LTC_REGTEST));
    coins.forEach((c, i) => tx.signIdx(MASTER.derive(`m/84'/1'/0'/0/${c.index}`).privateKey!, i));
    tx.finalize();
    return hex.encode(tx.extract());
  }

  it('refuses a PSBT edited to pay another address, a line paid less, a payment to a stranger, an unsigned PSBT', () => {
    expect(refused(() => verifyUtxoTransaction(spend([[STRANGER, 100_000_000n], [orderAddress(3), 25_000_000n]]), expectation()))).toMatchObject({ code: 'E_TX_MISMATCH', message: expect.stringMatching(/line 2 \(25000000 sats to rltc1.*\) is not paid: no output pays that address/) });
    expect(refused(() => verifyUtxoTransaction(spend([[STRANGER, 99_000_000n], [STRANGER2, 25_000_000n]]), expectation()))).toMatchObject({ code: 'E_TX_MISMATCH', message: expect.stringMatching(/line 1 .* the transaction pays that address 99000000 sats/) });
    expect(refused(() => verifyUtxoTransaction(spend([[STRANGER, 100_000_000n], [STRANGER2, 25_000_000n], [STRANGER2, 1_000n]]), expectation()))).toMatchObject({ code: 'E_TX_MISMATCH', message: expect.stringMatching(/output 3 pays 1000 sats to rltc1.*neither a line of this payout nor a change address/) });
    expect(refused(() => verifyUtxoTransaction(built.psbt, expectation()))).toMatchObject({ code: 'E_TX_UNSIGNED', message: expect.stringMatching(/not finalized/) });
    expect(refused(() => verifyUtxoTransaction('not a transaction!', expectation()))).toMatchObject({ code: 'E_TX_DECODE' });
    expect(refused(() => verifyUtxoTransaction('cHNidP8BAAo=', expectation()))).toMatchObject({ code: 'E_TX_DECODE', message: expect.stringMatching(/not a valid PSBT/) });
  });

  it('accepts change to the reserved index or the internal chain only, and extra lines to the same address need outputs of their own', () => {
    const lines = [[STRANGER, 100_000_000n], [STRANGER2, 25_000_000n]] as Array<[string, bigint]>;
    expect(verifyUtxoTransaction(spend([...lines, [orderAddress(7), 40_000_000n]]), expectation()).change).toEqual([{ address: orderAddress(7), amountRaw: 40_000_000n }]);
    const internal = utxoPaymentAt(x, LTC_REGTEST, 12, 1).address;
    expect(verifyUtxoTransaction(spend([...lines, [internal, 40_000_000n]]), expectation()).change).toEqual([{ address: internal, amountRaw: 40_000_000n }]);
    // An order address not reserved as change is someone's order, not change.
    expect(refused(() => verifyUtxoTransaction(spend([...lines, [orderAddress(8), 40_000_000n]]), expectation())).code).toBe('E_TX_MISMATCH');
    const twice = [{ address: STRANGER, amountRaw: 5n * 10n ** 7n }, { address: STRANGER, amountRaw: 5n * 10n ** 7n }];
    expect(refused(() => verifyUtxoTransaction(spend([[STRANGER, 50_000_000n]]), expectation(twice))).message).toMatch(/line 2 .* no output pays that address/);
    expect(verifyUtxoTransaction(spend([[STRANGER, 50_000_000n], [STRANGER, 50_000_000n]]), expectation(twice)).change).toEqual([]);
  });

  it('refuses a transaction from another wallet: inputs that are not the merchant\'s coins', () => {
    const other = coin(0, 50_000_000n, 9);
    const raw = spend([[STRANGER, 100_000_000n], [STRANGER2, 25_000_000n]], [COINS[1]!, other]);
    expect(refused(() => verifyUtxoTransaction(raw, expectation()))).toMatchObject({ code: 'E_TX_FOREIGN_INPUTS', message: expect.stringMatching(/input 2 spends [0-9a-f]{64}:1, which is no coin of the merchant's paid orders/) });
  });
});

describe('every address type an account key derives', () => {
  // The same account as upub (BIP49 P2SH-wrapped segwit) and as tpub on a chain without segwit (P2PKH, Dogecoin's case).
  const account = MASTER.derive("m/84'/1'/0'");
  const cases = [
    { name: 'P2SH-P2WPKH (upub)', key: new HDKey({ versions: { public: 0x044a5262, private: 0x044a4e28 }, publicKey: account.publicKey!, chainCode: account.chainCode!, depth: 3, index: account.index, parentFingerprint: account.parentFingerprint }).publicExtendedKey, format: LTC_REGTEST },
    { name: 'P2PKH (tpub, no segwit)', key: new HDKey({ versions: { public: 0x043587cf, private: 0x04358394 }, publicKey: account.publicKey!, chainCode: account.chainCode!, depth: 3, index: account.index, parentFingerprint: account.parentFingerprint }).publicExtendedKey, format: { bech32: null, pub_key_hash: 113, script_hash: 196 } },
  ];
  for (const c of cases) {
    it(`${c.name}: built, signed by the key's holder, accepted`, () => {
      const xk = parseUtxoXpub(ORIGIN + c.key);
      const env = { ...ENV, addressFormat: c.format };
      const coins = [0, 1].map((index) => {
        const funding = new Transaction({ allowUnknownInputs: true });
        funding.addOutputAddress(utxoAddressAt(xk, c.format, index), 40_000_000n, btcNetwork(c.format));
        funding.addInput({ txid: new Uint8Array(32).fill(index + 20), index: 0, finalScriptSig: new Uint8Array([0x51]) });
        return { txid: funding.id, vout: 0, amountSats: 40_000_000n, script: hex.encode(utxoPaymentAt(xk, c.format, index).script), index, rawTx: hex.encode(funding.toBytes(true)) };
      });
      const to = utxoPaymentAt(parseUtxoXpub(VPUB), { ...c.format, bech32: 'rltc' }, 99);
      const payee = c.format.bech32 ? to.address : utxoAddressAt(parseUtxoXpub(ORIGIN + c.key), c.format, 99);
      const built = buildPayoutPsbt({ xpub: ORIGIN + c.key, format: c.format, coins, lines: [{ address: payee, amountSats: 50_000_000n }], feeRate: 2, changeIndex: 50 });
      const signed = sign(built.psbt);
      const input = Transaction.fromPSBT(base64.decode(built.psbt)).getInput(0);
      expect(input.witnessUtxo === undefined).toBe(!c.format.bech32);
      const verified = verifyUtxoTransaction(hex.encode(signed.extract()), { env, lines: [{ address: payee, amountRaw: 50_000_000n }], utxo: { xpub: c.key, coins, changeIndexes: [50] } });
      expect(verified.txHash).toBe(signed.id);
      expect(verified.change).toEqual([{ address: utxoAddressAt(xk, c.format, 50), amountRaw: built.change!.amountSats }]);
    });
  }
});

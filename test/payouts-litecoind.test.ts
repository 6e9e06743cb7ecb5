import { base64 } from '@scure/base';
import { Transaction } from '@scure/btc-signer';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chainOf } from '../src/chains/index.js';
import type { ChainAdapter, ChainEnvironment, CoinSource, ExpectedTransfer } from '../src/chains/family.js';
import { broadcastTransaction, buildUnsignedTransaction, PayoutTxError, payoutFeeRate, verifySignedTransaction } from '../src/chains/payouts.js';
import { parseUtxoAddress } from '../src/chains/utxo/address.js';
import { parseUtxoXpub, utxoAddressAt } from '../src/chains/utxo/derive.js';
import { haveLitecoind, importTestVectorWallet, LITECOIND_MISSING, startLitecoind, until, type Litecoind } from './helpers/litecoind.js';
import { describeUnless } from './helpers/skips.js';

/**
 * Payout transactions against a real wallet: Litecoin Core in regtest. The merchant's wallet holds
 * the private key of BIP84's test vector ("abandon ... about"), whose account key (m/84'/1'/0')
 * is the one the payments tests derive order addresses from, imported as descriptors with the
 * master tprv (so the wallet knows every key's origin); it signs rpcctl's PSBT with
 * `walletprocesspsbt`, which needs nothing from rpcctl but the PSBT. Debian's litecoind is built
 * without SQLite, so no descriptor wallet: a legacy wallet takes the same descriptors through
 * `importmulti` (private keys and their key origins alike).
 */

const VPUB = 'vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc';
/** The settings' key with its origin, as a wallet export (or `getdescriptorinfo`) writes it. */
const XPUB = `[73c5da0a/84'/1'/0']${VPUB}`;
const CHANGE_INDEX = 5;

describeUnless(!haveLitecoind && LITECOIND_MISSING, 'payout PSBTs signed by a real wallet (litecoind -regtest)', () => {
  let node: Litecoind;
  let env: ChainEnvironment;
  let adapter: ChainAdapter;
  let miner: string;
  const rpc = <T = any>(method: string, params: unknown[] = [], wallet?: string) => node.rpc<T>(method, params, wallet);
  const mine = (n: number) => rpc<string[]>('generatetoaddress', [n, miner]);
  const orderAddress = (i: number) => utxoAddressAt(parseUtxoXpub(VPUB), env.addressFormat!, i);

  beforeAll(async () => {
    node = await startLitecoind();
    const network = node.network();
    const e = network.environments[0]!;
    env = { slug: e.slug, network: { slug: network.slug, family: 'utxo' }, upstreams: e.upstreams!, addressFormat: e.address_format as ChainEnvironment['addressFormat'] };
    adapter = chainOf('utxo').scanner(env.upstreams);
    await rpc('createwallet', ['w']);
    miner = await rpc<string>('getnewaddress', ['', 'bech32'], 'w');
    await mine(101);
    // The merchant's wallet: blank, the master tprv's descriptors (Core then knows each key's origin).
    expect(await importTestVectorWallet(node, 'merchant')).toEqual([true, true]);
  }, 90_000);

  afterAll(async () => {
    await adapter?.close();
    await node?.stop();
  }, 40_000);

  it('finds the paid orders\' coins, builds a 2-line PSBT the wallet signs, verifies, broadcasts it into a block; an edited PSBT and another wallet\'s transaction are refused', async () => {
    // The wallet agrees on where the order addresses' keys sit: the PSBT's derivations name the same.
    const info = await rpc<{ ismine: boolean; hdkeypath: string; hdmasterfingerprint: string }>('getaddressinfo', [orderAddress(0)], 'merchant');
    expect(info).toMatchObject({ ismine: true, hdkeypath: "m/84'/1'/0'/0/0", hdmasterfingerprint: '73c5da0a' });

    // Three paid orders; the third's coin is spent since (by the merchant's wallet): no coin any more.
    const funding = [await rpc<string>('sendtoaddress', [orderAddress(0), 1.0], 'w'), await rpc<string>('sendtoaddress', [orderAddress(1), 2.0], 'w'), await rpc<string>('sendtoaddress', [orderAddress(2), 0.4], 'w')];
    await mine(1);
    const spentVout = (await rpc<{ vout: Array<{ n: number; scriptPubKey: { hex: string } }> }>('getrawtransaction', [funding[2], true])).vout
      .find((o) => o.scriptPubKey.hex === parseUtxoAddress(env.addressFormat!, orderAddress(2)).key)!.n;
    const spend = await rpc<string>('createrawtransaction', [[{ txid: funding[2], vout: spentVout }], [{ [miner]: 0.399 }]]);
    const signedSpend = await rpc<{ hex: string; complete: boolean }>('signrawtransactionwithwallet', [spend], 'merchant');
    expect(signedSpend.complete).toBe(true);
    await rpc('sendrawtransaction', [signedSpend.hex]);
    const sources: CoinSource[] = [0, 1, 2].map((i) => ({ address: orderAddress(i), index: i, txHashes: [funding[i]!] }));

    const stranger = await rpc<string>('getnewaddress', ['', 'bech32'], 'w');
    const stranger2 = await rpc<string>('getnewaddress', ['', 'bech32'], 'w');
    const lines = [{ address: stranger, amountRaw: 70_000_000n }, { address: stranger2, amountRaw: 150_000_000n }];
    // Regtest has no fee estimate: the mempool's minimum, whole sat/vB.
    expect(await payoutFeeRate(adapter)).toBeGreaterThanOrEqual(1);

    const unsigned = await buildUnsignedTransaction('utxo', adapter, { env, xpub: XPUB, sources, lines, changeIndex: CHANGE_INDEX });
    expect(unsigned.format).toBe('psbt');
    expect(unsigned.inputs.map((i) => [i.txid, i.amountRaw]).sort()).toEqual([[funding[0], 100_000_000n], [funding[1], 200_000_000n]].sort());
    expect(unsigned.change).toMatchObject({ address: orderAddress(CHANGE_INDEX), index: CHANGE_INDEX });
    // The node reads the PSBT as rpcctl means it: both inputs with their key origin, the fee.
    const decoded = await rpc<{ inputs: Array<{ bip32_derivs: Array<{ master_fingerprint: string; path: string }> }>; fee: number }>('decodepsbt', [unsigned.data]);
    expect(decoded.inputs.map((i) => i.bip32_derivs[0]!.master_fingerprint)).toEqual(['73c5da0a', '73c5da0a']);
    expect(decoded.inputs.map((i) => i.bip32_derivs[0]!.path).sort()).toEqual(["m/84'/1'/0'/0/0", "m/84'/1'/0'/0/1"]);
    expect(Math.round(decoded.fee * 1e8)).toBe(Number(unsigned.feeRaw));

    const own = { xpub: XPUB, coins: unsigned.inputs.map((i) => ({ txid: i.txid, vout: i.vout })), changeIndexes: [CHANGE_INDEX] };
    const expected: ExpectedTransfer = { env, lines, utxo: own };
    const refusal = (raw: string) => {
      try {
        verifySignedTransaction('utxo', raw, expected);
      } catch (err) {
        if (err instanceof PayoutTxError) return err;
        throw err;
      }
      throw new Error('accepted');
    };

    // Edited to pay another address (the first line's output now goes to the miner), then signed by the wallet: refused.
    const edited = Transaction.fromPSBT(base64.decode(unsigned.data));
    edited.updateOutput(0, { script: Buffer.from(parseUtxoAddress(env.addressFormat!, miner).key, 'hex') });
    const editedSigned = await rpc<{ psbt: string; complete: boolean }>('walletprocesspsbt', [base64.encode(edited.toPSBT())], 'merchant');
    expect(editedSigned.complete).toBe(true);
    const editedFinal = await rpc<{ psbt?: string; hex?: string }>('finalizepsbt', [editedSigned.psbt, false]);
    expect(refusal(editedFinal.psbt!)).toMatchObject({ code: 'E_TX_MISMATCH', message: expect.stringMatching(/^line 1 \(70000000 sats to rltc1.*\) is not paid: no output pays that address$/) });

    // Unsigned: refused; signed by the merchant's wallet and finalized: accepted, as PSBT and as hex.
    expect(refusal(unsigned.data).code).toBe('E_TX_UNSIGNED');
    const processed = await rpc<{ psbt: string; complete: boolean }>('walletprocesspsbt', [unsigned.data], 'merchant');
    expect(processed.complete).toBe(true);
    const finalPsbt = (await rpc<{ psbt: string }>('finalizepsbt', [processed.psbt, false])).psbt;
    const finalHex = (await rpc<{ hex: string; complete: boolean }>('finalizepsbt', [processed.psbt])).hex;
    const verified = verifySignedTransaction('utxo', finalPsbt, expected);
    expect(verified.raw).toBe(finalHex);
    expect(verifySignedTransaction('utxo', finalHex, expected).txHash).toBe(verified.txHash);
    expect(verified.change).toEqual([{ address: orderAddress(CHANGE_INDEX), amountRaw: unsigned.change!.amountRaw }]);
    expect((await rpc<{ allowed: boolean }[]>('testmempoolaccept', [[finalHex]]))[0]!.allowed).toBe(true);

    // Another wallet pays the same lines from its own coins: refused.
    const foreign = await rpc<{ psbt: string }>('walletcreatefundedpsbt', [[], [{ [stranger]: 0.7 }, { [stranger2]: 1.5 }]], 'w');
    const foreignSigned = await rpc<{ psbt: string }>('walletprocesspsbt', [foreign.psbt], 'w');
    const foreignHex = (await rpc<{ hex: string }>('finalizepsbt', [foreignSigned.psbt])).hex;
    expect(refusal(foreignHex)).toMatchObject({ code: 'E_TX_FOREIGN_INPUTS', message: expect.stringMatching(/which is no coin of the merchant's paid orders/) });

    // Broadcast through the environment's upstream: in the mempool, then in a block. A second broadcast is no error.
    expect(await broadcastTransaction(adapter, verified.raw)).toBe(verified.txHash);
    expect(await rpc<{ vsize: number }>('getmempoolentry', [verified.txHash])).toMatchObject({ vsize: expect.any(Number) });
    expect(await broadcastTransaction(adapter, verified.raw)).toBe(verified.txHash);
    const [block] = await mine(1);
    await until(async () => (await rpc<{ blockhash?: string }>('getrawtransaction', [verified.txHash, true])).blockhash === block);
    expect(await broadcastTransaction(adapter, verified.raw)).toBe(verified.txHash);
    // The spent coins are no coins any more; the change is the merchant wallet's.
    expect(await buildUnsignedTransaction('utxo', adapter, { env, xpub: XPUB, sources, lines, changeIndex: 6 }).catch((e: Error & { code?: string }) => e.code)).toBe('E_PSBT_FUNDS');
    const changeInfo = await rpc<{ ismine: boolean }>('getaddressinfo', [orderAddress(CHANGE_INDEX)], 'merchant');
    expect(changeInfo.ismine).toBe(true);
    // The node's refusal (the edited transaction spends the same coins again) is the sender's to fix.
    const editedHex = (await rpc<{ hex: string }>('finalizepsbt', [editedSigned.psbt])).hex;
    await expect(broadcastTransaction(adapter, editedHex)).rejects.toMatchObject({ code: 'E_TX_REJECTED', message: expect.stringMatching(/the node refused the transaction: sendrawtransaction: .*(missingorspent|missing-inputs)/) });
  }, 120_000);
});

// The UTXO family's payout support (ChainFamily.payouts): the unsigned PSBT of a batch, built
// from the coins the node still has unspent at the paid orders' addresses, and the check of what
// the merchant's wallet signed (verify.ts).

import type { ChainAdapter, PayoutSupport, UnsignedRequest, UnsignedTransaction } from '../family.js';
import { PayoutTxError } from '../payout-tx.js';
import { UtxoChain } from './chain.js';
import { findCoins } from './coins.js';
import { buildPayoutPsbt } from './psbt.js';
import { verifyUtxoTransaction } from './verify.js';

async function unsignedPsbt(adapter: ChainAdapter, request: UnsignedRequest): Promise<UnsignedTransaction> {
  // The family's own scanner adapter (`utxo.scanner(upstreams)`): coin finding speaks its RPC.
  if (!(adapter instanceof UtxoChain)) throw new PayoutTxError('E_TX_UNSUPPORTED', 'a UTXO payout needs the UTXO family\'s adapter');
  const format = request.env.addressFormat;
  if (!format) throw new PayoutTxError('E_TX_UNSUPPORTED', `${request.env.network.slug}-${request.env.slug} has no address format`);
  const coins = await findCoins(adapter, format, request.sources);
  const feeRate = request.feeRate ?? (await adapter.feeRate());
  const built = buildPayoutPsbt({
    xpub: request.xpub, format, coins, feeRate, changeIndex: request.changeIndex,
    lines: request.lines.map((l) => ({ address: l.address, amountSats: l.amountRaw })),
  });
  return {
    format: 'psbt',
    data: built.psbt,
    inputs: built.inputs.map((i) => ({ txid: i.txid, vout: i.vout, amountRaw: i.amountSats })),
    feeRaw: built.feeSats,
    feeRate,
    change: built.change && { address: built.change.address, index: built.change.index, amountRaw: built.change.amountSats },
  };
}

export const utxoPayouts: PayoutSupport = { verify: verifyUtxoTransaction, unsigned: unsignedPsbt };

import type { Environment } from '../store/index.js';
import type { LineRow } from './rows.js';

/**
 * What payouts need of the chain side (keyless: rpcctl prepares, the merchant's wallet signs):
 * an unsigned transaction from the merchant's coins where rpcctl knows them, a check that a
 * signed one pays exactly what the lines say, and its broadcast through the network's
 * upstreams. `chain-transactions.ts` is the implementation over chains/payouts.ts.
 */
export interface PayoutTransactions {
  /** A BIP174 PSBT (base64) paying the lines from coins of the account's paid orders; its coins and change index, which the payout keeps. */
  psbt(req: { env: Environment; accountId: number; lines: LineRow[]; feeRate?: number }): Promise<{
    psbt: string; fee_raw: string | null; coins: Array<{ txid: string; vout: number }>; changeIndex: number;
  }>;
  /**
   * Decodes a signed transaction and checks it pays the lines (address, asset, amount): all of
   * them, or (a family whose transaction makes one transfer) one of them; refuses otherwise,
   * naming what differs. `ownership`: the coins and change indexes of the payout's PSBTs.
   */
  verify(req: {
    env: Environment; accountId: number; lines: LineRow[]; signed: string;
    ownership: { coins: Array<{ txid: string; vout: number }>; changeIndexes: number[] } | undefined;
  }): Promise<{ txHash: string; raw: string; spends: string[]; paid: LineRow[] }>;
  /** Sends it through the network's upstreams; its hash. */
  broadcast(req: { env: Environment; raw: string }): Promise<{ txHash: string }>;
}

import type { Kysely } from 'kysely';
import type { Database, Environment, Store } from '../store/index.js';
import type { EnvironmentChains } from '../watch/chains.js';
import { DERIVING_FAMILIES, type DerivingFamily } from '../chains/traits.js';
import {
  broadcastTransaction, buildUnsignedTransaction, canBuildUnsignedTransactions, PayoutTxError, verifySignedTransaction, type CoinSource, type ExpectedLine, type VerifiedTransaction,
} from '../chains/payouts.js';
import { coinSourcesOf, getSettings, reserveChildIndex } from '../payments/orders.js';
import { PayoutError, type LineRow } from './rows.js';
import type { PayoutTransactions } from './transactions.js';

function expectedLine(l: LineRow): ExpectedLine {
  return { address: l.address!, amountRaw: BigInt(l.amount_raw), ...(l.asset !== 'native' && { token: l.asset }) };
}

/** The account's extended key for the environment's family, if it derives and has one. */
async function xpubOf(db: Kysely<Database>, accountId: number, env: Environment): Promise<{ family: DerivingFamily; xpub: string } | undefined> {
  const family = (DERIVING_FAMILIES as readonly string[]).includes(env.network.family) ? env.network.family as DerivingFamily : undefined;
  if (!family) return undefined;
  const xpub = (await getSettings(db, accountId)).xpubs[family];
  return xpub ? { family, xpub } : undefined;
}

/** Refusals that say the transaction is not one at all (or not for here): no single line is tried then. */
const FINAL = new Set(['E_TX_DECODE', 'E_TX_UNSIGNED', 'E_TX_CHAIN', 'E_TX_UNSUPPORTED', 'E_TX_FOREIGN_INPUTS']);

/** Payout transactions through the chain families (chains/payouts.ts), with the nodes of `chains`. */
export function chainTransactions(store: Store, chains: EnvironmentChains): PayoutTransactions {
  return {
    async psbt({ env, accountId, lines, feeRate }) {
      if (!canBuildUnsignedTransactions(env.network.family)) {
        throw new PayoutTxError('E_TX_UNSUPPORTED', `rpcctl builds no unsigned transaction on ${env.network.slug}: pay from the payment request (its address or URI) with any wallet`);
      }
      const key = await xpubOf(store.db, accountId, env);
      if (!key) throw new PayoutError('E_PAYOUT_INVALID', `A PSBT needs the coins of orders derived from your key: set xpubs for ${env.network.slug}'s family (PUT /v1/payments/settings)`);
      const sources: CoinSource[] = await coinSourcesOf(store.db, accountId, env.id);
      const changeIndex = await reserveChildIndex(store.db, accountId, key.family);
      const built = await buildUnsignedTransaction(env.network.family, chains.of(env), {
        env, xpub: key.xpub, sources, lines: lines.map((l) => ({ address: l.address!, amountRaw: BigInt(l.amount_raw) })), changeIndex, ...(feeRate !== undefined && { feeRate }),
      });
      return { psbt: built.data, fee_raw: built.feeRaw.toString(), coins: built.inputs.map((i) => ({ txid: i.txid, vout: i.vout })), changeIndex };
    },
    async verify({ env, accountId, lines, signed, ownership }) {
      const adapter = chains.of(env);
      // The node away: the check without it refuses a transaction that needs it (EVM: signed for which chain).
      const chainId = adapter.chainId ? await adapter.chainId().catch(() => undefined) : undefined;
      const key = ownership && await xpubOf(store.db, accountId, env);
      const utxo = ownership && key ? { xpub: key.xpub, coins: ownership.coins, changeIndexes: ownership.changeIndexes } : undefined;
      const check = (ls: LineRow[]): VerifiedTransaction => verifySignedTransaction(env.network.family, signed, {
        env, lines: ls.map(expectedLine), ...(utxo && { utxo }), ...(chainId !== undefined && { chainId }),
      });
      try {
        return { ...check(lines), paid: lines };
      } catch (err) {
        if (!(err instanceof PayoutTxError) || FINAL.has(err.code) || lines.length === 1) throw err;
        // A family whose transaction makes one transfer pays one line of the batch.
        for (const l of lines) {
          try {
            return { ...check([l]), paid: [l] };
          } catch { /* not this line */ }
        }
        throw err;
      }
    },
    async broadcast({ env, raw }) {
      return { txHash: await broadcastTransaction(chains.of(env), raw) };
    },
  };
}

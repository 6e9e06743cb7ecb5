import { lockFor, type Environment } from '../store/index.js';
import type { z } from 'zod';
import type { submitTransactionBody } from '../wire/payouts.js';
import { LineChangedError, linesOf, PayoutError, recordedTxs, type LineRow, type PayoutRow } from './rows.js';
import type { Payouts } from './service.js';

/** The lines a transaction may pay now: approved, awaiting payment, all on one network. */
async function payable(payouts: Payouts, p: PayoutRow): Promise<{ env: Environment; lines: LineRow[] }> {
  if (p.approval === 'awaiting') throw new PayoutError('E_CONFLICT', `${p.payout_id} waits for an owner's approval: nothing to pay yet`);
  const lines = (await linesOf(payouts.deps.store.db, p.id)).filter((l) => l.status === 'awaiting_payment');
  if (lines.length === 0) throw new PayoutError('E_CONFLICT', `${p.payout_id} has no line awaiting payment`);
  const envIds = new Set(lines.map((l) => l.network_environment_id));
  if (envIds.size > 1) throw new PayoutError('E_PAYOUT_INVALID', `${p.payout_id} pays on ${envIds.size} networks: one transaction pays one network's lines (make one payout per network)`);
  const env = payouts.deps.store.catalog.environment(lines[0]!.network_environment_id);
  if (!env) throw new PayoutError('E_CONFLICT', `${p.payout_id}: its network is no longer configured`);
  return { env, lines };
}

const list = <T>(json: string | null): T[] => (json === null ? [] : JSON.parse(json) as T[]);

/**
 * Why `v` may not be recorded on `paid`: a line with a transaction recorded takes another only
 * when it replaces every one recorded (shares a spend: a BIP125 replacement, an EVM fee bump
 * with the same nonce), since then only one of them can confirm; a transaction that could
 * confirm beside the recorded one would pay the line twice. The same transaction again is fine.
 */
function clash(p: PayoutRow, paid: LineRow[], v: { txHash: string; spends: string[] }): PayoutError | undefined {
  const spends = new Set(v.spends);
  const taken = paid.filter((l) => {
    const recorded = recordedTxs(l);
    return !recorded.some((r) => sameHash(r.hash, v.txHash)) && !recorded.every((r) => r.spends.some((x) => spends.has(x)));
  });
  if (taken.length === 0) return undefined;
  const hashes = [...new Set(taken.flatMap((l) => recordedTxs(l).map((r) => r.hash)))];
  return new PayoutError('E_CONFLICT', `A transaction is already recorded for line${taken.length > 1 ? 's' : ''} ${taken.map((l) => l.line_no).join(', ')} of ${p.payout_id} (${hashes.join(', ')}): `
    + 'a second one is taken only when it replaces it (spends one of the same inputs, BIP125; EVM: the same sender and nonce), as both could confirm and pay twice');
}

const sameHash = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * Checks a signed transaction pays the lines awaiting payment exactly as they say, records its
 * hash on the lines it pays (from now only the transactions recorded match them) and
 * broadcasts it unless told not to. A line with a transaction recorded takes a second one only
 * as its replacement (`clash`); both stay recorded, and whichever confirms matches.
 */
export async function submitTransaction(payouts: Payouts, p: PayoutRow, body: z.output<typeof submitTransactionBody>): Promise<string> {
  const { env, lines } = await payable(payouts, p);
  const coins = list<{ txid: string; vout: number }>(p.psbt_coins);
  const ownership = coins.length > 0 ? { coins, changeIndexes: list<number>(p.psbt_change_indexes) } : undefined;
  const verify = (ls: LineRow[]) => payouts.transactions.verify({ env, accountId: p.account_id, lines: ls, signed: body.signed_transaction, ownership });
  let verified = await verify(lines);
  if (clash(p, verified.paid, verified)) {
    // A family whose transaction makes one transfer: it may pay a like line with nothing recorded.
    const free = lines.filter((l) => recordedTxs(l).length === 0);
    const other = free.length > 0 && free.length < lines.length ? await verify(free).catch(() => undefined) : undefined;
    if (other && !clash(p, other.paid, other)) verified = other;
  }
  const now = new Date().toISOString();
  await payouts.deps.store.db.transaction().execute(async (trx) => {
    // Under the payout's lock, on the lines as they are now: two submits at once record one.
    await lockFor(trx, `payout:${p.id}`);
    const current = await trx.selectFrom('payout_lines').selectAll().where('id', 'in', verified.paid.map((l) => l.id)).orderBy('line_no').execute();
    if (current.some((l) => l.status !== 'awaiting_payment')) throw new PayoutError('E_CONFLICT', `${p.payout_id}: a line this transaction pays is no longer awaiting payment`);
    const refused = clash(p, current, verified);
    if (refused) throw refused;
    for (const l of current) {
      const recorded = [...recordedTxs(l).filter((r) => !sameHash(r.hash, verified.txHash)), { hash: verified.txHash, spends: verified.spends }];
      const res = await trx.updateTable('payout_lines').set({ expected_tx: verified.txHash, recorded_txs: JSON.stringify(recorded), updated_at: now })
        .where('id', '=', l.id).where('seq', '=', l.seq).executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw new LineChangedError(`line ${l.line_no} of ${p.payout_id} changed under us`);
    }
  });
  if (body.broadcast !== false) await payouts.transactions.broadcast({ env, raw: verified.raw });
  payouts.kick();
  return verified.txHash;
}

/** An unsigned PSBT for the lines awaiting payment, from the merchant's coins; its coins and change index are kept on the payout. */
export async function psbtFor(payouts: Payouts, p: PayoutRow, feeRate: number | undefined): Promise<{ psbt: string; fee_raw: string | null }> {
  const { env, lines } = await payable(payouts, p);
  // A fresh PSBT spends other coins than the transaction recorded for these lines: a wallet
  // that broadcasts as it signs would send it beside that one, and both could confirm (the
  // submit's 409 comes after). What may follow a recorded transaction is a replacement of it.
  const recorded = lines.filter((l) => recordedTxs(l).length > 0);
  if (recorded.length > 0) {
    throw new PayoutError('E_CONFLICT', `${p.payout_id}: line${recorded.length === 1 ? '' : 's'} ${recorded.map((l) => l.line_no).join(', ')} already ha${recorded.length === 1 ? 's' : 've'} a signed transaction recorded (${recordedTxs(recorded[0]!).at(-1)!.hash}): `
      + 'bump its fee in your wallet (a BIP125 replacement spending the same coins) and submit that, or cancel the lines');
  }
  const built = await payouts.transactions.psbt({ env, accountId: p.account_id, lines, ...(feeRate !== undefined && { feeRate }) });
  const db = payouts.deps.store.db;
  await db.transaction().execute(async (trx) => {
    const row = (await trx.selectFrom('payouts').select(['psbt_coins', 'psbt_change_indexes']).where('id', '=', p.id).executeTakeFirstOrThrow());
    await trx.updateTable('payouts').set({
      psbt_coins: JSON.stringify([...list(row.psbt_coins), ...built.coins]),
      psbt_change_indexes: JSON.stringify([...list<number>(row.psbt_change_indexes), built.changeIndex]),
    }).where('id', '=', p.id).execute();
  });
  return { psbt: built.psbt, fee_raw: built.fee_raw };
}

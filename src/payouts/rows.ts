import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../store/index.js';
import { PAYOUT_STATUSES, type PayoutStatus } from '../wire/payouts.js';
import type { PayoutLinesTable, PayoutsTable, RefundLinksTable } from '../store/payout-tables.js';
import { RpcctlError } from '../util/errors.js';

export type PayoutRow = Selectable<PayoutsTable>;
export type LineRow = Selectable<PayoutLinesTable>;
export type LinkRow = Selectable<RefundLinksTable>;

/**
 * A client mistake about a refund or payout, naming what is wrong (the API's status for each
 * code is in api/http.ts): invalid input, a missing one, or a clash with its state.
 */
export class PayoutError extends RpcctlError {
  readonly code: 'E_PAYOUT_INVALID' | 'E_NOT_FOUND' | 'E_CONFLICT';
  constructor(code: PayoutError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

/** Another writer moved the line first (a second process); the engine retries on its next pass. */
export class LineChangedError extends RpcctlError {
  readonly code = 'E_LINE_CHANGED';
}

/** A signed transaction recorded for a line, and what it spends (chains VerifiedTransaction.spends). */
export interface RecordedTx {
  hash: string;
  spends: string[];
}

/** The transactions recorded for the line, oldest first (one recorded before 0035: its spends unknown). */
export function recordedTxs(l: Pick<LineRow, 'recorded_txs' | 'expected_tx'>): RecordedTx[] {
  if (l.recorded_txs !== null) return JSON.parse(l.recorded_txs) as RecordedTx[];
  return l.expected_tx === null ? [] : [{ hash: l.expected_tx, spends: [] }];
}

export async function payoutOf(db: Kysely<Database>, accountId: number, payoutId: string): Promise<PayoutRow | undefined> {
  return db.selectFrom('payouts').selectAll().where('account_id', '=', accountId).where('payout_id', '=', payoutId).executeTakeFirst();
}

export async function payoutByPk(db: Kysely<Database>, pk: number): Promise<PayoutRow | undefined> {
  return db.selectFrom('payouts').selectAll().where('id', '=', pk).executeTakeFirst();
}

export async function linesOf(db: Kysely<Database>, payoutPk: number): Promise<LineRow[]> {
  return db.selectFrom('payout_lines').selectAll().where('payout_pk', '=', payoutPk).orderBy('line_no').execute();
}

export async function lineByPk(db: Kysely<Database>, pk: number): Promise<LineRow | undefined> {
  return db.selectFrom('payout_lines').selectAll().where('id', '=', pk).executeTakeFirst();
}

/**
 * The account's payouts (not refunds), newest first, a page of them and how many there are; with
 * `status`, only those whose batch status (present.ts batchStatus: the least advanced line not
 * canceled, canceled when all are) is that one, decided in the query so that paging counts
 * matches only.
 */
export async function listPayouts(
  db: Kysely<Database>, q: { accountId: number; status?: PayoutStatus; page: number; perPage: number },
): Promise<{ rows: PayoutRow[]; total: number }> {
  let base = db.selectFrom('payouts as p').where('p.account_id', '=', q.accountId).where('p.kind', '=', 'payout');
  const status = q.status;
  if (status !== undefined) {
    const before = PAYOUT_STATUSES.slice(0, PAYOUT_STATUSES.indexOf(status));
    base = base.where((eb) => {
      const lines = (statuses: readonly string[], op: 'in' | 'not in' = 'in') => eb.exists(eb.selectFrom('payout_lines as l').select('l.id')
        .whereRef('l.payout_pk', '=', 'p.id').where('l.status', op, statuses));
      if (status === 'canceled') return eb.not(lines(['canceled'], 'not in'));
      return before.length === 0 ? lines([status]) : eb.and([lines([status]), eb.not(lines(before))]);
    });
  }
  const [rows, total] = await Promise.all([
    base.selectAll('p').orderBy('p.id', 'desc').limit(q.perPage).offset((q.page - 1) * q.perPage).execute(),
    base.select(sql<number>`count(*)`.as('n')).executeTakeFirst(),
  ]);
  return { rows, total: Number(total?.n ?? 0) };
}

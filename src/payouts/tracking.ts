import type { Kysely } from 'kysely';
import type { Database, Environment } from '../store/index.js';
import { eventBlocks, hitEvents, removedEvents } from '../watch/events.js';
import { assetOfRow, hitIsAsset } from '../payments/assets.js';
import type { Finality } from '../payments/holds.js';
import type { Skipped } from '../chains/family.js';
import { releaseWatches, WatchChanges, watchLine, webhookContext, type PayoutDeps } from './context.js';
import { recordedTxs, type LineRow } from './rows.js';
import { moveLines, type LineMove } from './transition.js';

/*
 * Tracking a line to final: a matching transfer makes it `sent`, the network's finality rule
 * `completed`; a transfer that leaves the chain (its event removed by a reorg, as payments'
 * reorgs.ts reads it) takes it back to `awaiting_payment`, and its return counts again as any
 * new transfer. A matching transfer: to the address, of the asset, of at least the amount,
 * recorded after the line was created; where a transaction hash was recorded, that transaction.
 */

/** Lines moved a transaction at most: a batch's 1,000 lines move in a few transactions, not one each. */
const CHUNK = 200;
/** Block lookups a completion pass has in flight at once. */
const ASK_AT_ONCE = 16;

/**
 * Moves the lines `plan` picks among `linePks` (read again in the transaction, in that order):
 * a chunk of lines a transaction, read in one query, their webhooks written together and the
 * watches they let go given back together. A line another writer moved first (its
 * compare-and-set lost) stays where it is and is retried on the next pass. The number moved.
 */
async function moveMany(
  d: PayoutDeps, linePks: readonly number[],
  plan: (lines: LineRow[], trx: Kysely<Database>, changes: WatchChanges) => Promise<Array<{ line: LineRow; move: LineMove }>>,
): Promise<number> {
  let n = 0;
  for (let i = 0; i < linePks.length; i += CHUNK) {
    const pks = linePks.slice(i, i + CHUNK);
    const changes = new WatchChanges();
    const moved = await d.store.db.transaction().execute(async (trx) => {
      const byPk = new Map((await trx.selectFrom('payout_lines').selectAll().where('id', 'in', pks).execute()).map((l) => [l.id, l]));
      const moves = await plan(pks.flatMap((pk) => byPk.get(pk) ?? []), trx, changes);
      if (moves.length === 0) return 0;
      const payouts = new Map((await trx.selectFrom('payouts').selectAll().where('id', 'in', [...new Set(moves.map((m) => m.line.payout_pk))]).execute()).map((p) => [p.id, p]));
      const withContext = [];
      for (const { line, move } of moves) withContext.push({ ctx: await webhookContext(trx, d.config, d.store, payouts.get(line.payout_pk)!, line), line, move });
      const done = await moveLines(trx, withContext);
      await releaseWatches(trx, done.filter(({ line, next }) => line.watch_id !== null && next.watch_id === null).map(({ line }) => line.watch_id), changes);
      return done.length;
    });
    if (moved === 0) continue;
    await changes.tell(d);
    d.onDeliveries();
    n += moved;
  }
  return n;
}

/** Events on these awaiting lines' watches since each line was made, no line's transfer yet: the candidates. */
function candidatesQuery(db: Kysely<Database>, linePks: number[]) {
  return db.selectFrom('payout_lines as l').innerJoin(hitEvents(db, { types: ['payment'], direction: 'in' }).as('e'), 'e.watch_id', 'l.watch_id')
    .leftJoin('payout_lines as u', 'u.event_id', 'e.id')
    .select(['l.id as line_pk', 'l.network_environment_id', 'l.asset', 'l.decimals', 'l.amount_raw', 'l.expected_tx', 'l.recorded_txs',
      'e.id as event_id', 'e.tx_hash', 'e.token', 'e.amount', 'e.direction', 'e.block_height'])
    .where('l.id', 'in', linePks).where('l.status', '=', 'awaiting_payment').whereRef('e.created_at', '>=', 'l.created_at').where('u.id', 'is', null);
}

/**
 * The candidates of every awaiting line, oldest event first: the lines found by the status
 * index, 500 at a time, then their watches' events. Asked in one join ordered by event id with
 * a limit, PostgreSQL walked watch_events in id order looking for lines, some 200 ms a pass
 * (every `tick_ms`) once a batch's events were in, even with no line awaiting.
 */
async function candidates(db: Kysely<Database>) {
  const rows = [];
  for (let after = 0; ;) {
    const awaiting = (await db.selectFrom('payout_lines').select('id').where('status', '=', 'awaiting_payment').where('id', '>', after)
      .orderBy('id').limit(500).execute()).map((r) => r.id);
    if (awaiting.length === 0) break;
    rows.push(...await candidatesQuery(db, awaiting).execute());
    after = awaiting[awaiting.length - 1]!;
  }
  return rows.sort((a, b) => a.event_id - b.event_id);
}

/** Lines whose transfer arrived: `sent`. */
export async function matchTransfers(d: PayoutDeps): Promise<number> {
  // A transfer that can never pay its line (short, another asset) stays a candidate while the
  // line awaits payment: judged from the row, it costs no write transaction on every pass.
  const rows = (await candidates(d.store.db)).filter((r) => matches(d, r, r));
  if (rows.length === 0) return 0;
  const taken = new Set<number>();
  const done = new Set<number>();
  // Each event pays one line, each line takes one event: the first that matches, in event order.
  return moveMany(d, [...new Set(rows.map((r) => r.line_pk))], async (lines) => {
    const byPk = new Map(lines.map((l) => [l.id, l]));
    const moves: Array<{ line: LineRow; move: LineMove }> = [];
    for (const r of rows) {
      const line = byPk.get(r.line_pk);
      if (!line || taken.has(r.event_id) || done.has(r.line_pk)) continue;
      if (line.status !== 'awaiting_payment' || !matches(d, line, r)) continue;
      taken.add(r.event_id);
      done.add(r.line_pk);
      moves.push({ line, move: { status: 'sent', match: { txHash: r.tx_hash, eventId: r.event_id, blockHeight: Number(r.block_height) } } });
    }
    return moves;
  });
}

/** Whether the event pays the line: incoming, its asset, at least its amount, one of its recorded transactions if any (a replacement keeps the one it replaced). */
export function matches(d: PayoutDeps, line: Pick<LineRow, 'network_environment_id' | 'asset' | 'decimals' | 'amount_raw' | 'expected_tx' | 'recorded_txs'>, p: { tx_hash: string; token: string | null; amount: string; direction: 'in' | 'out' }): boolean {
  const asset = assetOfRow(d.config, d.store.catalog.environment(line.network_environment_id), line.asset, line.decimals);
  return p.direction === 'in' && hitIsAsset(asset, p.token) && BigInt(p.amount) >= BigInt(line.amount_raw)
    && (line.expected_tx === null || recordedTxs(line).some((r) => r.hash.toLowerCase() === p.tx_hash.toLowerCase()));
}

/** Lines whose transfer left the chain: back to `awaiting_payment`, watched again. */
export async function takeBack(d: PayoutDeps): Promise<number> {
  const rows = await d.store.db.selectFrom('payout_lines as l').innerJoin(removedEvents(d.store.db).as('e'), 'e.id', 'l.event_id').select('l.id')
    .where('l.status', 'in', ['sent', 'completed']).limit(500).execute();
  return moveMany(d, rows.map((r) => r.id), async (lines, trx, changes) => {
    const moves: Array<{ line: LineRow; move: LineMove }> = [];
    for (const line of lines) {
      if (line.status !== 'sent' && line.status !== 'completed') continue;
      const watchId = line.watch_id ?? await watchLine(trx, d.store, line, { display: line.address!, key: line.address_key! }, changes);
      moves.push({ line, move: { status: 'awaiting_payment', match: null, watchId } });
    }
    return moves;
  });
}

/**
 * The `sent` lines, or the `completed` ones still holding a watch, whose block is at or below the
 * network's final height less `margin` blocks. Every such line, 500 rows a page: with only the
 * oldest 500 read, lines that are not final yet (a slow network's, one whose environment left
 * the catalog) kept newer final ones waiting.
 */
async function finalIds(d: PayoutDeps, finality: Finality, nowMs: number, status: 'sent' | 'completed', margin: (envDepth: number) => number): Promise<number[]> {
  const ids: number[] = [];
  for (let after = 0; ;) {
    let q = d.store.db.selectFrom('payout_lines').select(['id', 'network_environment_id', 'block_height'])
      .where('status', '=', status).where('id', '>', after);
    if (status === 'completed') q = q.where('watch_id', 'is not', null);
    const rows = await q.orderBy('id').limit(500).execute();
    if (rows.length === 0) return ids;
    for (const r of rows) {
      const env = d.store.catalog.environment(r.network_environment_id);
      if (!env) continue;
      const final = await finality.height(env, nowMs);
      if (final !== undefined && Number(r.block_height) <= final - margin(env.finalityDepth)) ids.push(r.id);
    }
    after = rows[rows.length - 1]!.id;
  }
}

/**
 * Sent lines whose block is final by the network's rule: `completed`. Their watch stays for the
 * hold (`releaseHeld`), as a paid order's does: a reorg deeper than the rule still takes it back.
 * Only while the line's block is still the node's at its height: the final height is the node's
 * now, but the scanner learns of a reorg on its next step, so a line sent in a block that a
 * longer chain replaced would complete on a transfer no longer on chain (its `completed` webhook
 * out, taken back a moment later); it waits for the scanner's rewind (`takeBack`) instead.
 */
export async function complete(d: PayoutDeps, finality: Finality, nowMs: number): Promise<number> {
  const final = await finalIds(d, finality, nowMs, 'sent', () => 0);
  const rows = [];
  for (let i = 0; i < final.length; i += CHUNK) {
    rows.push(...await d.store.db.selectFrom('payout_lines as l').leftJoin(eventBlocks(d.store.db).as('e'), 'e.id', 'l.event_id')
      .select(['l.id', 'l.network_environment_id', 'l.block_height', 'e.block_hash', 'e.removed'])
      .where('l.id', 'in', final.slice(i, i + CHUNK)).where('l.status', '=', 'sent').orderBy('l.id').execute());
  }
  const due = await stillOnChain(d, finality, rows);
  return moveMany(d, due, async (lines, trx) => {
    // A rewind that took the transfer off since stillOnChain asked: no completed webhook for it.
    const sent = lines.filter((l) => l.status === 'sent');
    const events = sent.map((l) => l.event_id).filter((id): id is number => id !== null);
    const removed = new Set(events.length === 0 ? [] : (await trx.selectFrom(eventBlocks(trx).as('e')).select('e.id')
      .where('e.id', 'in', events).where('e.removed', '=', 1).execute()).map((r) => r.id));
    return sent.filter((l) => l.event_id === null || !removed.has(l.event_id)).map((line) => ({ line, move: { status: 'completed' } }));
  });
}

/**
 * The ids among `rows` whose transfer's block is the node's block at its height, asked once per
 * height (a batch's lines share a block). Where there is no hash to compare, the final height
 * alone decides, as before there was this check: the event was pruned by retention, found by a
 * reference lookup (kept without its block's hash), or the node keeps no block at that height
 * any more (a Solana node's limited ledger, Horizon's history window: the scanner passes such a
 * final block too). A node that fails to answer is asked again on the next pass.
 */
async function stillOnChain(d: PayoutDeps, finality: Finality, rows: ReadonlyArray<{
  id: number; network_environment_id: number; block_height: number | string | null; block_hash: string | null; removed: number | null;
}>): Promise<number[]> {
  const ids: number[] = [];
  const toAsk = new Map<string, { env: Environment; height: number }>();
  const checked: Array<{ id: number; key: string; hash: string }> = [];
  for (const r of rows) {
    if (Number(r.removed) === 1) continue;
    if (r.block_hash === null || r.block_hash === '') {
      ids.push(r.id);
      continue;
    }
    const env = d.store.catalog.environment(r.network_environment_id);
    if (!env) continue;
    const key = `${env.id}:${r.block_height}`;
    toAsk.set(key, { env, height: Number(r.block_height) });
    checked.push({ id: r.id, key, hash: r.block_hash });
  }
  // A batch paid by a transfer a line (anvil mines each in its own block) asks a thousand
  // heights: some at once, not one after another.
  const answers = new Map<string, string | Skipped | undefined | null>();
  const keys = [...toAsk];
  for (let i = 0; i < keys.length; i += ASK_AT_ONCE) {
    await Promise.all(keys.slice(i, i + ASK_AT_ONCE).map(async ([key, { env, height }]) => answers.set(key, await finality.blockHash(env, height))));
  }
  for (const c of checked) {
    const now = answers.get(c.key);
    if (now === null) continue;
    if (typeof now !== 'string' || now === '' || now === c.hash) ids.push(c.id);
  }
  return ids;
}

/**
 * Completed lines keep their watch for one more finality window (`finality_depth` blocks past
 * the final block, or the node's `finalized` that far past the transfer's block; Stellar at
 * once), like a paid order's finality hold (payments/holds.ts): until then a reorg that takes
 * the transfer off is seen (only a watched network is scanned) and takes the line back. Then
 * the watch goes; no webhook, the line does not move.
 */
export async function releaseHeld(d: PayoutDeps, finality: Finality, nowMs: number): Promise<number> {
  const due = await finalIds(d, finality, nowMs, 'completed', (depth) => depth);
  let n = 0;
  // A chunk of lines a transaction: a batch's 1,000 watches go in a few statements.
  for (let i = 0; i < due.length; i += CHUNK) {
    const pks = due.slice(i, i + CHUNK);
    const changes = new WatchChanges();
    const released = await d.store.db.transaction().execute(async (trx) => {
      const held = await trx.selectFrom('payout_lines').select(['id', 'watch_id']).where('id', 'in', pks)
        .where('status', '=', 'completed').where('watch_id', 'is not', null).execute();
      if (held.length === 0) return 0;
      // Only while still completed and holding: a line taken back meanwhile keeps its watch.
      const cleared = new Set((await trx.updateTable('payout_lines').set({ watch_id: null }).where('id', 'in', held.map((l) => l.id))
        .where('status', '=', 'completed').where('watch_id', 'is not', null).returning('id').execute()).map((r) => r.id));
      await releaseWatches(trx, held.filter((l) => cleared.has(l.id)).map((l) => l.watch_id), changes);
      return cleared.size;
    });
    if (released === 0) continue;
    await changes.tell(d);
    n += released;
  }
  return n;
}

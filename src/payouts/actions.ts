import type { Kysely } from 'kysely';
import { lockFor, type Database } from '../store/index.js';
import type { PayoutStatus } from '../wire/payouts.js';
import type { Caller } from './approval.js';
import { releaseWatch, WatchChanges, watchLines, webhookContext, type PayoutDeps } from './context.js';
import { checkAddress } from './lines.js';
import { hashToken } from './create.js';
import { LineChangedError, linesOf, payoutByPk, PayoutError, type LineRow, type PayoutRow } from './rows.js';
import { CANCELABLE, moveLine, moveLines } from './transition.js';

/**
 * Runs `work` in one transaction holding the payout's lock, then tells the registry and the
 * webhook worker. The lock makes approve, cancel and a refund link's claim on one payout take
 * turns (PostgreSQL; SQLite runs one transaction at a time), so each reads what the other
 * committed; a line the tracker moved meanwhile (it takes no lock) is a 409 to try again.
 */
async function inTransaction<T>(d: PayoutDeps, payoutPk: number, work: (trx: Kysely<Database>, changes: WatchChanges) => Promise<T>): Promise<T> {
  const changes = new WatchChanges();
  let result: T;
  try {
    result = await d.store.db.transaction().execute(async (trx) => {
      await lockFor(trx, `payout:${payoutPk}`);
      return work(trx, changes);
    });
  } catch (err) {
    if (err instanceof LineChangedError) throw new PayoutError('E_CONFLICT', 'The payout changed while this request ran (a transfer was seen): look at it again and retry');
    throw err;
  }
  await changes.tell(d);
  d.onDeliveries();
  return result;
}

/** Moves a line on from waiting (approval or address) to what it waits for now. */
async function release(d: PayoutDeps, trx: Kysely<Database>, payout: PayoutRow, line: LineRow, changes: WatchChanges, address?: { display: string; key: string }): Promise<void> {
  await releaseAll(d, trx, payout, [{ line, address }], changes);
}

/** release for many lines at once (a batch approved): their watches made together, their moves and webhooks written together. */
async function releaseAll(
  d: PayoutDeps, trx: Kysely<Database>, payout: PayoutRow, items: ReadonlyArray<{ line: LineRow; address?: { display: string; key: string } | undefined }>, changes: WatchChanges,
): Promise<void> {
  const targets = items.map(({ line, address }) => ({ line, to: address ?? (line.address !== null ? { display: line.address, key: line.address_key! } : undefined) }));
  const addressed = targets.filter((t): t is { line: LineRow; to: { display: string; key: string } } => t.to !== undefined);
  const watchIds = new Map((await watchLines(trx, d.store, addressed.map(({ line, to }) => ({ line, address: to })), changes)).map((w, i) => [addressed[i]!.line.id, w]));
  const moves = [];
  for (const { line, to } of targets) {
    const ctx = await webhookContext(trx, d.config, d.store, payout, line);
    moves.push({ ctx, line, move: to ? { status: 'awaiting_payment' as const, address: to, watchId: watchIds.get(line.id)! } : { status: 'awaiting_address' as const } });
  }
  const moved = await moveLines(trx, moves);
  // In the caller's one transaction, all or none: a line moved meanwhile undoes the whole step.
  if (moved.length !== moves.length) throw new LineChangedError(`a line of ${payout.payout_id} changed under us`);
}

/**
 * An owner other than its maker approves: its lines move on (and are watched), and only now are
 * payment requests shown. A second approval changes nothing (`false`).
 */
export async function approve(d: PayoutDeps, payout: PayoutRow, caller: Caller, nowMs = Date.now()): Promise<boolean> {
  const now = new Date(nowMs).toISOString();
  return inTransaction(d, payout.id, async (trx, changes) => {
    // Read again under the lock: a cancel or another approval may have committed since the route read it.
    const before = (await payoutByPk(trx, payout.id))!;
    if (before.approval === 'approved') return false;
    if (before.approval !== 'awaiting') throw new PayoutError('E_CONFLICT', `${payout.payout_id} needs no approval`);
    const lines = await linesOf(trx, payout.id);
    if (before.canceled_at !== null || lines.every((l) => l.status === 'canceled')) throw new PayoutError('E_CONFLICT', `${payout.payout_id} was canceled: there is nothing to approve`);
    await trx.updateTable('payouts').set({ approval: 'approved', approved_by: caller.id, approved_by_label: caller.label, approved_at: now, updated_at: now })
      .where('id', '=', payout.id).execute();
    const current = (await payoutByPk(trx, payout.id))!;
    await releaseAll(d, trx, current, lines.filter((l) => l.status === 'awaiting_approval').map((line) => ({ line })), changes);
    return true;
  });
}

/**
 * Cancels the lines nothing was paid to yet; the number canceled (0: none could be).
 * `onlyAwaitingApproval`: a developer's cancel, refused if an owner approved it meanwhile.
 */
export async function cancel(d: PayoutDeps, payout: PayoutRow, nowMs = Date.now(), onlyAwaitingApproval = false): Promise<number> {
  const now = new Date(nowMs).toISOString();
  return inTransaction(d, payout.id, async (trx, changes) => {
    if (onlyAwaitingApproval && (await payoutByPk(trx, payout.id))!.approval !== 'awaiting') {
      throw new PayoutError('E_CONFLICT', `${payout.payout_id} was approved meanwhile: only an owner cancels it now`);
    }
    let n = 0;
    const lines = await linesOf(trx, payout.id);
    for (const line of lines) {
      if (!CANCELABLE.includes(line.status as PayoutStatus)) continue;
      const ctx = await webhookContext(trx, d.config, d.store, payout, line);
      await moveLine(trx, ctx, line, { status: 'canceled', watchId: null }, nowMs);
      await releaseWatch(trx, line.watch_id, changes);
      n++;
    }
    if (n === 0) return 0;
    const open = lines.length - n - lines.filter((l) => l.status === 'canceled').length;
    await trx.updateTable('payouts').set({ updated_at: now, ...(open === 0 && { canceled_at: now }) }).where('id', '=', payout.id).execute();
    return n;
  });
}

/** What a refund link's page shows: the refund, its order, and whether the link still takes an address. */
export async function linkOf(db: Kysely<Database>, token: string) {
  if (!/^[A-Za-z0-9_-]{32}$/.test(token)) return undefined;
  const link = await db.selectFrom('refund_links').selectAll().where('token_hash', '=', hashToken(token)).executeTakeFirst();
  if (!link) return undefined;
  const payout = (await payoutByPk(db, link.payout_pk))!;
  const line = (await linesOf(db, payout.id))[0]!;
  return { link, payout, line };
}

/**
 * The customer gives the refund's address, once: checked for the order's network and family,
 * then the line awaits payment (or keeps waiting for approval, with its address).
 */
export async function claimLink(d: PayoutDeps, token: string, input: string, nowMs = Date.now()): Promise<LineRow> {
  const found = await linkOf(d.store.db, token);
  if (!found) throw new PayoutError('E_NOT_FOUND', 'No such refund link');
  const { link, payout, line } = found;
  if (link.claimed_at !== null || line.address !== null) throw new PayoutError('E_CONFLICT', 'This refund link was already used: an address was given');
  if (Date.parse(link.expires_at) <= nowMs) throw new PayoutError('E_CONFLICT', 'This refund link has expired: ask the merchant for a new one');
  if (line.status === 'canceled') throw new PayoutError('E_CONFLICT', 'This refund was canceled');
  const env = d.store.catalog.environment(line.network_environment_id);
  if (!env) throw new PayoutError('E_CONFLICT', 'This refund\'s network is no longer served');
  const address = checkAddress(env, input, 'address');
  return inTransaction(d, payout.id, async (trx, changes) => {
    const current = (await linesOf(trx, payout.id))[0]!;
    // Under the lock: a cancel that committed since the checks above is seen here.
    if (current.status === 'canceled') throw new PayoutError('E_CONFLICT', 'This refund was canceled');
    const res = await trx.updateTable('refund_links').set({ claimed_at: new Date(nowMs).toISOString() })
      .where('id', '=', link.id).where('claimed_at', 'is', null).executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) throw new PayoutError('E_CONFLICT', 'This refund link was already used: an address was given');
    if (current.status === 'awaiting_approval') {
      await trx.updateTable('payout_lines').set({ address: address.display, address_key: address.key }).where('id', '=', current.id).execute();
    } else {
      await release(d, trx, payout, current, changes, address);
    }
    return (await linesOf(trx, payout.id))[0]!;
  });
}

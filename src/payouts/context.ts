import type { Kysely } from 'kysely';
import type { Config } from '../config/index.js';
import type { Database, Store, WatchedAddressRow } from '../store/index.js';
import { assetOfRow } from '../payments/assets.js';
import { orderIdsOf } from '../payments/orders.js';
import { payoutsDoneAll, watchesForPayout } from '../watch/watches.js';
import { announceLines, type WebhookContext } from './transition.js';
import { linesOf, type LineRow, type PayoutRow } from './rows.js';

/** What the payouts' actions and engine work with. */
export interface PayoutDeps {
  store: Store;
  config: Config;
  /** Tells the in-memory watch registry after a commit. */
  /** `added` resolves once a scanner of the watch's network knows where it starts (watch/service.ts watchAdded): a transfer sent right after the answer is seen. */
  watches: { added(row: WatchedAddressRow): Promise<void>; removed(row: WatchedAddressRow): void };
  /** Deliveries were written: the webhook service sends them now. */
  onDeliveries(): void;
}

/** Watches made and let go in a transaction, told to the registry once it committed. */
export class WatchChanges {
  readonly added: WatchedAddressRow[] = [];
  readonly removed: WatchedAddressRow[] = [];

  async tell(d: PayoutDeps): Promise<void> {
    for (const w of this.removed) d.watches.removed(w);
    await watchesAdded(d, this.added);
  }
}

/**
 * Tells Address Watch of new watches and waits until their networks' scanners know where they
 * start (a transfer sent right after the answer is then seen), for at most 3 s: Address Watch
 * caps a scanner's start so, but its reconcile may first wait for another network's scanner to
 * stop, and a request (or a tracking pass) must not hang on that.
 */
export async function watchesAdded(d: Pick<PayoutDeps, 'watches'>, rows: readonly WatchedAddressRow[]): Promise<void> {
  if (rows.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(rows.map((w) => d.watches.added(w))), new Promise((r) => { timer = setTimeout(r, 3000); })]);
  clearTimeout(timer);
}

/** A line's webhook context: its payout, its asset's symbol, and for a refund its order's ids. */
export async function webhookContext(db: Kysely<Database>, config: Config, store: Store, payout: PayoutRow, line: LineRow): Promise<WebhookContext> {
  const env = store.catalog.environment(line.network_environment_id);
  const assetSymbol = assetOfRow(config, env, line.asset, line.decimals).symbol;
  if (payout.order_pk === null) return { payout, assetSymbol };
  const order = await orderIdsOf(db, payout.order_pk);
  return { payout, assetSymbol, ...(order && { order }) };
}

/** A new payout's (or refund's) lines announce their first state, in the creating transaction. */
export async function announceCreated(trx: Kysely<Database>, config: Config, store: Store, payout: PayoutRow, nowMs: number): Promise<void> {
  const items = [];
  for (const line of await linesOf(trx, payout.id)) items.push({ ctx: await webhookContext(trx, config, store, payout, line), line });
  await announceLines(trx, items, nowMs);
}

/** The watch a line with an address tracks through (made when the account has none of that address). */
export async function watchLine(trx: Kysely<Database>, store: Store, line: LineRow, address: { display: string; key: string }, changes: WatchChanges): Promise<string> {
  return (await watchLines(trx, store, [{ line, address }], changes))[0]!;
}

/** watchLine for many lines at once (a batch approved), a few statements per network: their watch ids, in order. */
export async function watchLines(
  trx: Kysely<Database>, store: Store, items: ReadonlyArray<{ line: LineRow; address: { display: string; key: string } }>, changes: WatchChanges,
): Promise<string[]> {
  const ids: string[] = new Array<string>(items.length);
  const byEnv = new Map<string, number[]>();
  for (const [i, { line }] of items.entries()) {
    const key = `${line.account_id}:${line.network_environment_id}:${line.network}`;
    const group = byEnv.get(key);
    if (group) group.push(i);
    else byEnv.set(key, [i]);
  }
  for (const idx of byEnv.values()) {
    const first = items[idx[0]!]!.line;
    const env = store.catalog.environment(first.network_environment_id)!;
    const watches = await watchesForPayout(trx, { accountId: first.account_id, env, networkSlug: first.network }, idx.map((i) => items[i]!.address));
    for (const [k, w] of watches.entries()) {
      if (w.created && !changes.added.includes(w.row)) changes.added.push(w.row);
      ids[idx[k]!] = w.row.watch_id;
    }
  }
  return ids;
}

/** A watch no tracking line uses any more (a completed one holds it until `releaseHeld`) is given back to Address Watch (which removes a payouts' one). */
export async function releaseWatch(trx: Kysely<Database>, watchId: string | null, changes: WatchChanges): Promise<void> {
  await releaseWatches(trx, watchId === null ? [] : [watchId], changes);
}

/** releaseWatch for many watches at once (a batch's lines let go together): a few statements, not three a line. */
export async function releaseWatches(trx: Kysely<Database>, watchIds: ReadonlyArray<string | null>, changes: WatchChanges): Promise<void> {
  const ids = [...new Set(watchIds.filter((w): w is string => w !== null))];
  const free: string[] = [];
  for (let i = 0; i < ids.length; i += 200) {
    const part = ids.slice(i, i + 200);
    const using = new Set((await trx.selectFrom('payout_lines').select('watch_id').distinct().where('watch_id', 'in', part)
      .where('status', 'in', ['awaiting_payment', 'sent', 'completed']).execute()).map((r) => r.watch_id));
    free.push(...part.filter((w) => !using.has(w)));
  }
  changes.removed.push(...await payoutsDoneAll(trx, free));
}

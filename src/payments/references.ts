import { sql, type Kysely } from 'kysely';
import { chainOf } from '../chains/index.js';
import type { ReferenceFamily } from '../chains/traits.js';
import type { WatchLookup } from '../chains/family.js';
import type { Database, Environment, Store } from '../store/index.js';
import type { EnvironmentChains } from '../watch/chains.js';
import { hitEvents } from '../watch/events.js';
import type { ScannerLease } from '../watch/lease.js';
import { getCursor, recordReferenced } from '../watch/record.js';
import { getSettings, PaymentError, type ParsedAddress } from './orders.js';

/** Where a referenced order is paid and what it watches. */
export interface ReferencedAddress {
  /** The merchant's wallet: the order's `address`, what the customer pays. */
  address: ParsedAddress;
  index: null;
  /** The order's fresh reference key (`payment_orders.reference`). */
  reference: string;
  /** What the order's watch is on: the reference, under its watch key (`address_key`). */
  watch: ParsedAddress;
}

/**
 * On a family whose orders share the merchant's wallet (Solana Pay): the wallet the request
 * gives, else the settings' `wallets.<family>`, and a fresh reference for the order to watch.
 * Any number of open orders share one wallet; each watches its own reference, which no other
 * order has, so the open-address rule holds by construction. Undefined on other families.
 */
export async function referencedAddress(
  trx: Kysely<Database>, accountId: number, env: Environment, given: ParsedAddress | undefined,
): Promise<ReferencedAddress | undefined> {
  const reference = chainOf(env.network.family).payments.reference;
  if (!reference) return undefined;
  const family = env.network.family as ReferenceFamily;
  let address = given;
  if (!address) {
    const wallet = (await getSettings(trx, accountId)).wallets[family];
    if (!wallet) {
      throw new PaymentError('E_PAYMENT_INVALID', `address: required, or set the merchant's wallet first (PUT /v1/payments/settings with wallets.${family}): orders on ${env.network.slug} are paid to it, told apart by a Solana Pay reference`);
    }
    address = chainOf(family).parseAddress(env, wallet);
  }
  const key = reference.create();
  return { address, index: null, reference: key, watch: { display: key, key: reference.watchKey(key) } };
}

/** Orders looked up per environment and pass: the pass's RPC cost is at most this many `getSignaturesForAddress`. */
export const REFERENCE_SWEEP_ORDERS = 100;

/** Statuses of an open order still waiting for money: the ones a missed payment would change. */
const WAITING = ['pending', 'underpaid', 'expired'];

/**
 * The scanner's fallback on families with references (Solana Pay's `findReference`): open
 * orders still waiting for money are looked up by their reference (`ChainAdapter.referenced`),
 * and a final transaction naming it that their watch has no event of, in a block the scanner
 * has passed (it answered as skipped or missing, or the scanner's cursor was moved past it), is
 * recorded as the scanner records a block's hits (watch/record.ts `recordReferenced`): the
 * funding, reorg and finality rules then read it as any other. Only where this instance holds
 * the environment's scanner lease (`leaseOf`), so one instance asks the node; round robin over
 * the orders, `REFERENCE_SWEEP_ORDERS` per environment and pass (`after` keeps the place). The
 * number of events recorded.
 */
export async function sweepReferences(
  store: Store, chains: EnvironmentChains, registry: WatchLookup, leaseOf: (envId: number) => ScannerLease | undefined, after: Map<number, number>,
): Promise<number> {
  const envIds = [...new Set((await store.db.selectFrom('payment_orders').select('network_environment_id')
    .where('open', '=', sql.lit(1)).where('reference', 'is not', null).where('status', 'in', WAITING).execute())
    .map((r) => r.network_environment_id))];
  let recorded = 0;
  for (const envId of envIds) {
    const env = store.catalog.environment(envId);
    const lease = leaseOf(envId);
    if (!env || !lease) continue;
    const chain = chains.of(env);
    if (!chain.referenced) continue;
    const orders = await store.db.selectFrom('payment_orders').select(['id', 'reference', 'watch_id', 'address_key'])
      .where('open', '=', sql.lit(1)).where('network_environment_id', '=', envId).where('reference', 'is not', null)
      .where('status', 'in', WAITING).where('id', '>', after.get(envId) ?? 0).orderBy('id').limit(REFERENCE_SWEEP_ORDERS).execute();
    // Round robin: past the last one, from the start again.
    after.set(envId, orders.length === REFERENCE_SWEEP_ORDERS ? orders[orders.length - 1]!.id : 0);
    for (const o of orders) {
      // The watch as the scanner matches it (its registry's), so the events are the scanner's own.
      const watch = registry.lookup(envId, o.address_key)?.find((w) => w.watchId === o.watch_id);
      if (!watch) continue;
      const known = new Set((await hitEvents(store.db, { watchId: o.watch_id, types: ['payment'] }).execute()).map((e) => e.tx_hash));
      const cursor = await getCursor(store, envId);
      if (cursor === undefined) break;
      for (const tx of await chain.referenced(o.reference!, watch, cursor, known)) recorded += await recordReferenced(store, env, lease, tx);
    }
  }
  return recorded;
}

import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, Environment, Store } from '../store/index.js';
import { parseAddress } from '../watch/addresses.js';
import { envIdentifier } from '../store/index.js';
import { chainOf } from '../chains/index.js';
// The families whose traits derive addresses; each has `xpub_{family}` and `next_index_{family}` in payment_settings.
import { DERIVING_FAMILIES as DERIVING, REFERENCE_FAMILIES, type DerivingFamily, type ReferenceFamily } from '../chains/traits.js';
import type { OrderDerivation } from '../chains/family.js';
import { KeyMisfitError, XpubError } from '../chains/xpub.js';
import type { PaymentOrdersTable, PaymentSettingsTable } from '../store/payment-tables.js';
import { RpcctlError } from '../util/errors.js';

export type OrderRow = Selectable<PaymentOrdersTable>;
export type SettingsRow = Selectable<PaymentSettingsTable>;
import type { FailAt, PaymentSettings } from '../wire/payments.js';
export type { FailAt, PaymentStatus } from '../wire/payments.js';
export type ParsedAddress = ReturnType<typeof parseAddress>;

/**
 * A client mistake, naming what is wrong: an invalid request, a missing order, or one that
 * clashes with an existing order (the API's status for each code is in api/http.ts).
 */
export class PaymentError extends RpcctlError {
  readonly code: 'E_PAYMENT_INVALID' | 'E_NOT_FOUND' | 'E_CONFLICT';
  constructor(code: PaymentError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

/** Another writer changed the order first (a second process); the caller retries later. */
export class OrderChangedError extends RpcctlError {
  readonly code = 'E_ORDER_CHANGED';
}

type Xpubs = SettingsValues['xpubs'];

/** The settings a merchant sets (the API's view without `derived`). */
export type SettingsValues = Omit<PaymentSettings<DerivingFamily, ReferenceFamily>, 'derived'>;

export type StoredSettings = SettingsValues & { nextIndex: Record<DerivingFamily, number> };

export const DEFAULT_SETTINGS: SettingsValues = {
  xpubs: {}, wallets: {}, aml_fail_at: 'high', underpaid_tolerance_bps: 0, accept_late: false, display_name: null, redirect_url: null,
  payouts_approval_over: null,
};

export async function getSettings(db: Kysely<Database>, accountId: number): Promise<StoredSettings> {
  const r = await db.selectFrom('payment_settings').selectAll().where('account_id', '=', accountId).executeTakeFirst();
  const xpubs: Xpubs = {};
  const nextIndex = {} as Record<DerivingFamily, number>;
  for (const f of DERIVING) {
    nextIndex[f] = r?.[`next_index_${f}`] ?? 0;
    const key = r?.[`xpub_${f}`];
    if (key) xpubs[f] = key;
  }
  const wallets: SettingsValues['wallets'] = {};
  for (const f of REFERENCE_FAMILIES) {
    const wallet = r?.[`wallet_${f}`];
    if (wallet) wallets[f] = wallet;
  }
  if (!r) return { ...DEFAULT_SETTINGS, xpubs, nextIndex };
  return {
    xpubs, wallets, aml_fail_at: r.aml_fail_at as FailAt,
    underpaid_tolerance_bps: r.underpaid_tolerance_bps, accept_late: r.accept_late === 1,
    display_name: r.display_name, redirect_url: r.redirect_url,
    payouts_approval_over: r.payouts_approval_over && r.payouts_approval_currency ? { amount: r.payouts_approval_over, currency: r.payouts_approval_currency } : null,
    nextIndex,
  };
}

function derivationOf(family: DerivingFamily): OrderDerivation {
  return chainOf(family).payments.derivation!;
}

/** Checks an extended public key for a family; the error names the field. */
export function checkXpub(family: DerivingFamily, xpub: string): void {
  try {
    derivationOf(family).checkKey(xpub);
  } catch (err) {
    if (err instanceof XpubError) throw new XpubError(`xpubs.${family}: ${err.message}`);
    throw err;
  }
}

/**
 * Checks a merchant's wallet for a family whose orders share it; the error names the field.
 * Such a family's addresses read alike on each of its networks (Solana's base58 keys), so no
 * environment is needed to check one.
 */
export function checkWallet(family: ReferenceFamily, input: string): string {
  try {
    return chainOf(family).parseAddress({ slug: '', network: { slug: '', family }, upstreams: [] }, input).display;
  } catch (err) {
    throw new PaymentError('E_PAYMENT_INVALID', `wallets.${family}: ${(err as Error).message}`);
  }
}

/**
 * PUT: the keys given replace the stored ones ("" clears a text). A new xpub restarts its family's
 * child index at 0; the same key written anew (a UTXO key origin added) keeps it.
 */
export async function putSettings(db: Kysely<Database>, accountId: number, patch: Partial<SettingsValues>): Promise<void> {
  for (const f of DERIVING) {
    const x = patch.xpubs?.[f];
    if (x !== undefined && x !== '') checkXpub(f, x);
  }
  for (const f of REFERENCE_FAMILIES) {
    const w = patch.wallets?.[f];
    if (w !== undefined && w.trim() !== '') checkWallet(f, w);
  }
  await db.transaction().execute(async (trx) => {
    const current = await getSettings(trx, accountId);
    // A family left out of `xpubs` keeps its key; "" removes it.
    const xpub = (f: DerivingFamily) => (patch.xpubs?.[f] === undefined ? current.xpubs[f] ?? null : (patch.xpubs[f]!.trim() || null));
    const sameKey = (f: DerivingFamily, was = current.xpubs[f] ?? null, now = xpub(f)) =>
      now === was || (now !== null && was !== null && derivationOf(f).keyIdentity(now) === derivationOf(f).keyIdentity(was));
    const next = (f: DerivingFamily) => (sameKey(f) ? current.nextIndex[f] : 0);
    const keys = Object.fromEntries(DERIVING.flatMap((f) => [[`xpub_${f}`, xpub(f)], [`next_index_${f}`, next(f)]])) as
      { [F in DerivingFamily as `xpub_${F}`]: string | null } & { [F in DerivingFamily as `next_index_${F}`]: number };
    const wallet = (f: ReferenceFamily) => (patch.wallets?.[f] === undefined ? current.wallets[f] ?? null : (patch.wallets[f]!.trim() || null));
    const wallets = Object.fromEntries(REFERENCE_FAMILIES.map((f) => [`wallet_${f}`, wallet(f)])) as { [F in ReferenceFamily as `wallet_${F}`]: string | null };
    const values = {
      ...keys, ...wallets,
      aml_fail_at: patch.aml_fail_at ?? current.aml_fail_at,
      underpaid_tolerance_bps: patch.underpaid_tolerance_bps ?? current.underpaid_tolerance_bps,
      accept_late: (patch.accept_late ?? current.accept_late) ? 1 : 0,
      display_name: patch.display_name === undefined ? current.display_name : (patch.display_name?.trim() || null),
      redirect_url: patch.redirect_url === undefined ? current.redirect_url : (patch.redirect_url?.trim() || null),
      ...approvalColumns(patch.payouts_approval_over === undefined ? current.payouts_approval_over : patch.payouts_approval_over),
      updated_at: new Date().toISOString(),
    };
    await trx.insertInto('payment_settings').values({ account_id: accountId, ...values })
      .onConflict((oc) => oc.column('account_id').doUpdateSet(values)).execute();
  });
}

/** The payouts' approval threshold as its two columns (payouts/approval.ts reads them). */
function approvalColumns(over: SettingsValues['payouts_approval_over']) {
  return { payouts_approval_over: over?.amount ?? null, payouts_approval_currency: over?.currency ?? null };
}

/** The first address of each key, so the merchant can check it is the wallet they think. */
export function presentSettings(s: StoredSettings, catalog: Store['catalog']): PaymentSettings<DerivingFamily, ReferenceFamily> {
  const derived: PaymentSettings<DerivingFamily>['derived'] = {};
  for (const f of DERIVING) {
    const xpub = s.xpubs[f];
    if (!xpub) continue;
    const envs = catalog.networks.filter((n) => chainOf(n.family) === chainOf(f)).flatMap((n) => n.environments);
    const first = derivationOf(f).firstAddress(xpub, envs, envIdentifier);
    derived[f] = { ...first, next_index: s.nextIndex[f] };
  }
  return {
    xpubs: s.xpubs, wallets: s.wallets, aml_fail_at: s.aml_fail_at, underpaid_tolerance_bps: s.underpaid_tolerance_bps, accept_late: s.accept_late,
    display_name: s.display_name, redirect_url: s.redirect_url, payouts_approval_over: s.payouts_approval_over, derived,
  };
}

/** The given address (no other open order may hold it), or the next derived one and its index. */
export async function orderAddress(
  trx: Kysely<Database>, accountId: number, c: { env: Environment; given: ParsedAddress | undefined },
): Promise<{ address: ParsedAddress; index: number | null }> {
  const { env, given } = c;
  if (given) {
    const clash = await openOrderAt(trx, env.id, given.key);
    if (clash) throw addressTaken(given, clash, env);
    return { address: given, index: null };
  }
  const family = env.network.family;
  if (!chainOf(family).payments.derivation) {
    throw new PaymentError('E_PAYMENT_INVALID', `address: required on ${env.network.slug} (addresses are derived on ${DERIVING.join(', ')} networks only)`);
  }
  const deriving = family as DerivingFamily;
  const settings = await getSettings(trx, accountId);
  const xpub = settings.xpubs[deriving];
  if (!xpub) throw new PaymentError('E_PAYMENT_INVALID', `address: required, or set an extended public key first (PUT /v1/payments/settings with xpubs.${family}) to derive one per order`);
  const derive = deriver(env, deriving, xpub);
  // The next unused index: taken by the counter inside this transaction.
  for (let tries = 0; ; tries++) {
    const index = await takeIndex(trx, accountId, deriving);
    const candidate = parseAddress(env, derive(index));
    if (!(await openOrderAt(trx, env.id, candidate.key)) || tries > 100) return { address: candidate, index };
  }
}

export function addressTaken(address: { display: string }, clash: { order_id: string; payment_id: string }, env: Environment): PaymentError {
  return new PaymentError('E_CONFLICT', `address: ${address.display} already backs open order ${clash.order_id} (${clash.payment_id}) on ${envIdentifier(env)}; an address takes one open order at a time`);
}

/** Child index -> address on `env` for the family's key; a key that does not fit the network is the merchant's 400. */
function deriver(env: Environment, family: DerivingFamily, xpub: string): (index: number) => string {
  try {
    return derivationOf(family).deriver(xpub, env);
  } catch (err) {
    if (err instanceof KeyMisfitError) throw new PaymentError('E_PAYMENT_INVALID', `address: required, or ${err.message} (PUT /v1/payments/settings)`);
    throw err;
  }
}

/** A child index no order will use, for a payout's change (payouts/ asks; the counter is this table's). */
export async function reserveChildIndex(db: Kysely<Database>, accountId: number, family: DerivingFamily): Promise<number> {
  return db.transaction().execute((trx) => takeIndex(trx, accountId, family));
}

/** Takes the family's next child index (the counter moves in the caller's transaction). */
async function takeIndex(trx: Kysely<Database>, accountId: number, family: DerivingFamily): Promise<number> {
  const column = `next_index_${family}` as const;
  const row = await trx.updateTable('payment_settings').where('account_id', '=', accountId)
    .set((eb) => ({ [column]: eb(column, '+', 1) }))
    .returning(column).executeTakeFirstOrThrow();
  return (row as Record<typeof column, number>)[column] - 1;
}

export async function openOrderAt(trx: Kysely<Database>, envId: number, addressKey: string) {
  return trx.selectFrom('payment_orders').select(['order_id', 'payment_id'])
    .where('network_environment_id', '=', envId).where('address_key', '=', addressKey).where('open', '=', 1).executeTakeFirst();
}

/** An order's ids by its row key (refunds name their order by it). */
export async function orderIdsByPk(db: Kysely<Database>, pk: number): Promise<{ payment_id: string; order_id: string } | undefined> {
  return db.selectFrom('payment_orders').select(['payment_id', 'order_id']).where('id', '=', pk).executeTakeFirst();
}

export async function getOrder(db: Kysely<Database>, accountId: number, paymentId: string): Promise<OrderRow | undefined> {
  return db.selectFrom('payment_orders').selectAll().where('account_id', '=', accountId).where('payment_id', '=', paymentId).executeTakeFirst();
}

export async function listOrders(
  db: Kysely<Database>, q: { accountId: number; orderId?: string; status?: string; envId?: number; page: number; perPage: number },
): Promise<{ rows: OrderRow[]; total: number }> {
  let base = db.selectFrom('payment_orders').where('account_id', '=', q.accountId);
  if (q.orderId !== undefined) base = base.where('order_id', '=', q.orderId);
  if (q.status !== undefined) base = base.where('status', '=', q.status);
  if (q.envId !== undefined) base = base.where('network_environment_id', '=', q.envId);
  const [rows, total] = await Promise.all([
    base.selectAll().orderBy('id', 'desc').limit(q.perPage).offset((q.page - 1) * q.perPage).execute(),
    base.select(sql<number>`count(*)`.as('n')).executeTakeFirst(),
  ]);
  return { rows, total: Number(total?.n ?? 0) };
}

/** Transaction hashes of the order's funding that counts (of its asset, still on the chain). */
export async function fundingTxs(db: Kysely<Database>, orderPk: number): Promise<string[]> {
  const rows = await db.selectFrom('payment_funding').select('tx_hash').where('order_pk', '=', orderPk)
    .where('counted', '=', 1).where('removed', '=', 0).orderBy('id').execute();
  return [...new Set(rows.map((r) => r.tx_hash))];
}

export type { Environment };

/**
 * Where the merchant's coins are on an environment, for a payout's PSBT (payouts/ asks): each
 * derived address of the account's orders with its child index and the transactions whose
 * counted funding reached it.
 */
export async function coinSourcesOf(db: Kysely<Database>, accountId: number, envId: number): Promise<Array<{ address: string; index: number; txHashes: string[] }>> {
  const rows = await db.selectFrom('payment_orders as o').innerJoin('payment_funding as f', 'f.order_pk', 'o.id')
    .select(['o.address', 'o.derivation_index', 'f.tx_hash']).where('o.account_id', '=', accountId).where('o.network_environment_id', '=', envId)
    .where('o.derivation_index', 'is not', null).where('f.counted', '=', 1).where('f.removed', '=', 0).execute();
  const by = new Map<string, { address: string; index: number; txHashes: string[] }>();
  for (const r of rows) {
    const s = by.get(r.address) ?? { address: r.address, index: r.derivation_index!, txHashes: [] };
    if (!s.txHashes.includes(r.tx_hash)) s.txHashes.push(r.tx_hash);
    by.set(r.address, s);
  }
  return [...by.values()];
}

/** An order's ids by its row id (a refund's webhooks name them). */
export async function orderIdsOf(db: Kysely<Database>, orderPk: number): Promise<{ payment_id: string; order_id: string } | undefined> {
  return db.selectFrom('payment_orders').select(['payment_id', 'order_id']).where('id', '=', orderPk).executeTakeFirst();
}

import { createHash, randomBytes } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Config } from '../config/index.js';
import type { Database, Environment, Plan, Store, WatchedAddressRow } from '../store/index.js';
import { parseAddress } from '../watch/addresses.js';
import { addWatchIn, SlotLimitError } from '../watch/watches.js';
import { envIdentifier } from '../store/index.js';
import { enqueueDelivery } from '../webhooks/outbox.js';
import { WALLET_HIT_CREDITS } from '../pricing/credits.js';
import { fromBaseUnits, toBaseUnits } from './amounts.js';
import { assetOfRow, resolveAsset } from './assets.js';
import type { AmlResult } from './aml/types.js';
import { chainOf } from '../chains/index.js';
import type { OrderDerivation } from '../chains/family.js';
import { KeyMisfitError, XpubError } from '../chains/xpub.js';
import type { PaymentOrdersTable, PaymentSettingsTable } from '../store/payment-tables.js';
import { RpcctlError } from '../util/errors.js';

export type OrderRow = Selectable<PaymentOrdersTable>;
export type SettingsRow = Selectable<PaymentSettingsTable>;
export type PaymentStatus = 'pending' | 'seen' | 'aml_check' | 'paid' | 'failed' | 'underpaid' | 'expired';
export type FailAt = 'medium' | 'high' | 'severe';

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

/**
 * Chain families whose addresses an order can derive from an extended public key (their
 * adapters have `payments.derivation`); each has its columns `xpub_{family}` and
 * `next_index_{family}` in payment_settings.
 */
export const DERIVING = ['evm', 'utxo', 'tron'] as const;
export type DerivingFamily = (typeof DERIVING)[number];
type Xpubs = Partial<Record<DerivingFamily, string>>;

export interface PaymentSettings {
  xpubs: Xpubs;
  aml_fail_at: FailAt;
  underpaid_tolerance_bps: number;
  accept_late: boolean;
  /** The checkout page's heading; null: the page names no merchant. */
  display_name: string | null;
  /** Where the checkout page sends a paid customer, with `?order_id=`; null: nowhere. */
  redirect_url: string | null;
}

export type StoredSettings = PaymentSettings & { nextIndex: Record<DerivingFamily, number> };

export const DEFAULT_SETTINGS: PaymentSettings = {
  xpubs: {}, aml_fail_at: 'high', underpaid_tolerance_bps: 0, accept_late: false, display_name: null, redirect_url: null,
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
  if (!r) return { ...DEFAULT_SETTINGS, xpubs, nextIndex };
  return {
    xpubs, aml_fail_at: r.aml_fail_at as FailAt,
    underpaid_tolerance_bps: r.underpaid_tolerance_bps, accept_late: r.accept_late === 1,
    display_name: r.display_name, redirect_url: r.redirect_url,
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

/** PUT: the keys given replace the stored ones ("" clears a text). A new xpub restarts its family's child index at 0. */
export async function putSettings(db: Kysely<Database>, accountId: number, patch: Partial<PaymentSettings>): Promise<void> {
  for (const f of DERIVING) {
    const x = patch.xpubs?.[f];
    if (x !== undefined && x !== '') checkXpub(f, x);
  }
  await db.transaction().execute(async (trx) => {
    const current = await getSettings(trx, accountId);
    // A family left out of `xpubs` keeps its key; "" removes it.
    const xpub = (f: DerivingFamily) => (patch.xpubs?.[f] === undefined ? current.xpubs[f] ?? null : (patch.xpubs[f]!.trim() || null));
    const next = (f: DerivingFamily) => (xpub(f) === (current.xpubs[f] ?? null) ? current.nextIndex[f] : 0);
    const keys = Object.fromEntries(DERIVING.flatMap((f) => [[`xpub_${f}`, xpub(f)], [`next_index_${f}`, next(f)]])) as
      { [F in DerivingFamily as `xpub_${F}`]: string | null } & { [F in DerivingFamily as `next_index_${F}`]: number };
    const values = {
      ...keys,
      aml_fail_at: patch.aml_fail_at ?? current.aml_fail_at,
      underpaid_tolerance_bps: patch.underpaid_tolerance_bps ?? current.underpaid_tolerance_bps,
      accept_late: (patch.accept_late ?? current.accept_late) ? 1 : 0,
      display_name: patch.display_name === undefined ? current.display_name : (patch.display_name?.trim() || null),
      redirect_url: patch.redirect_url === undefined ? current.redirect_url : (patch.redirect_url?.trim() || null),
      updated_at: new Date().toISOString(),
    };
    await trx.insertInto('payment_settings').values({ account_id: accountId, ...values })
      .onConflict((oc) => oc.column('account_id').doUpdateSet(values)).execute();
  });
}

/** The first address of each key, so the merchant can check it is the wallet they think. */
export function presentSettings(s: StoredSettings, catalog: Store['catalog']) {
  const derived: {
    evm?: { first_address: string; next_index: number };
    utxo?: { first_address: string; network: string; next_index: number };
    tron?: { first_address: string; next_index: number };
  } = {};
  for (const f of DERIVING) {
    const xpub = s.xpubs[f];
    if (!xpub) continue;
    const envs = catalog.networks.filter((n) => chainOf(n.family) === chainOf(f)).flatMap((n) => n.environments);
    const first = derivationOf(f).firstAddress(xpub, envs, envIdentifier);
    (derived as Record<DerivingFamily, object>)[f] = { ...first, next_index: s.nextIndex[f] };
  }
  return {
    xpubs: s.xpubs, aml_fail_at: s.aml_fail_at, underpaid_tolerance_bps: s.underpaid_tolerance_bps, accept_late: s.accept_late,
    display_name: s.display_name, redirect_url: s.redirect_url, derived,
  };
}

export interface CreateInput {
  order_id: string;
  network_slug: string;
  amount: string;
  asset?: string;
  address?: string;
  expires_in?: number;
  webhook_url?: string;
  metadata?: Record<string, unknown>;
}

export interface CreateContext {
  store: Store;
  config: Config;
  accountId: number;
  plan: Plan | undefined;
  nowMs?: number;
}

/** The created or existing order, and the watch row when a new watch was made (to register in memory). */
export interface CreateResult {
  order: OrderRow;
  created: boolean;
  newWatch: WatchedAddressRow | undefined;
}

/** A create request checked against the catalog and config: what the transaction writes. */
interface CheckedCreate {
  env: Environment;
  asset: ReturnType<typeof resolveAsset>;
  amountRaw: bigint;
  /** The address the request gives; undefined: one is derived from the merchant's key. */
  given: ParsedAddress | undefined;
  expiresIn: number;
  /** What a retry must match to get the same order back. */
  hash: string;
}

type ParsedAddress = ReturnType<typeof parseAddress>;

/**
 * Creates an order, or returns the existing one with the same `order_id` and the same body
 * (a retried request); another body with that `order_id` is a 409. Index allocation, the
 * slot check, the watch and the order are one transaction, so concurrent creates with one
 * `order_id` give one order, and two orders never get one derived address.
 */
export async function createOrder(ctx: CreateContext, input: CreateInput): Promise<CreateResult> {
  const { store } = ctx;
  const checked = checkCreate(ctx, input);
  const { env, given, hash } = checked;
  const attempt = () => store.db.transaction().execute(async (trx): Promise<CreateResult> => {
    const existing = await trx.selectFrom('payment_orders').selectAll()
      .where('account_id', '=', ctx.accountId).where('order_id', '=', input.order_id).executeTakeFirst();
    if (existing) return { order: sameOrConflict(existing, hash), created: false, newWatch: undefined };
    const { address, index } = await orderAddress(trx, ctx.accountId, checked);
    return insertOrder(trx, ctx, input, checked, address, index);
  });

  try {
    return await attempt();
  } catch (err) {
    // A concurrent create with the same order_id won the unique constraint: answer with its order.
    if (err instanceof PaymentError || err instanceof SlotLimitError) throw err;
    const existing = await store.db.selectFrom('payment_orders').selectAll()
      .where('account_id', '=', ctx.accountId).where('order_id', '=', input.order_id).executeTakeFirst();
    if (existing) return { order: sameOrConflict(existing, hash), created: false, newWatch: undefined };
    // A concurrent create at the same given address won the open-address index: the same 409
    // as when it had committed first.
    const clash = given && await openOrderAt(store.db, env.id, given.key);
    if (given && clash) throw addressTaken(given, clash, env);
    throw err;
  }
}

/** The request's network, asset, amount and address, each a 400 naming its field when wrong. */
function checkCreate(ctx: CreateContext, input: CreateInput): CheckedCreate {
  const { store, config } = ctx;
  const env = store.catalog.environmentBySlug(input.network_slug);
  if (!env) throw new PaymentError('E_PAYMENT_INVALID', `network_slug: unknown network "${input.network_slug}" (use a network slug such as "eth", or "{network}-{environment}")`);
  let asset;
  try {
    asset = resolveAsset(config, env, input.asset);
  } catch (err) {
    throw new PaymentError('E_PAYMENT_INVALID', `asset: ${(err as Error).message}`);
  }
  let amountRaw: bigint;
  try {
    amountRaw = toBaseUnits(input.amount, asset.decimals);
  } catch (err) {
    throw new PaymentError('E_PAYMENT_INVALID', `amount: ${(err as Error).message}`);
  }
  let given: ParsedAddress | undefined;
  if (input.address !== undefined) {
    try {
      given = parseAddress(env, input.address);
    } catch (err) {
      throw new PaymentError('E_PAYMENT_INVALID', `address: ${(err as Error).message}`);
    }
  }
  const expiresIn = input.expires_in ?? 3600;
  const hash = createHash('sha256').update(JSON.stringify([
    input.order_id, env.id, asset.id, amountRaw.toString(), given?.key ?? null, expiresIn, input.webhook_url ?? null, canonical(input.metadata ?? null),
  ])).digest('hex');
  return { env, asset, amountRaw, given, expiresIn, hash };
}

/** The given address (no other open order may hold it), or the next derived one and its index. */
async function orderAddress(trx: Kysely<Database>, accountId: number, c: CheckedCreate): Promise<{ address: ParsedAddress; index: number | null }> {
  const { env, given } = c;
  if (given) {
    const clash = await openOrderAt(trx, env.id, given.key);
    if (clash) throw addressTaken(given, clash, env);
    return { address: given, index: null };
  }
  const family = env.network.family;
  if (!chainOf(family).payments.derivation) {
    throw new PaymentError('E_PAYMENT_INVALID', `address: required on ${env.network.slug} (deriving addresses is supported for EVM, UTXO and Tron networks)`);
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

/** The order's watch (through Address Watch's writer) and its row. */
async function insertOrder(
  trx: Kysely<Database>, ctx: CreateContext, input: CreateInput, c: CheckedCreate, address: ParsedAddress, index: number | null,
): Promise<CreateResult> {
  const { env, asset, amountRaw, expiresIn, hash } = c;
  const nowMs = ctx.nowMs ?? Date.now();
  const now = new Date(nowMs).toISOString();
  // Through Address Watch's writer: the instance holding the scanner lease hears of it.
  const { row: watch, created: watchCreated } = await addWatchIn(trx, {
    accountId: ctx.accountId, plan: ctx.plan, env, networkSlug: input.network_slug, address, createdAt: now,
    slotLimitMessage: (slots, planName) => slots === 0
      ? `Payments need watched-address slots: the ${planName} plan has none (webhook_address_slots is 0); upgrade the plan`
      : `Watched address limit reached: the ${planName} plan allows ${slots} (webhook_address_slots), and every open order holds one`,
  });
  const newWatch = watchCreated ? watch : undefined;
  const expiresMs = nowMs + expiresIn * 1000;
  const order = await trx.insertInto('payment_orders').values({
    payment_id: `pay_${randomBytes(12).toString('base64url')}`, account_id: ctx.accountId, order_id: input.order_id, request_hash: hash,
    network_environment_id: env.id, network: input.network_slug, asset: asset.id, decimals: asset.decimals,
    address: address.display, address_key: address.key, derivation_index: index, watch_id: watch.watch_id, owns_watch: newWatch ? 1 : 0,
    amount_raw: amountRaw.toString(), received_raw: '0', status: 'pending', reason: null, late: 0, overpaid: 0, lifecycle: 'pending', aml: null,
    seq: 0, expires_at: new Date(expiresMs).toISOString(), expires_ms: expiresMs, monitor_until_ms: expiresMs + ctx.config.payments.late_window_s * 1000,
    open: 1, webhook_url: input.webhook_url ?? null, metadata: input.metadata === undefined ? null : JSON.stringify(input.metadata),
    created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  return { order, created: true, newWatch };
}

function addressTaken(address: { display: string }, clash: { order_id: string; payment_id: string }, env: Environment): PaymentError {
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

/** Takes the family's next child index (the counter moves in the caller's transaction). */
async function takeIndex(trx: Kysely<Database>, accountId: number, family: DerivingFamily): Promise<number> {
  const column = `next_index_${family}` as const;
  const row = await trx.updateTable('payment_settings').where('account_id', '=', accountId)
    .set((eb) => ({ [column]: eb(column, '+', 1) }))
    .returning(column).executeTakeFirstOrThrow();
  return (row as Record<typeof column, number>)[column] - 1;
}

function sameOrConflict(existing: OrderRow, hash: string): OrderRow {
  if (existing.request_hash !== hash) {
    throw new PaymentError('E_CONFLICT', `order_id: "${existing.order_id}" already exists (${existing.payment_id}) with a different body; use a new order_id or send the same body`);
  }
  return existing;
}

export async function openOrderAt(trx: Kysely<Database>, envId: number, addressKey: string) {
  return trx.selectFrom('payment_orders').select(['order_id', 'payment_id'])
    .where('network_environment_id', '=', envId).where('address_key', '=', addressKey).where('open', '=', 1).executeTakeFirst();
}

function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
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

/** The order as the API shows it; `publicUrl` is the API's base as customers reach it (AppContext.publicUrl). */
export function presentOrder(config: Config, store: Store, o: OrderRow, txHashes: string[], publicUrl: string) {
  const env = store.catalog.environment(o.network_environment_id);
  const asset = assetOfRow(config, env, o.asset, o.decimals);
  return {
    payment_id: o.payment_id, order_id: o.order_id, status: o.status as PaymentStatus, network: o.network,
    asset: o.asset, asset_symbol: asset.symbol, decimals: o.decimals, address: o.address, watch_id: o.watch_id,
    derivation_index: o.derivation_index,
    amount: fromBaseUnits(o.amount_raw, o.decimals), amount_raw: o.amount_raw,
    amount_received: fromBaseUnits(o.received_raw, o.decimals), amount_received_raw: o.received_raw,
    tx_hashes: txHashes, confirmations: env?.confirmations ?? 1,
    expires_at: o.expires_at, created_at: o.created_at, updated_at: o.updated_at,
    webhook_url: o.webhook_url, metadata: o.metadata === null ? null : JSON.parse(o.metadata) as unknown,
    aml: o.aml === null ? null : JSON.parse(o.aml) as AmlResult, reason: o.reason, late: o.late === 1, overpaid: o.overpaid === 1,
    lifecycle: o.lifecycle,
    checkout_url: checkoutUrl(publicUrl, o.payment_id),
  };
}

/** The order's hosted checkout page: its payment id (96 random bits) is the only credential. */
export function checkoutUrl(publicUrl: string, paymentId: string): string {
  return `${publicUrl}/pay/${paymentId}`;
}

export type PaymentObject = ReturnType<typeof presentOrder>;

export interface Transition {
  status: Exclude<PaymentStatus, 'pending'>;
  txHash: string | null;
  reason?: string | null;
  aml?: AmlResult | null;
  late?: boolean;
  receivedRaw?: bigint;
  overpaid?: boolean;
  /** Closes the order: its address is free for another order. */
  close?: boolean;
  monitorUntilMs?: number;
}

/**
 * Moves the order to a new status and writes its webhook into the outbox, in the caller's
 * transaction: the transition and its delivery commit together or not at all. The update
 * is a compare-and-set on `seq`, so two writers can never both move one order.
 */
export async function transition(trx: Kysely<Database>, ctx: { store: Store; config: Config }, order: OrderRow, t: Transition, nowMs = Date.now()): Promise<OrderRow> {
  const now = new Date(nowMs).toISOString();
  const next: OrderRow = {
    ...order,
    status: t.status,
    reason: t.reason === undefined ? (t.status === 'failed' || t.status === 'expired' ? order.reason : null) : t.reason,
    aml: t.aml === undefined ? order.aml : t.aml === null ? null : JSON.stringify(t.aml),
    late: t.late ? 1 : order.late,
    received_raw: t.receivedRaw === undefined ? order.received_raw : t.receivedRaw.toString(),
    overpaid: t.overpaid === undefined ? order.overpaid : t.overpaid ? 1 : 0,
    lifecycle: `${order.lifecycle}>${t.status}`,
    seq: order.seq + 1,
    open: t.close ? 0 : order.open,
    monitor_until_ms: t.monitorUntilMs ?? order.monitor_until_ms,
    updated_at: now,
  };
  const res = await trx.updateTable('payment_orders').set({
    status: next.status, reason: next.reason, aml: next.aml, late: next.late, received_raw: next.received_raw, overpaid: next.overpaid,
    lifecycle: next.lifecycle, seq: next.seq, open: next.open, monitor_until_ms: next.monitor_until_ms, updated_at: now,
  }).where('id', '=', order.id).where('seq', '=', order.seq).executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) throw new OrderChangedError(`order ${order.payment_id} changed under us`);
  await enqueueDelivery(trx, {
    accountId: order.account_id, eventId: null, webhookId: `${order.payment_id}_${next.seq}`, type: 'payment_order', network: order.network,
    body: webhookBody(ctx, next, t.txHash, now), credits: WALLET_HIT_CREDITS, isTest: false,
    sequenceKey: order.payment_id, targetUrl: order.webhook_url,
  // Due now whatever clock the decision used (a test may run the engine ahead of time).
  }, Math.min(nowMs, Date.now()));
  return next;
}

/** The spec's payment-order fields, then ours. `status` is the event; `aml` is null on `aml_check`. */
export function webhookBody({ store, config }: { store: Store; config: Config }, o: OrderRow, txHash: string | null, createdAt: string): string {
  const env = store.catalog.environment(o.network_environment_id);
  return JSON.stringify({
    id: `${o.payment_id}_${o.seq}`,
    product: 'payments', type: 'payment_order', event: o.status, payment_id: o.payment_id, order_id: o.order_id, watch_id: o.watch_id,
    network: o.network, address: o.address, amount: fromBaseUnits(o.amount_raw, o.decimals), amount_raw: o.amount_raw,
    status: o.status, tx_hash: txHash, lifecycle: o.lifecycle, aml: o.status === 'aml_check' ? null : o.aml === null ? null : JSON.parse(o.aml) as unknown,
    reason: o.reason, late: o.late === 1, overpaid: o.overpaid === 1,
    asset: o.asset, asset_symbol: env ? assetOfRow(config, env, o.asset, o.decimals).symbol : o.asset,
    amount_received: fromBaseUnits(o.received_raw, o.decimals), amount_received_raw: o.received_raw,
    expires_at: o.expires_at, metadata: o.metadata === null ? null : JSON.parse(o.metadata) as unknown,
    sequence: o.seq, created_at: createdAt,
  });
}

export { SlotLimitError };
export type { Environment };

import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Config } from '../config/index.js';
import type { Database, Environment, CatalogPlan, Store, WatchedAddressRow } from '../store/index.js';
import { parseAddress } from '../watch/addresses.js';
import { addWatchIn, SlotLimitError } from '../watch/watches.js';
import { toBaseUnits } from './amounts.js';
import { canonicalDecimal, isCurrency, priceToBaseUnits } from './fiat.js';
import { RateUnavailableError, type LockedRate, type RateSource } from './rates.js';
import { resolveAsset } from './assets.js';
import { tellWatch } from './holds.js';
import { referencedAddress, type ReferencedAddress } from './references.js';
import type { CreatePayment } from '../wire/payments.js';
import { addressTaken, openOrderAt, orderAddress, PaymentError, type OrderRow, type ParsedAddress } from './orders.js';

export interface CreateContext {
  store: Store;
  config: Config;
  accountId: number;
  plan: CatalogPlan | undefined;
  /** Rates for orders priced in a fiat currency. */
  rates: RateSource;
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
  /** Undefined for a fiat price until its rate is locked. */
  amountRaw: bigint | undefined;
  fiat: { price: string; currency: string; rate?: LockedRate } | undefined;
  /** The address the request gives; undefined: one is derived from the merchant's key. */
  given: ParsedAddress | undefined;
  expiresIn: number;
  /** What a retry must match to get the same order back. */
  hash: string;
}


/**
 * Creates an order, or returns the existing one with the same `order_id` and the same body
 * (a retried request); another body with that `order_id` is a 409. Index allocation, the
 * slot check, the watch and the order are one transaction, so concurrent creates with one
 * `order_id` give one order, and two orders never get one derived address.
 */
export async function createOrder(ctx: CreateContext, input: CreatePayment): Promise<CreateResult> {
  const { store } = ctx;
  let checked = checkCreate(ctx, input);
  const { env, given, hash } = checked;
  if (checked.fiat) {
    // A retry returns its order whatever the rate does now; a new order locks the rate
    // before the transaction (a fetch never holds the store's write lock).
    const existing = await store.db.selectFrom('payment_orders').selectAll()
      .where('account_id', '=', ctx.accountId).where('order_id', '=', input.order_id).executeTakeFirst();
    if (existing) return { order: sameOrConflict(existing, hash), created: false, newWatch: undefined };
    checked = await lockRate(ctx.rates, checked, checked.fiat);
  }
  const attempt = () => store.db.transaction().execute(async (trx): Promise<CreateResult> => {
    const existing = await trx.selectFrom('payment_orders').selectAll()
      .where('account_id', '=', ctx.accountId).where('order_id', '=', input.order_id).executeTakeFirst();
    if (existing) return { order: sameOrConflict(existing, hash), created: false, newWatch: undefined };
    const at = await referencedAddress(trx, ctx.accountId, env, given) ?? await orderAddress(trx, ctx.accountId, checked);
    return insertOrder(trx, ctx, input, checked, at);
  });

  try {
    return await attempt();
  } catch (err) {
    // A concurrent create with the same order_id won the unique constraint: answer with its order.
    if (err instanceof PaymentError || err instanceof SlotLimitError || err instanceof RateUnavailableError) throw err;
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
function checkCreate(ctx: CreateContext, input: CreatePayment): CheckedCreate {
  const { store, config } = ctx;
  const env = store.catalog.environmentBySlug(input.network_slug);
  if (!env) throw new PaymentError('E_PAYMENT_INVALID', `network_slug: unknown network "${input.network_slug}" (use a network slug such as "eth", or "{network}-{environment}")`);
  let asset;
  try {
    asset = resolveAsset(config, env, input.asset);
  } catch (err) {
    throw new PaymentError('E_PAYMENT_INVALID', `asset: ${(err as Error).message}`);
  }
  const { amountRaw, fiat } = checkPrice(input, asset.decimals);
  let given: ParsedAddress | undefined;
  if (input.address !== undefined) {
    try {
      given = parseAddress(env, input.address);
    } catch (err) {
      throw new PaymentError('E_PAYMENT_INVALID', `address: ${(err as Error).message}`);
    }
  }
  const expiresIn = input.expires_in ?? 3600;
  const request: unknown[] = [
    input.order_id, env.id, asset.id, amountRaw?.toString() ?? null, given?.key ?? null, expiresIn, input.webhook_url ?? null, canonical(input.metadata ?? null),
  ];
  // Appended, so orders priced in the asset keep the hashes they were stored with.
  if (fiat) request.push(fiat.price, fiat.currency);
  const hash = createHash('sha256').update(JSON.stringify(request)).digest('hex');
  return { env, asset, amountRaw, fiat, given, expiresIn, hash };
}

/** Exactly one of `amount` (in the asset) or `price_amount` + `price_currency`; each mistake names its field. */
function checkPrice(input: CreatePayment, decimals: number): Pick<CheckedCreate, 'amountRaw' | 'fiat'> {
  const invalid = (message: string) => new PaymentError('E_PAYMENT_INVALID', message);
  if (input.amount !== undefined && input.price_amount !== undefined) {
    throw invalid('price_amount: give either amount (in the asset) or price_amount with price_currency, not both');
  }
  if (input.price_amount === undefined) {
    if (input.price_currency !== undefined) throw invalid('price_amount: is required with price_currency (a decimal string such as "19.99")');
    if (input.amount === undefined) throw invalid('amount: is required (a decimal string in the asset such as "12.50"), or give price_amount with price_currency');
    try {
      return { amountRaw: toBaseUnits(input.amount, decimals), fiat: undefined };
    } catch (err) {
      throw invalid(`amount: ${(err as Error).message}`);
    }
  }
  let price: string;
  try {
    price = canonicalDecimal(input.price_amount);
  } catch (err) {
    throw invalid(`price_amount: ${(err as Error).message}`);
  }
  const currency = input.price_currency;
  if (currency === undefined) throw invalid('price_currency: is required with price_amount (an ISO 4217 code such as "USD")');
  if (!isCurrency(currency)) throw invalid(`price_currency: must be an ISO 4217 currency code in capitals, such as "USD" or "EUR" (got "${currency}")`);
  return { amountRaw: undefined, fiat: { price, currency } };
}

/** A fiat-priced order with its rate locked and its amount: the price at that rate, rounded up to the base unit. */
async function lockRate(rates: RateSource, c: CheckedCreate, fiat: NonNullable<CheckedCreate['fiat']>): Promise<CheckedCreate> {
  const rate = await rates.rate(c.asset.symbol.toUpperCase(), fiat.currency);
  return { ...c, fiat: { ...fiat, rate }, amountRaw: priceToBaseUnits(fiat.price, rate.rate, c.asset.decimals) };
}

/**
 * The order's watch (through Address Watch's writer) and its row: the watch is on the order's
 * address, or on its reference where orders share the merchant's wallet (references.ts).
 */
async function insertOrder(
  trx: Kysely<Database>, ctx: CreateContext, input: CreatePayment, c: CheckedCreate, at: { address: ParsedAddress; index: number | null } | ReferencedAddress,
): Promise<CreateResult> {
  const { address, index } = at;
  const watched: ParsedAddress = 'watch' in at ? at.watch : address;
  const { env, asset, expiresIn, hash, fiat } = c;
  const amountRaw = c.amountRaw!;
  const nowMs = ctx.nowMs ?? Date.now();
  const now = new Date(nowMs).toISOString();
  // Through Address Watch's writer: the instance holding the scanner lease hears of it.
  const { row: watch, created: watchCreated } = await addWatchIn(trx, {
    accountId: ctx.accountId, plan: ctx.plan, env, networkSlug: input.network_slug, address: watched, createdAt: now, forOrder: true,
    slotLimitMessage: (slots, planName) => slots === 0
      ? `Payments need watched-address slots: the ${planName} plan has none (webhook_address_slots is 0); upgrade the plan`
      : `Watched address limit reached: the ${planName} plan allows ${slots} (webhook_address_slots), and every open order holds one`,
  });
  const newWatch = watchCreated ? watch : undefined;
  const expiresMs = nowMs + expiresIn * 1000;
  const order = await trx.insertInto('payment_orders').values({
    payment_id: `pay_${randomBytes(12).toString('base64url')}`, account_id: ctx.accountId, order_id: input.order_id, request_hash: hash,
    network_environment_id: env.id, network: input.network_slug, asset: asset.id, decimals: asset.decimals,
    address: address.display, address_key: watched.key, reference: 'reference' in at ? at.reference : null, derivation_index: index, watch_id: watch.watch_id, owns_watch: newWatch ? 1 : 0,
    amount_raw: amountRaw.toString(), received_raw: '0', status: 'pending', reason: null, late: 0, overpaid: 0, lifecycle: 'pending', aml: null,
    seq: 0, expires_at: new Date(expiresMs).toISOString(), expires_ms: expiresMs, monitor_until_ms: expiresMs + ctx.config.payments.late_window_s * 1000,
    open: 1, webhook_url: input.webhook_url ?? null, metadata: input.metadata === undefined ? null : JSON.stringify(input.metadata),
    created_at: now, updated_at: now,
    ...(fiat && { price_amount: fiat.price, price_currency: fiat.currency, rate: fiat.rate!.rate, rate_source: fiat.rate!.source, rate_at: fiat.rate!.at }),
  }).returningAll().executeTakeFirstOrThrow();
  await tellWatch(trx, watch.watch_id);
  return { order, created: true, newWatch };
}

function sameOrConflict(existing: OrderRow, hash: string): OrderRow {
  if (existing.request_hash !== hash) {
    throw new PaymentError('E_CONFLICT', `order_id: "${existing.order_id}" already exists (${existing.payment_id}) with a different body; use a new order_id or send the same body`);
  }
  return existing;
}

function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
}


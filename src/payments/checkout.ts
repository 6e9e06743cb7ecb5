import type { ServerResponse } from 'node:http';
import QRCode from 'qrcode';
import type { OpenPageContext, OpenPageRoute } from '../cabinet/index.js';
import { send } from '../cabinet/index.js';
import { chainOf } from '../chains/index.js';
import type { Config } from '../config/index.js';
import type { Limits } from '../limits/index.js';
import type { Store } from '../store/index.js';
import { rateLimitKey } from '../util/ip.js';
import type { EnvironmentChains } from '../watch/chains.js';
import { fromBaseUnits } from './amounts.js';
import { assetOfRow } from './assets.js';
import { checkoutPage, notFoundPage, tooManyPage, type CheckoutView } from './checkout-page.js';
import { languageHeaders, pickLanguage } from './hosted-page.js';
import { shownRaw } from './shown-amount.js';
import { getSettings, type OrderRow, type PaymentStatus } from './orders.js';

export interface CheckoutDeps {
  store: Store;
  config: Config;
  /** The engine's adapters: an EVM page's URI names the node's chain id. */
  chains: EnvironmentChains;
  limits: Limits;
  log: (line: string) => void;
}

/** Today's ids: `pay_` and 12 random bytes in base64url. Anything else is not looked up. */
const PAYMENT_ID = /^pay_[A-Za-z0-9_-]{16}$/;

/**
 * The hosted checkout page (`/pay/{payment_id}`) and its status poll, open to anyone with the
 * link: the payment id's 96 random bits are the credential. Both count against their own
 * per-client window (`payments.checkout.rpm_per_ip`), besides the listener's per-IP limit.
 */
export function checkoutPages(deps: CheckoutDeps): OpenPageRoute[] {
  const window = deps.limits.window('checkout-ip', 60_000);
  const limited = async (ctx: OpenPageContext): Promise<number> =>
    window.take(rateLimitKey(ctx.ip), deps.config.payments.checkout.rpm_per_ip);
  return [
    {
      method: 'GET', path: '/pay/{payment_id}',
      async handler(ctx) {
        const lang = pickLanguage(ctx.url.searchParams.get('lang'), ctx.req.headers['accept-language']);
        const headers = languageHeaders(lang);
        const wait = await limited(ctx);
        if (wait > 0) return send(ctx.res, 429, tooManyPage(ctx.assets, lang), { 'retry-after': String(wait), ...headers });
        const view = await loadView(deps, ctx.params.payment_id!);
        if (!view) return send(ctx.res, 404, notFoundPage(ctx.assets, lang), headers);
        send(ctx.res, 200, checkoutPage(ctx.assets, view, lang), headers);
      },
    },
    {
      method: 'GET', path: '/pay/{payment_id}/status',
      async handler(ctx) {
        const wait = await limited(ctx);
        if (wait > 0) return json(ctx.res, 429, { ok: false, error: 'Rate limit exceeded' }, { 'retry-after': String(wait) });
        const order = await findOrder(deps.store, ctx.params.payment_id!);
        if (!order) return json(ctx.res, 404, { ok: false, error: 'Payment not found' });
        json(ctx.res, 200, { ok: true, ...publicStatus(order) });
      },
    },
  ];
}

function json(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store',
    'x-content-type-options': 'nosniff', ...headers,
  });
  res.end(text);
}

async function findOrder(store: Store, paymentId: string): Promise<OrderRow | undefined> {
  if (!PAYMENT_ID.test(paymentId)) return undefined;
  return store.db.selectFrom('payment_orders').selectAll().where('payment_id', '=', paymentId).executeTakeFirst();
}

/**
 * What the status poll shows: enough for the page to know it changed. Never the account,
 * the reason, the AML result or the transactions.
 */
function publicStatus(o: OrderRow) {
  const due = BigInt(o.amount_raw) - BigInt(o.received_raw);
  return {
    status: o.status as PaymentStatus,
    amount: fromBaseUnits(o.amount_raw, o.decimals),
    amount_received: fromBaseUnits(o.received_raw, o.decimals),
    amount_due: fromBaseUnits(due > 0n ? due : 0n, o.decimals),
    expires_at: o.expires_at,
    /** Changes whenever the page would: the page reloads its content when it does. */
    version: `${o.status}:${o.seq}:${o.received_raw}`,
  };
}

/** The order as its page shows it, or undefined when there is no such order. */
async function loadView(deps: CheckoutDeps, paymentId: string): Promise<CheckoutView | undefined> {
  const order = await findOrder(deps.store, paymentId);
  if (!order) return undefined;
  const env = deps.store.catalog.environment(order.network_environment_id);
  if (!env) return undefined;
  const settings = await getSettings(deps.store.db, order.account_id);
  const asset = assetOfRow(deps.config, env, order.asset, order.decimals);
  const s = publicStatus(order);
  const dueRaw = BigInt(order.amount_raw) - BigInt(order.received_raw);
  // What the customer is shown, the QR and the wallet link ask for: a fiat-priced order's
  // amount rounded up to what wallets show (shown-amount.ts); underpaid, what is still due.
  const shown = (raw: bigint) => shownRaw(order, asset.symbol, raw);
  const amountRaw = shown(BigInt(order.amount_raw));
  const shownDue = dueRaw > 0n ? shown(dueRaw) : 0n;
  const askRaw = order.status === 'underpaid' && dueRaw > 0n ? shownDue : amountRaw;
  const family = chainOf(env.network.family);
  let uri: string;
  try {
    uri = await family.payments.paymentUri(
      {
        env, address: order.address, asset: order.asset, amountRaw: askRaw, decimals: order.decimals,
        reference: order.reference ?? undefined, label: settings.display_name ?? undefined, message: `Order ${order.order_id}`,
      },
      () => deps.chains.of(env),
    );
  } catch (err) {
    // The node is away (an EVM chain id): the bare address still lets the customer pay.
    deps.log(`payments: checkout ${order.payment_id}: payment URI without the node (${(err as Error).message}); showing the address`);
    uri = order.address;
  }
  const qr = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 });
  return {
    paymentId: order.payment_id, orderId: order.order_id, status: s.status, version: s.version,
    merchant: settings.display_name,
    network: env.network.environments.length > 1 || env.slug !== 'mainnet' ? `${env.network.name} (${env.slug})` : env.network.name,
    assetSymbol: asset.symbol, assetId: order.asset,
    amount: fromBaseUnits(amountRaw, order.decimals), received: s.amount_received, due: fromBaseUnits(shownDue, order.decimals),
    ask: fromBaseUnits(askRaw, order.decimals),
    address: order.address, uri, uriIsAddress: uri === order.address, qrSvg: qr,
    expiresAt: order.expires_at, confirmations: env.confirmations,
    redirect: settings.redirect_url ? redirectFor(settings.redirect_url, order.order_id, deps.config.payments.checkout.allow_any_redirect) : null,
    price: order.price_amount !== null && order.price_currency !== null ? { amount: order.price_amount, currency: order.price_currency } : null,
  };
}

/** The merchant's page with `?order_id=` added to whatever query it has; an http one set under `--dev` only while in it. */
function redirectFor(base: string, orderId: string, allowHttp: boolean): string | null {
  try {
    const url = new URL(base);
    if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) return null;
    url.searchParams.set('order_id', orderId);
    return url.toString();
  } catch {
    return null;
  }
}

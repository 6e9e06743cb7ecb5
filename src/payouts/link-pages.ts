import type { ServerResponse } from 'node:http';
import type { OpenPageContext, OpenPageRoute } from '../cabinet/index.js';
import { redirect, send } from '../cabinet/index.js';
import type { Limits } from '../limits/index.js';
import { clientError, HttpError } from '../api/http.js';
import { readBody } from '../util/body.js';
import { rateLimitKey } from '../util/ip.js';
import { fromBaseUnits } from '../payments/amounts.js';
import { assetOfRow } from '../payments/assets.js';
import { languageHeaders, pickLanguage } from '../payments/hosted-page.js';
import { getSettings, orderIdsByPk } from '../payments/orders.js';
import type { PayoutStatus } from '../wire/payouts.js';
import { claimLink, linkOf } from './actions.js';
import type { PayoutDeps } from './context.js';
import { refundNotFoundPage, refundPage, refundTooManyPage, refusalOf, type RefundView } from './refund-page.js';

/** At most this many link calls a minute per client: a token has 192 bits, but a page has no reason to ask more. */
const PER_MINUTE = 60;

function json(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store',
    'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', ...headers,
  });
  res.end(text);
}

/** The body's `address`: JSON `{ "address": "…" }` or a form field. */
async function addressIn(ctx: OpenPageContext): Promise<string | undefined> {
  const raw = (await readBody(ctx.req, 4096, { timeoutMs: 10_000 })).toString('utf8');
  if ((ctx.req.headers['content-type'] ?? '').includes('application/json')) {
    try {
      const v = (JSON.parse(raw) as { address?: unknown }).address;
      return typeof v === 'string' ? v.trim() : undefined;
    } catch {
      return undefined;
    }
  }
  return new URLSearchParams(raw).get('address')?.trim() || undefined;
}

/** The refund as its link's page shows it, or undefined when the token names none. */
async function viewOf(deps: PayoutDeps, token: string): Promise<RefundView | undefined> {
  const found = await linkOf(deps.store.db, token);
  if (!found) return undefined;
  const { link, payout, line } = found;
  const env = deps.store.catalog.environment(line.network_environment_id);
  const order = payout.order_pk === null ? undefined : await orderIdsByPk(deps.store.db, payout.order_pk);
  const settings = await getSettings(deps.store.db, payout.account_id);
  const expired = Date.parse(link.expires_at) <= Date.now();
  return {
    token, merchant: settings.display_name, orderId: order?.order_id ?? '', status: line.status as PayoutStatus,
    amount: fromBaseUnits(line.amount_raw, line.decimals), assetSymbol: assetOfRow(deps.config, env, line.asset, line.decimals).symbol, assetId: line.asset,
    network: !env ? line.network : env.network.environments.length > 1 || env.slug !== 'mainnet' ? `${env.network.name} (${env.slug})` : env.network.name,
    address: line.address, txHash: line.tx_hash, expired,
    acceptsAddress: link.claimed_at === null && line.address === null && line.status !== 'canceled' && !expired,
  };
}

/**
 * The refund link's page (`/refund/{token}`): the address form while the link takes one, then
 * the refund's state, in the checkout's languages (`?lang=`, else Accept-Language, else
 * English). The form posts back to the same URL and works without a script; a refusal (another
 * network's address, a used or expired link) is shown beside the field, in the page's
 * language, with what was typed.
 */
function htmlPages(deps: PayoutDeps, limited: (ctx: OpenPageContext) => number | Promise<number>): OpenPageRoute[] {
  const language = (ctx: OpenPageContext) => {
    const asked = ctx.url.searchParams.get('lang');
    const lang = pickLanguage(asked, ctx.req.headers['accept-language']);
    return { lang, headers: languageHeaders(lang), asked: asked !== null && asked.toLowerCase() === lang.code };
  };
  return [
    {
      method: 'GET', path: '/refund/{token}',
      async handler(ctx) {
        const { lang, headers } = language(ctx);
        const wait = await limited(ctx);
        if (wait > 0) return send(ctx.res, 429, refundTooManyPage(ctx.assets, lang), { 'retry-after': String(wait), ...headers });
        const view = await viewOf(deps, ctx.params.token!);
        if (!view) return send(ctx.res, 404, refundNotFoundPage(ctx.assets, lang), headers);
        send(ctx.res, 200, refundPage(ctx.assets, view, lang), headers);
      },
    },
    {
      method: 'POST', path: '/refund/{token}',
      async handler(ctx) {
        const { lang, headers, asked } = language(ctx);
        const wait = await limited(ctx);
        if (wait > 0) {
          ctx.req.resume();
          return send(ctx.res, 429, refundTooManyPage(ctx.assets, lang), { 'retry-after': String(wait), ...headers });
        }
        const token = ctx.params.token!;
        const address = await addressIn(ctx);
        try {
          if (!address) throw new HttpError(400, 'Enter your address');
          await claimLink(deps, token, address);
          // Back in the form's language (its action names it); a bare POST gets Accept-Language's again.
          return redirect(ctx.res, `/refund/${token}${asked ? `?lang=${lang.code}` : ''}`);
        } catch (err) {
          const known = clientError(err);
          if (!known) throw err;
          const view = await viewOf(deps, token);
          if (!view) return send(ctx.res, 404, refundNotFoundPage(ctx.assets, lang), headers);
          const refused = { refusal: refusalOf(view, known.status, address), value: (address ?? '').slice(0, 128) };
          send(ctx.res, known.status, refundPage(ctx.assets, view, lang, refused), headers);
        }
      },
    },
  ];
}

/**
 * What a refund link's page (built on these) reads and sends, with no sign-in: `GET
 * /refund/{token}/state` (the refund as the customer may see it: never the account, the order's
 * other fields or the merchant's references) and `POST /refund/{token}/address`, once.
 */
export function refundLinkPages(deps: PayoutDeps, limits: Limits): OpenPageRoute[] {
  const window = limits.window('refund-link-ip', 60_000);
  const limited = (ctx: OpenPageContext) => window.take(rateLimitKey(ctx.ip), PER_MINUTE);
  return [
    ...htmlPages(deps, limited),
    {
      method: 'GET', path: '/refund/{token}/state',
      async handler(ctx) {
        const wait = await limited(ctx);
        if (wait > 0) return json(ctx.res, 429, { ok: false, error: 'Rate limit exceeded' }, { 'retry-after': String(wait) });
        const found = await linkOf(deps.store.db, ctx.params.token!);
        if (!found) return json(ctx.res, 404, { ok: false, error: 'No such refund link' });
        const { link, line } = found;
        const env = deps.store.catalog.environment(line.network_environment_id);
        json(ctx.res, 200, {
          ok: true, status: line.status, network: line.network, network_name: env?.network.name ?? line.network,
          asset_symbol: assetOfRow(deps.config, env, line.asset, line.decimals).symbol, amount: fromBaseUnits(line.amount_raw, line.decimals),
          address: line.address, tx_hash: line.tx_hash, expires_at: link.expires_at,
          accepts_address: link.claimed_at === null && line.address === null && line.status !== 'canceled' && Date.parse(link.expires_at) > Date.now(),
        });
      },
    },
    {
      method: 'POST', path: '/refund/{token}/address',
      async handler(ctx) {
        const wait = await limited(ctx);
        if (wait > 0) {
          ctx.req.resume();
          return json(ctx.res, 429, { ok: false, error: 'Rate limit exceeded' }, { 'retry-after': String(wait) });
        }
        const address = await addressIn(ctx);
        if (!address) return json(ctx.res, 400, { ok: false, error: 'address: is required' });
        try {
          const line = await claimLink(deps, ctx.params.token!, address);
          json(ctx.res, 200, { ok: true, status: line.status, address: line.address });
        } catch (err) {
          const known = clientError(err);
          if (!known) throw err;
          json(ctx.res, known.status, { ok: false, error: known.message });
        }
      },
    },
  ];
}

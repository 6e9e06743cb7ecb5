import type { Assets } from '../cabinet/assets.js';
import { html, raw, type Html } from '../cabinet/index.js';
import { amountHeader, hostedShell, messagePage, Words, type Language, type ShellOptions } from './hosted-page.js';
import type { PaymentStatus } from './orders.js';

/** What the checkout page shows of an order: nothing of the account, the reason or the screening. */
export interface CheckoutView {
  paymentId: string;
  orderId: string;
  status: PaymentStatus;
  /** Changes whenever the page would (the status poll's `version`). */
  version: string;
  merchant: string | null;
  network: string;
  assetSymbol: string;
  /** `native` or the token's id (contract, CODE:ISSUER), shown so a wallet picks the right token. */
  assetId: string;
  /** What the customer is asked for: for a fiat-priced order rounded up to the asset's display step (shown-amount.ts). */
  amount: string;
  received: string;
  due: string;
  /** What the QR asks for: the amount, or what is still due when underpaid. */
  ask: string;
  address: string;
  uri: string;
  /** The QR holds the address alone (no URI wallets agree on): the amount must be typed. */
  uriIsAddress: boolean;
  qrSvg: string;
  expiresAt: string;
  confirmations: number;
  /** The merchant's page with `?order_id=`; null: none set. */
  redirect: string | null;
  /** A fiat-priced order's price (`19.99`, `EUR`), shown beside the crypto amount. */
  price: { amount: string; currency: string } | null;
}

/** Statuses in which the order may still move: the page keeps looking (the script, or a refresh without it). */
const OPEN: readonly PaymentStatus[] = ['pending', 'seen', 'aml_check', 'underpaid'];

/** `1:02:03`, `59:07` or `0:00`: the time to `iso` from now. */
export function remaining(iso: string, nowMs = Date.now()): string {
  const s = Math.max(0, Math.floor((Date.parse(iso) - nowMs) / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

/** What every checkout page loads: its script, and no referrer (the payment id is the credential). */
const CHECKOUT: Pick<ShellOptions, 'referrer' | 'script'> = { referrer: 'no-referrer', script: 'checkout.js' };

function copyRow(w: Words, value: string, key: 'copy_amount' | 'copy_address', id: string, unit?: string): Html {
  return html`<span class="copy-row"><span><code id="${id}" class="copy-value">${value}</code>${unit ? html` <span class="unit">${unit}</span>` : ''}</span><button type="button" class="copy" data-copy="${value}" data-label="${w.t('copy')}" data-done="${w.t('copied')}" aria-label="${w.t(key)}" hidden>${w.t('copy')}</button></span>`;
}

function qr(w: Words, v: CheckoutView): Html {
  // The SVG is the qrcode library's own output for our URI: markup we made, not user input.
  const svg = v.qrSvg.replace('<svg ', '<svg role="img" aria-labelledby="qr-caption" focusable="false" ');
  const ask = `${v.ask} ${v.assetSymbol}`;
  return html`<figure class="qr" id="qr" data-uri="${v.uri}">${raw(svg)}
  <figcaption id="qr-caption">${v.uriIsAddress ? w.t('qr_address', { amount: ask }) : w.t('qr_pay', { amount: ask })}</figcaption>
</figure>
${v.uriIsAddress ? '' : html`<p class="wallet"><a class="button" id="open-wallet" href="${v.uri}">${w.t('open_wallet')}</a></p>`}`;
}

function details(w: Words, v: CheckoutView, showAmount: string): Html {
  return html`<dl class="details">
  <div><dt>${w.t('amount')}</dt><dd class="amount">${copyRow(w, showAmount, 'copy_amount', 'amount', v.assetSymbol)}</dd></div>
  <div><dt>${w.t('network')}</dt><dd id="network">${v.network}${v.assetId !== 'native' ? html`<br><span class="muted small">${w.t('token')} <code class="small">${v.assetId}</code></span>` : ''}</dd></div>
  <div><dt>${w.t('address')}</dt><dd>${copyRow(w, v.address, 'copy_address', 'address')}</dd></div>
</dl>`;
}

function countdown(w: Words, v: CheckoutView): Html {
  return html`<p class="countdown">${w.t('time_left')} <time id="countdown" datetime="${v.expiresAt}">${remaining(v.expiresAt)}</time></p>`;
}

/** The way back to the shop while the order is not paid (the paid page has its own button). */
function back(w: Words, v: CheckoutView): Html | string {
  if (!v.redirect) return '';
  return html`<p class="back"><a id="back" href="${v.redirect}" rel="noreferrer">${v.merchant ? w.t('back', { merchant: v.merchant }) : w.t('back_shop')}</a></p>`;
}

/** The status's own part of the page: message, and what to pay while that is still to do. */
function body(w: Words, v: CheckoutView): Html {
  const merchant = v.merchant ?? w.t('the_merchant');
  const unit = (a: string) => `${a} ${v.assetSymbol}`;
  switch (v.status) {
    case 'pending':
      return html`<p class="state pending" id="state">${w.t('awaiting')}</p>
${countdown(w, v)}
${qr(w, v)}
${details(w, v, v.amount)}
<p class="muted small">${w.t('send_exactly', { network: v.network })}</p>
${back(w, v)}`;
    case 'seen':
      return html`<p class="state seen" id="state">${w.t(v.confirmations === 1 ? 'seen_one' : 'seen_other', { n: v.confirmations })}</p>
<p>${w.t('seen_body')}</p>
${details(w, v, v.amount)}
${back(w, v)}`;
    case 'aml_check':
      return html`<p class="state seen" id="state">${w.t('confirming')}</p>
<p>${w.t('confirming_body')}</p>
${back(w, v)}`;
    case 'underpaid':
      return html`<p class="state warn" id="state">${w.t('underpaid', { due: unit(v.due) })}</p>
<p>${w.t('underpaid_body', { received: unit(v.received), amount: unit(v.amount) })}</p>
${countdown(w, v)}
${qr(w, v)}
${details(w, v, v.due)}
${back(w, v)}`;
    case 'paid':
      return html`<p class="state ok" id="state">${w.t('paid')}</p>
<p>${w.t('paid_body', { amount: unit(v.amount) })}</p>
${v.redirect ? html`<p><a class="button" id="return" href="${v.redirect}" rel="noreferrer">${v.merchant ? w.t('return', { merchant: v.merchant }) : w.t('return_shop')}</a></p>` : ''}`;
    case 'expired':
      return html`<p class="state bad" id="state">${w.t('expired')}</p>
<p>${w.t('expired_body', { merchant })}</p>
${back(w, v)}`;
    case 'failed':
      return html`<p class="state bad" id="state">${w.t('failed')}</p>
<p>${w.t('failed_body', { merchant })}</p>
${back(w, v)}`;
  }
}

/** `19,99 €` in German, `€19.99` in English: the price as the customer's language writes it. */
export function formatPrice(price: { amount: string; currency: string }, locale: string): string {
  // A decimal string keeps every digit (Intl formats strings exactly); never a float. A price
  // has up to 30 decimals (fiat.ts): fewer here would round a tiny one to €0.00.
  return new Intl.NumberFormat(locale, { style: 'currency', currency: price.currency, maximumFractionDigits: 30 })
    .format(price.amount as unknown as number);
}

export function checkoutPage(assets: Assets, v: CheckoutView, lang: Language): Html {
  const w = new Words(lang);
  const open = OPEN.includes(v.status);
  const amount = `${v.amount} ${v.assetSymbol}`;
  const title = v.merchant ? w.t('title_merchant', { merchant: v.merchant, amount }) : w.t('title', { amount });
  return hostedShell(assets, w, {
    ...CHECKOUT, title, refresh: open ? 15 : null, switchTo: `/pay/${v.paymentId}`,
    body: html`<main id="checkout" class="checkout" data-status-url="/pay/${v.paymentId}/status" data-version="${v.version}" data-status="${v.status}">
${amountHeader({
  merchant: v.merchant ?? w.t('payment'), amount: v.amount, symbol: v.assetSymbol, orderLabel: w.t('order'), orderId: v.orderId,
  extra: v.price ? html`<p class="price" id="price">${w.t('price', { price: formatPrice(v.price, lang.locale) })}</p>` : '',
})}
<section class="panel" aria-labelledby="state">
${body(w, v)}
</section>
${open ? html`<noscript><p class="small"><a href="/pay/${v.paymentId}?lang=${lang.code}">${w.t('refresh')}</a> ${w.t('refresh_note')}</p></noscript>` : ''}
<p class="sr-only" role="status" id="announce"></p>
</main>`,
  });
}

export function notFoundPage(assets: Assets, lang: Language): Html {
  const w = new Words(lang);
  return messagePage(assets, w, { ...CHECKOUT, title: w.t('not_found'), text: w.t('not_found_body') });
}

export function tooManyPage(assets: Assets, lang: Language): Html {
  const w = new Words(lang);
  return messagePage(assets, w, { ...CHECKOUT, title: w.t('too_many'), text: w.t('too_many_body') });
}

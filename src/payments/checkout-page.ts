import type { Assets } from '../cabinet/assets.js';
import { html, raw, type Html } from '../cabinet/index.js';
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
  /** The merchant's page with `?order_id=`, once paid; null: none set. */
  redirect: string | null;
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

function shell(assets: Assets, opts: { title: string; refresh: boolean; body: Html }): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>${opts.title}</title>
${opts.refresh ? html`<noscript><meta http-equiv="refresh" content="15"></noscript>` : ''}
<link rel="icon" href="${assets.url('favicon.svg')}" type="image/svg+xml">
<link rel="stylesheet" href="${assets.url('checkout.css')}">
<script src="${assets.url('checkout.js')}" defer></script>
</head>
<body>
${opts.body}
</body>
</html>`;
}

function copyRow(value: string, label: string, id: string, unit?: string): Html {
  return html`<span class="copy-row"><span><code id="${id}" class="copy-value">${value}</code>${unit ? html` <span class="unit">${unit}</span>` : ''}</span><button type="button" class="copy" data-copy="${value}" aria-label="Copy ${label}" hidden>Copy</button></span>`;
}

function qr(v: CheckoutView): Html {
  // The SVG is the qrcode library's own output for our URI: markup we made, not user input.
  const svg = v.qrSvg.replace('<svg ', '<svg role="img" aria-labelledby="qr-caption" focusable="false" ');
  return html`<figure class="qr" id="qr" data-uri="${v.uri}">${raw(svg)}
  <figcaption id="qr-caption">${v.uriIsAddress ? `QR code of the address (enter ${v.ask} ${v.assetSymbol} in your wallet)` : `QR code to pay ${v.ask} ${v.assetSymbol}`}</figcaption>
</figure>`;
}

function details(v: CheckoutView, showAmount: string): Html {
  return html`<dl class="details">
  <div><dt>Amount</dt><dd class="amount">${copyRow(showAmount, 'amount', 'amount', v.assetSymbol)}</dd></div>
  <div><dt>Network</dt><dd id="network">${v.network}${v.assetId !== 'native' ? html`<br><span class="muted small">token <code class="small">${v.assetId}</code></span>` : ''}</dd></div>
  <div><dt>Address</dt><dd>${copyRow(v.address, 'address', 'address')}</dd></div>
</dl>`;
}

function countdown(v: CheckoutView): Html {
  return html`<p class="countdown">Time left: <time id="countdown" datetime="${v.expiresAt}">${remaining(v.expiresAt)}</time></p>`;
}

/** The status's own part of the page: message, and what to pay while that is still to do. */
function body(v: CheckoutView): Html {
  const merchant = v.merchant ?? 'the merchant';
  switch (v.status) {
    case 'pending':
      return html`<p class="state pending" id="state">Awaiting payment</p>
${countdown(v)}
${qr(v)}
${details(v, v.amount)}
<p class="muted small">Send exactly this amount on ${v.network}. This page updates when the payment arrives.</p>`;
    case 'seen':
      return html`<p class="state seen" id="state">Payment seen: waiting for ${v.confirmations} confirmation${v.confirmations === 1 ? '' : 's'}</p>
<p>Your payment is on the network. You can close this page; it completes on its own.</p>
${details(v, v.amount)}`;
    case 'aml_check':
      return html`<p class="state seen" id="state">Payment received: confirming</p>
<p>This usually takes a moment. You can close this page.</p>`;
    case 'underpaid':
      return html`<p class="state warn" id="state">Partly paid: ${v.due} ${v.assetSymbol} still due</p>
<p>Received ${v.received} of ${v.amount} ${v.assetSymbol}. Send the rest to the same address.</p>
${countdown(v)}
${qr(v)}
${details(v, v.due)}`;
    case 'paid':
      return html`<p class="state ok" id="state">Paid</p>
<p>Thank you: ${v.amount} ${v.assetSymbol} received.</p>
${v.redirect ? html`<p><a class="button" id="return" href="${v.redirect}" rel="noreferrer">Return to ${merchant}</a></p>` : ''}`;
    case 'expired':
      return html`<p class="state bad" id="state">Expired</p>
<p>This payment request has expired. Do not send funds to its address; ask ${merchant} for a new one.</p>`;
    case 'failed':
      return html`<p class="state bad" id="state">This payment could not be completed</p>
<p>If you have sent funds, contact ${merchant} with your order number.</p>`;
  }
}

export function checkoutPage(assets: Assets, v: CheckoutView): Html {
  const open = OPEN.includes(v.status);
  const title = `${v.merchant ? `${v.merchant}: ` : ''}pay ${v.amount} ${v.assetSymbol}`;
  return shell(assets, {
    title, refresh: open,
    body: html`<main id="checkout" class="checkout" data-status-url="/pay/${v.paymentId}/status" data-version="${v.version}" data-status="${v.status}">
<header>
  <p class="merchant">${v.merchant ?? 'Payment'}</p>
  <h1>${v.amount} ${v.assetSymbol}</h1>
  <p class="muted small">Order <span id="order-id">${v.orderId}</span></p>
</header>
<section class="panel" aria-labelledby="state">
${body(v)}
</section>
${open ? html`<noscript><p class="small"><a href="/pay/${v.paymentId}">Refresh the status</a> (this page also refreshes every 15 seconds)</p></noscript>` : ''}
<p class="sr-only" role="status" id="announce"></p>
</main>`,
  });
}

export function notFoundPage(assets: Assets): Html {
  return shell(assets, {
    title: 'Payment not found', refresh: false,
    body: html`<main class="checkout"><header><h1>Payment not found</h1></header>
<section class="panel"><p>There is no payment at this address. Check the link you were given.</p></section></main>`,
  });
}

export function tooManyPage(assets: Assets): Html {
  return shell(assets, {
    title: 'Too many requests', refresh: false,
    body: html`<main class="checkout"><header><h1>Too many requests</h1></header>
<section class="panel"><p>This page was loaded too often from your network. Wait a minute, then reload it.</p></section></main>`,
  });
}

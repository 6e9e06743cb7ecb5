import type { Assets } from '../cabinet/assets.js';
import { html, type Html } from '../cabinet/index.js';
import { amountHeader, hostedShell, messagePage, Words, type Language, type ShellOptions } from '../payments/hosted-page.js';
import type { PayoutStatus } from '../wire/payouts.js';

/**
 * What the refund link's page shows: the refund as its customer may see it, never the account,
 * the merchant's reference or the order's other fields. Every value is escaped by `html`.
 */
export interface RefundView {
  token: string;
  merchant: string | null;
  orderId: string;
  status: PayoutStatus;
  amount: string;
  assetSymbol: string;
  /** `native` or the token's id, so the customer names the right token in their wallet. */
  assetId: string;
  network: string;
  address: string | null;
  txHash: string | null;
  /** The link still takes an address: not given yet, not expired, not canceled. */
  acceptsAddress: boolean;
  /** The link expired before an address was given. */
  expired: boolean;
}

/**
 * Why the form refused what was typed. The page says it in the customer's language, so it is
 * told the reason, not the error's English text (the API's JSON keeps that).
 */
export type Refusal = 'empty' | 'address' | 'used' | 'expired' | 'canceled' | 'retry';

/** A refused try: the reason and what was typed (shown again, escaped, to be corrected). */
export interface RefusedAddress {
  refusal: Refusal;
  value: string;
}

const REFUSAL_KEY = {
  empty: 'refund_error_empty', address: 'refund_error_address', used: 'refund_error_used',
  expired: 'refund_error_expired', canceled: 'refund_error_canceled', retry: 'refund_error_retry',
} as const;

/**
 * The reason a try with `typed` was refused with `status`, read from the refund as it is now
 * (`v`, read after the refusal): a link that no longer takes an address says why from its
 * state; one that still does refused the address itself (a 400: another network's, a checksum)
 * or lost a race (anything else: trying again is right).
 */
export function refusalOf(v: RefundView, status: number, typed: string | undefined): Refusal {
  if (!v.acceptsAddress) return v.address !== null ? 'used' : v.status === 'canceled' ? 'canceled' : v.expired ? 'expired' : 'used';
  if (!typed) return 'empty';
  return status === 400 ? 'address' : 'retry';
}

/** Statuses that still move without the customer: the page refreshes itself while in them. */
const MOVING: readonly PayoutStatus[] = ['awaiting_approval', 'awaiting_payment', 'sent'];

/** What every refund page sends as the referrer: the form posts to its own page (hosted-page.ts says why). */
const REFERRER: ShellOptions['referrer'] = 'same-origin';

function details(w: Words, v: RefundView): Html {
  return html`<dl class="details">
  <div><dt>${w.t('amount')}</dt><dd class="amount"><code id="amount" class="copy-value">${v.amount}</code> <span class="unit">${v.assetSymbol}</span></dd></div>
  <div><dt>${w.t('network')}</dt><dd id="network">${v.network}${v.assetId !== 'native' ? html`<br><span class="muted small">${w.t('token')} <code class="small">${v.assetId}</code></span>` : ''}</dd></div>
  ${v.address ? html`<div><dt>${w.t('refund_your_address')}</dt><dd><code id="address" class="copy-value">${v.address}</code></dd></div>` : ''}
  ${v.txHash ? html`<div><dt>${w.t('refund_transaction')}</dt><dd><code id="tx-hash" class="copy-value">${v.txHash}</code></dd></div>` : ''}
</dl>`;
}

function refusalText(w: Words, v: RefundView, refusal: Refusal): string {
  return w.t(REFUSAL_KEY[refusal], { network: v.network });
}

/**
 * The form that takes the customer's address, once; `refused` is the last try's refusal, shown
 * beside the field. It posts in the page's language (`?lang=`), so the answer is in it too.
 */
function addressForm(w: Words, v: RefundView, refused?: RefusedAddress): Html {
  return html`<p class="state pending" id="state">${w.t('refund_waiting')}</p>
<p>${w.markup('refund_intro', { amount: html`<strong>${v.amount} ${v.assetSymbol}</strong>`, network: html`<strong>${v.network}</strong>` })}</p>
<form class="refund-form" method="post" action="/refund/${v.token}?lang=${w.lang.code}" novalidate>
  <label for="refund-address">${w.t('refund_address_label', { symbol: v.assetSymbol, network: v.network })}</label>
  <input id="refund-address" name="address" type="text" required autocomplete="off" autocapitalize="off" spellcheck="false" inputmode="text"
    value="${refused?.value ?? ''}"${refused ? html` aria-invalid="true" aria-describedby="address-error address-note"` : html` aria-describedby="address-note"`}>
  ${refused ? html`<p class="field-error" id="address-error" role="alert">${refusalText(w, v, refused.refusal)}</p>` : ''}
  <p class="muted small" id="address-note">${w.t('refund_address_note')}</p>
  <button type="submit" class="button">${w.t('refund_submit')}</button>
</form>
${details(w, { ...v, address: null })}`;
}

function stateOf(w: Words, v: RefundView): Html {
  const merchant = v.merchant ?? w.t('the_merchant');
  if (v.acceptsAddress) return addressForm(w, v);
  if (v.status === 'canceled') {
    return html`<p class="state bad" id="state">${w.t('refund_canceled')}</p><p>${w.t('refund_canceled_body', { merchant })}</p>${details(w, v)}`;
  }
  if (v.address === null) {
    return html`<p class="state bad" id="state">${w.t(v.expired ? 'refund_expired' : 'refund_closed')}</p>
<p>${w.t('refund_new_link', { merchant })}</p>${details(w, v)}`;
  }
  switch (v.status) {
    case 'sent':
      return html`<p class="state seen" id="state">${w.t('refund_sent')}</p><p>${w.t('refund_sent_body')}</p>${details(w, v)}`;
    case 'completed':
      return html`<p class="state ok" id="state">${w.t('refund_completed')}</p><p>${w.t('refund_completed_body', { amount: `${v.amount} ${v.assetSymbol}` })}</p>${details(w, v)}`;
    default:
      return html`<p class="state pending" id="state">${w.t('refund_awaiting')}</p><p>${w.t('refund_awaiting_body')}</p>${details(w, v)}`;
  }
}

export function refundPage(assets: Assets, v: RefundView, lang: Language, refused?: RefusedAddress): Html {
  const w = new Words(lang);
  const amount = `${v.amount} ${v.assetSymbol}`;
  const refresh = !v.acceptsAddress && v.address !== null && MOVING.includes(v.status);
  return hostedShell(assets, w, {
    title: v.merchant ? w.t('refund_title_merchant', { merchant: v.merchant, amount }) : w.t('refund_title', { amount }),
    // While the refund moves, refund.js reloads the page when the state changes; without it, the meta refresh does.
    refresh: refresh ? 20 : null, referrer: REFERRER, script: refresh ? 'refund.js' : null,
    switchTo: `/refund/${v.token}`,
    body: html`<main id="refund" class="checkout" data-status="${v.status}"${refresh ? html` data-state-url="/refund/${v.token}/state"` : ''}>
${amountHeader({ merchant: v.merchant ?? w.t('refund'), amount: v.amount, symbol: v.assetSymbol, extra: '', orderLabel: w.t('refund_for_order'), orderId: v.orderId })}
<section class="panel" aria-labelledby="state">
${v.acceptsAddress && refused
    ? addressForm(w, v, refused)
    : html`${refused ? html`<p class="field-error" id="address-error" role="alert">${refusalText(w, v, refused.refusal)}</p>` : ''}${stateOf(w, v)}`}
</section>
</main>`,
  });
}

export function refundNotFoundPage(assets: Assets, lang: Language): Html {
  const w = new Words(lang);
  return messagePage(assets, w, { title: w.t('refund_not_found'), text: w.t('refund_not_found_body'), referrer: REFERRER, script: null });
}

export function refundTooManyPage(assets: Assets, lang: Language): Html {
  const w = new Words(lang);
  return messagePage(assets, w, { title: w.t('too_many'), text: w.t('too_many_body'), referrer: REFERRER, script: null });
}

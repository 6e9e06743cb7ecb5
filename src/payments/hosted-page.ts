import type { Assets } from '../cabinet/assets.js';
import { html, type Html } from '../cabinet/index.js';
import { LANGUAGES, pickLanguage, say, type Language, type MessageKey } from './checkout-i18n/index.js';

export { LANGUAGES, pickLanguage, type Language };

/**
 * The shell of rpcctl's hosted pages, the ones a customer opens from a link with no sign-in:
 * the checkout (`/pay/{id}`, checkout-page.ts) and the refund link (`/refund/{token}`,
 * payouts/refund-page.ts). One look (checkout.css), phone first, one set of languages
 * (checkout-i18n/, picked by `pickLanguage`), one language switch. Payouts sit above payments,
 * so they reach it here.
 */

/** A page's words in one language: `t('key', {vars})`, plus what the page needs of the language. */
export class Words {
  readonly lang: Language;
  constructor(lang: Language) {
    this.lang = lang;
  }
  t(key: MessageKey, vars: Record<string, string | number> = {}): string {
    return say(this.lang.messages, key, vars);
  }
  /**
   * The message as markup, each `{name}` replaced by `vars[name]` (markup such as a `<strong>`
   * the page built, or text): a translation may move a placeholder, never add markup. The text
   * around is escaped like everything else.
   */
  markup(key: MessageKey, vars: Record<string, Html | string>): Html {
    const parts = this.lang.messages[key].split(/\{(\w+)\}/);
    return html`${parts.map((part, i) => (i % 2 === 0 ? part : part in vars ? vars[part] : `{${part}}`))}`;
  }
}

/** The response headers that say which language the page is in and that it depends on Accept-Language. */
export function languageHeaders(lang: Language): Record<string, string> {
  return { 'content-language': lang.locale, vary: 'Accept-Language' };
}

export interface ShellOptions {
  title: string;
  /** The page reloads itself every so many seconds when the script does not run; null: it does not. */
  refresh: number | null;
  /**
   * What a link or form sends as the referrer. The checkout sends none; a page with a form
   * posting to itself needs same-origin (under no-referrer the POST carries `Origin: null`,
   * which the cabinet refuses as cross-site). The page's URL never leaves the origin either way.
   */
  referrer: 'no-referrer' | 'same-origin';
  /** The page's one script (a static asset), or null. */
  script: string | null;
  body: Html;
  /** The page's path without a query: the language switch links to it with `?lang=`; absent, no switch. */
  switchTo?: string;
}

export function hostedShell(assets: Assets, w: Words, opts: ShellOptions): Html {
  return html`<!doctype html>
<html lang="${w.lang.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="${opts.referrer}">
<meta name="robots" content="noindex">
<title>${opts.title}</title>
${opts.refresh !== null ? html`<noscript><meta http-equiv="refresh" content="${opts.refresh}"></noscript>` : ''}
<link rel="icon" href="${assets.url('favicon.svg')}" type="image/svg+xml">
<link rel="stylesheet" href="${assets.url('checkout.css')}">
${opts.script !== null ? html`<script src="${assets.url(opts.script)}" defer></script>` : ''}
</head>
<body>
${opts.body}
${opts.switchTo !== undefined ? languageSwitch(w, opts.switchTo) : ''}
</body>
</html>`;
}

/**
 * Links to the same page in each language (`?lang=`): works without the script, under the CSP.
 * Below the page, as shops put it: Accept-Language picked the language already, this is the way out.
 */
function languageSwitch(w: Words, path: string): Html {
  return html`<nav class="langs" aria-label="${w.t('language')}"><ul>${LANGUAGES.map((l) => html`<li><a href="${path}?lang=${l.code}" lang="${l.locale}" hreflang="${l.locale}"${l.code === w.lang.code ? html` aria-current="true"` : ''}>${l.messages.language_name}</a></li>`)}</ul></nav>`;
}

/** The head of a page about an amount: who, how much (the figure), an optional line, and the order it belongs to. */
export function amountHeader(h: { merchant: string; amount: string; symbol: string; extra: Html | ''; orderLabel: string; orderId: string }): Html {
  return html`<header>
  <p class="merchant">${h.merchant}</p>
  <h1><span class="figure" id="heading-amount">${h.amount}</span> ${h.symbol}</h1>
  ${h.extra}
  <p class="muted small">${h.orderLabel} <span id="order-id">${h.orderId}</span></p>
</header>`;
}

/** A page that only says something went wrong (not found, too many requests): no refresh, no switch. */
export function messagePage(assets: Assets, w: Words, m: { title: string; text: string } & Pick<ShellOptions, 'referrer' | 'script'>): Html {
  return hostedShell(assets, w, {
    title: m.title, refresh: null, referrer: m.referrer, script: m.script,
    body: html`<main class="checkout"><header><h1>${m.title}</h1></header>
<section class="panel"><p>${m.text}</p></section></main>`,
  });
}

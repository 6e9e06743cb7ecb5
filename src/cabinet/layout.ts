import type { Assets } from './assets.js';
import { html, type Html } from './html.js';

export interface NavItem {
  id: string;
  href: string;
  label: string;
}

export const BUILTIN_NAV: NavItem[] = [
  { id: 'overview', href: '/', label: 'Overview' },
  { id: 'keys', href: '/keys', label: 'API keys' },
  { id: 'endpoints', href: '/endpoints', label: 'Endpoints' },
];

function head(assets: Assets, title: string): Html {
  return html`<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"historyCacheSize":0}'>
<title>${title} · rpcctl</title>
<link rel="icon" href="${assets.url('favicon.svg')}" type="image/svg+xml">
<link rel="stylesheet" href="${assets.url('uplot.min.css')}">
<link rel="stylesheet" href="${assets.url('cabinet.css')}">
<script src="${assets.url('htmx.min.js')}" defer></script>
<script src="${assets.url('uplot.min.js')}" defer></script>
<script src="${assets.url('cabinet.js')}" defer></script>`;
}

const logo = html`<svg class="logo" viewBox="0 0 24 24" aria-hidden="true"><path d="M4 6h6v4H4zM14 6h6v4h-6zM9 14h6v4H9z"/><path d="M7 10v2h10v-2M12 12v2" fill="none" stroke-width="1.6"/></svg>`;

export function layout(opts: {
  assets: Assets; title: string; nav: NavItem[]; active: string; email: string; csrf: string; body: Html; flash?: string;
}): Html {
  return html`<!doctype html>
<html lang="en">
<head>${head(opts.assets, opts.title)}</head>
<body hx-headers='${JSON.stringify({ 'x-csrf-token': opts.csrf })}'>
<a class="skip" href="#main">Skip to content</a>
<header class="topbar">
  <a class="brand" href="/">${logo}<span>rpcctl</span></a>
  <nav aria-label="Main">
    <ul>
      ${opts.nav.map((n) => html`<li><a href="${n.href}"${n.id === opts.active ? html` aria-current="page"` : ''}>${n.label}</a></li>`)}
    </ul>
  </nav>
  <div class="who">
    <a class="email" href="/account" title="Account settings (signed in as ${opts.email})"${opts.active === 'account' ? html` aria-current="page"` : ''}><span class="email-full">${opts.email}</span><span class="email-short">Account</span></a>
    <form method="post" action="/logout">
      <input type="hidden" name="_csrf" value="${opts.csrf}">
      <button class="link" type="submit">Sign out</button>
    </form>
  </div>
</header>
<main id="main" tabindex="-1">
  ${opts.flash ? html`<div class="flash" role="status">${opts.flash}</div>` : ''}
  ${opts.body}
</main>
</body>
</html>`;
}

/** Sign-in and error pages: no nav, a centred card. */
export function bare(opts: { assets: Assets; title: string; body: Html }): Html {
  return html`<!doctype html>
<html lang="en">
<head>${head(opts.assets, opts.title)}</head>
<body class="bare">
<main id="main" class="center">
  <a class="brand big" href="/">${logo}<span>rpcctl</span></a>
  ${opts.body}
</main>
</body>
</html>`;
}

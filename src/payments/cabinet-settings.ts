import type { PageContext, PageRoute } from '../cabinet/index.js';
import { attempt, csrfField, errorBox, html, num, pageHeader, type Html } from '../cabinet/index.js';
import { DEFAULT_FAMILY, DERIVING_FAMILIES, REFERENCE_FAMILIES, type DerivingFamily, type ReferenceFamily } from '../chains/traits.js';
import type { PaymentSettings } from '../wire/payments.js';

/**
 * The cabinet's payment settings page: each deriving family's key, each reference family's
 * wallet, screening, tolerance, lateness and the checkout's name and return address. Saved
 * through the Public API's own handler (ctx.api), so its checks and messages are the API's.
 */

/** What the settings form says of each deriving family's key; a family without an entry gets plain words. */
const KEY_TEXT: Partial<Record<DerivingFamily, { label: string; hint: string; placeholder: string; check?: string }>> = {
  evm: { label: 'EVM', hint: 'xpub… or tpub…; one address is derived per order. Empty: every order needs its own address.', placeholder: 'xpub6C…', check: 'check your wallet shows it as its first account' },
  utxo: {
    label: 'Bitcoin-style chains', placeholder: 'zpub6r…', check: 'your wallet\'s first receive address',
    hint: 'the account key of your wallet: zpub… (native segwit), ypub… or xpub…; vpub…/upub…/tpub… for test networks. Your wallet stops looking after 20 unused addresses in a row: unpaid orders leave such gaps, so raise its gap limit above your open orders.',
  },
  tron: { label: 'Tron', hint: 'the xpub of account m/44\'/195\'/0\'', placeholder: 'xpub6D…' },
};

/** The form field of a family's key: the default family's plain `xpub`, the others `xpub_<family>`. */
const keyField = (f: DerivingFamily) => (f === DEFAULT_FAMILY ? 'xpub' : `xpub_${f}`);

function keyInput(f: DerivingFamily, s: PaymentSettings<DerivingFamily>, typed: URLSearchParams | undefined): Html {
  const text = KEY_TEXT[f] ?? { label: f, hint: 'an extended public key; one address is derived per order', placeholder: '' };
  const value = typed?.get(keyField(f)) ?? s.xpubs[f] ?? '';
  const derived = s.derived[f];
  const id = f === DEFAULT_FAMILY ? 'first-address' : `first-address-${f}`;
  return html`<label>Extended public key (${text.label}) <span class="muted small">${text.hint}</span>
      <input name="${keyField(f)}" value="${value}" autocomplete="off" spellcheck="false" maxlength="200" placeholder="${text.placeholder}"></label>
    ${derived ? html`<p class="notice" id="${id}">First derived address${derived.network ? html` on ${derived.network}` : ''}: <code class="address">${derived.first_address}</code>${text.check ? html` (${text.check})` : ''} · next index ${num(derived.next_index)}</p>` : ''}`;
}

/** What the settings form says of the wallet of each family whose orders share one; a family without an entry gets plain words. */
const WALLET_TEXT: Partial<Record<ReferenceFamily, { label: string; hint: string; placeholder: string }>> = {
  solana: {
    label: 'Solana', placeholder: '9WzDXw…',
    hint: 'your wallet\'s address (base58): every Solana order is paid to it, each told apart by a Solana Pay reference. Empty: every Solana order needs its own address.',
  },
};

/** The form field of a family's wallet: `wallet_<family>`. */
const walletField = (f: ReferenceFamily) => `wallet_${f}`;

function walletInput(f: ReferenceFamily, s: PaymentSettings<DerivingFamily>, typed: URLSearchParams | undefined): Html {
  const text = WALLET_TEXT[f] ?? { label: f, hint: 'the wallet orders are paid to, each told apart by a reference', placeholder: '' };
  const value = typed?.get(walletField(f)) ?? s.wallets[f] ?? '';
  return html`<label>Wallet (${text.label}) <span class="muted small">${text.hint}</span>
      <input name="${walletField(f)}" value="${value}" autocomplete="off" spellcheck="false" maxlength="128" placeholder="${text.placeholder}"></label>`;
}

async function renderSettings(ctx: PageContext, opts: { error?: string; status?: number; typed?: URLSearchParams } = {}) {
  const s = await ctx.api<PaymentSettings<DerivingFamily>>('GET', '/v1/payments/settings');
  const typed = opts.typed;
  const failAt = typed?.get('aml_fail_at') ?? s.aml_fail_at;
  const tolerance = typed?.get('underpaid_tolerance_bps') ?? String(s.underpaid_tolerance_bps);
  const acceptLate = typed ? typed.get('accept_late') === '1' : s.accept_late;
  const displayName = typed?.get('display_name') ?? s.display_name ?? '';
  const redirectUrl = typed?.get('redirect_url') ?? s.redirect_url ?? '';
  ctx.page({
    title: 'Payment settings', nav: 'payments', status: opts.status,
    body: html`<nav class="crumbs" aria-label="Breadcrumb"><a href="/payments">Payments</a> / <span aria-current="page">Settings</span></nav>
${pageHeader('Payment settings', 'How orders get their addresses, how short a payment may be, and what fails screening')}
<section class="card" aria-labelledby="settings-title">
  <h2 id="settings-title">Settings</h2>
  ${errorBox(opts.error)}
  <form method="post" action="/payments/settings" class="stack">
    ${csrfField(ctx)}
    ${DERIVING_FAMILIES.map((f) => keyInput(f, s, typed))}
    ${REFERENCE_FAMILIES.map((f) => walletInput(f, s, typed))}
    <label>Fail orders screened at or above
      <select name="aml_fail_at">${(['medium', 'high', 'severe'] as const).map((l) => html`<option value="${l}"${l === failAt ? html` selected` : ''}>${l} risk</option>`)}</select></label>
    <label>Underpayment tolerance <span class="muted small">basis points: 50 accepts a payment 0.5 % short</span>
      <input name="underpaid_tolerance_bps" inputmode="numeric" value="${tolerance}"></label>
    <label class="check"><input type="checkbox" name="accept_late" value="1"${acceptLate ? html` checked` : ''}> Complete orders paid within 24 hours after they expired</label>
    <label>Name on the checkout page <span class="muted small">what your customers see above the amount, such as your shop's name</span>
      <input name="display_name" value="${displayName}" maxlength="80" autocomplete="organization"></label>
    <label>Return address after payment <span class="muted small">an https page of yours; the checkout page sends a paid customer there with <code>?order_id=</code>. Empty: no return button.</span>
      <input name="redirect_url" type="url" value="${redirectUrl}" maxlength="2048" spellcheck="false" placeholder="https://shop.example.com/thanks"></label>
    <div><button type="submit" class="primary">Save settings</button></div>
  </form>
</section>`,
  });
}

export const settingsRoutes: PageRoute[] = [
    { method: 'GET', path: '/payments/settings', handler: (ctx) => renderSettings(ctx) },
    {
      method: 'POST', path: '/payments/settings', audit: 'api', role: 'owner',
      async handler(ctx) {
        const f = ctx.form;
        const bps = f.get('underpaid_tolerance_bps')?.trim() ?? '';
        // Sent as typed: the API's schema names what is wrong (a non-integer stays a string for it to refuse).
        const body = {
          xpubs: Object.fromEntries(DERIVING_FAMILIES.map((family) => [family, (f.get(keyField(family)) ?? '').trim()])),
          wallets: Object.fromEntries(REFERENCE_FAMILIES.map((family) => [family, (f.get(walletField(family)) ?? '').trim()])),
          aml_fail_at: f.get('aml_fail_at') ?? undefined,
          underpaid_tolerance_bps: /^\d{1,6}$/.test(bps) ? Number(bps) : bps,
          accept_late: f.get('accept_late') === '1',
          display_name: (f.get('display_name') ?? '').trim(),
          redirect_url: (f.get('redirect_url') ?? '').trim(),
        };
        const result = await attempt(() => ctx.api('PUT', '/v1/payments/settings', { body }));
        if (!result.ok) return renderSettings(ctx, { error: result.error, status: 400, typed: f });
        ctx.redirect('/payments/settings', 'Payment settings saved.');
      },
    },
];

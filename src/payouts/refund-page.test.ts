import { describe, expect, it } from 'vitest';
import { Assets } from '../cabinet/assets.js';
import { en } from '../payments/checkout-i18n/en.js';
import { LANGUAGES, pickLanguage, type Language } from '../payments/hosted-page.js';
import { refundNotFoundPage, refundPage, refusalOf, type Refusal, type RefundView } from './refund-page.js';

const assets = new Assets();
const lang = (code: string): Language => LANGUAGES.find((l) => l.code === code)!;
const TOKEN = 'A'.repeat(32);
const form: RefundView = {
  token: TOKEN, merchant: 'Corner <b>Shop</b>', orderId: 'o-1', status: 'awaiting_address', amount: '0.25', assetSymbol: 'ETH',
  assetId: 'native', network: 'Anvil (local)', address: null, txHash: null, acceptsAddress: true, expired: false,
};
const refundKeys = Object.keys(en).filter((k) => k === 'refund' || k.startsWith('refund_')) as Array<keyof typeof en>;

/** Words a language writes as English does: a translation, not a copy (French "Transaction"). */
const SAME_AS_ENGLISH = new Set(['fr.refund_transaction']);

describe('refund link page', () => {
  it('every refund string is translated in every language, not an English copy', () => {
    expect(refundKeys.length).toBeGreaterThan(20);
    for (const l of LANGUAGES.filter((x) => x.code !== 'en')) {
      for (const key of refundKeys) {
        if (!SAME_AS_ENGLISH.has(`${l.code}.${key}`)) expect(l.messages[key], `${l.code}.${key}`).not.toBe(en[key]);
      }
    }
  });

  it('renders in each language: html lang, the form and its label, a switch to every language with this one current', () => {
    for (const l of LANGUAGES) {
      const page = refundPage(assets, form, l).text;
      expect(page, l.code).toContain(`<html lang="${l.locale}">`);
      expect(page, l.code).toContain(`<p class="state pending" id="state">${l.messages.refund_waiting}</p>`);
      expect(page, l.code).toContain(`action="/refund/${TOKEN}?lang=${l.code}"`);
      const label = l.messages.refund_address_label.replace('{symbol}', 'ETH').replace('{network}', 'Anvil (local)');
      expect(page, l.code).toContain(`<label for="refund-address">${label}</label>`);
      expect(page, l.code).toContain(`<nav class="langs" aria-label="${l.messages.language}">`);
      for (const other of LANGUAGES) {
        const current = other.code === l.code ? ' aria-current="true"' : '';
        expect(page, `${l.code} → ${other.code}`).toContain(`<a href="/refund/${TOKEN}?lang=${other.code}" lang="${other.locale}" hreflang="${other.locale}"${current}>`);
      }
      expect(page, l.code).toContain('Corner &lt;b&gt;Shop&lt;/b&gt;');
      expect(page, l.code).not.toContain('<b>Shop');
    }
  });

  it('the intro keeps its emphasis where each language puts the amount and the network', () => {
    expect(refundPage(assets, form, lang('tr')).text).toContain('<p><strong>Anvil (local)</strong> ağında size <strong>0.25 ETH</strong> iade ediliyor.');
    expect(refundPage(assets, { ...form, network: '<i>net</i>' }, lang('en')).text).toContain('on <strong>&lt;i&gt;net&lt;/i&gt;</strong>.');
  });

  it('says why an address was refused, from the refund as it is after the try', () => {
    const cases: Array<[RefundView, number, string | undefined, Refusal]> = [
      [form, 400, undefined, 'empty'],
      [form, 400, 'TLsV52sRDL79HXGGm9yzwKibb6BeruhUzy', 'address'],
      [form, 409, '0xabc', 'retry'],
      [{ ...form, acceptsAddress: false, address: '0xabc', status: 'awaiting_payment' }, 409, '0xdef', 'used'],
      [{ ...form, acceptsAddress: false, expired: true }, 409, '0xdef', 'expired'],
      [{ ...form, acceptsAddress: false, status: 'canceled' }, 409, '0xdef', 'canceled'],
      [{ ...form, acceptsAddress: false, expired: true }, 400, undefined, 'expired'],
    ];
    for (const [view, status, typed, want] of cases) expect(refusalOf(view, status, typed), `${view.status} ${status} ${typed}`).toBe(want);
  });

  it('a refusal beside the field, or above the state, in the page\'s language; what was typed kept, escaped', () => {
    const de = lang('de');
    const wrong = refundPage(assets, form, de, { refusal: 'address', value: '"><script>x</script>' }).text;
    expect(wrong).toContain('<p class="field-error" id="address-error" role="alert">Keine gültige Adresse im Netzwerk Anvil (local): ');
    expect(wrong).toContain('value="&quot;&gt;&lt;script&gt;x&lt;/script&gt;" aria-invalid="true"');
    const expired = { ...form, acceptsAddress: false, expired: true };
    const ru = refundPage(assets, expired, lang('ru'), { refusal: 'expired', value: '0xabc' }).text;
    expect(ru).toContain('role="alert">Срок действия этой ссылки на возврат истёк: адрес не принят</p>');
    expect(ru).toContain('<p class="state bad" id="state">Срок действия этой ссылки на возврат истёк</p>');
    expect(ru).not.toContain('<form');
    const used = refundPage(assets, { ...form, acceptsAddress: false, address: '0xabc', status: 'awaiting_payment' }, lang('zh'), { refusal: 'used', value: '0xdef' }).text;
    expect(used).toContain('role="alert">此退款链接已被使用：已提供地址</p>');
    expect(used).toContain('<p class="state pending" id="state">等待打款</p>');
  });

  it('the merchant\'s name, or the language\'s word for the merchant, where a sentence names them', () => {
    const canceled = { ...form, acceptsAddress: false, status: 'canceled' as const };
    expect(refundPage(assets, canceled, lang('es')).text).toContain('<p>Contacte con Corner &lt;b&gt;Shop&lt;/b&gt; sobre este reembolso.</p>');
    expect(refundPage(assets, { ...canceled, merchant: null }, lang('es')).text).toContain('<p>Contacte con la tienda sobre este reembolso.</p>');
  });

  it('the not-found page in the language Accept-Language picks, English when none of ours', () => {
    expect(refundNotFoundPage(assets, pickLanguage(null, 'pt-BR,pt;q=0.9')).text).toContain('<h1>Reembolso não encontrado</h1>');
    expect(refundNotFoundPage(assets, pickLanguage(null, 'ja')).text).toContain('<h1>Refund not found</h1>');
  });
});

import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LANGUAGES, pickLanguage, say } from '../src/payments/checkout-i18n/index.js';
import { en } from '../src/payments/checkout-i18n/en.js';
import { formatPrice } from '../src/payments/checkout-page.js';

// The checkout page's languages (src/payments/checkout-i18n/): a file per language, every key
// in each, the language picked from ?lang= or Accept-Language.

const DIR = fileURLToPath(new URL('../src/payments/checkout-i18n/', import.meta.url));
const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('checkout languages', () => {
  it('English plus German, Spanish, French, Portuguese, Russian, Chinese and Turkish, each file listed', () => {
    expect(LANGUAGES.map((l) => l.code)).toEqual(expect.arrayContaining(['en', 'de', 'es', 'fr', 'pt', 'ru', 'zh', 'tr']));
    const files = readdirSync(DIR).filter((f) => f.endsWith('.ts') && f !== 'index.ts').map((f) => f.slice(0, -3)).sort();
    expect(files).toEqual(LANGUAGES.map((l) => l.code).sort());
  });

  it('every language file has every key of the English one, no other, each non-empty with the same {placeholders}', async () => {
    for (const l of LANGUAGES) {
      // Read from the file itself, as a contributor's new file would be.
      const mod = await import(`../src/payments/checkout-i18n/${l.code}.ts`) as Record<string, Record<string, string>>;
      const messages = mod[l.code]!;
      expect(Object.keys(messages).sort(), l.code).toEqual(Object.keys(en).sort());
      for (const [key, text] of Object.entries(en)) {
        expect(typeof messages[key] === 'string' && messages[key]!.trim().length > 0, `${l.code}.${key}`).toBe(true);
        expect(placeholders(messages[key]!), `${l.code}.${key}`).toEqual(placeholders(text));
      }
      if (l.code !== 'en') expect(messages.awaiting, l.code).not.toBe(en.awaiting);
    }
  });

  it('picks ?lang= first, then Accept-Language by q-value and primary subtag, else English', () => {
    const pick = (q: string | null, h?: string) => pickLanguage(q, h).code;
    expect(pick(null, undefined)).toBe('en');
    expect(pick(null, 'de-DE,de;q=0.9,en;q=0.8')).toBe('de');
    expect(pick(null, 'pt-BR')).toBe('pt');
    expect(pick(null, 'zh-Hant-TW;q=0.5, ja;q=0.9')).toBe('zh');
    expect(pick(null, 'ja, ru;q=0.1, fr;q=0.2')).toBe('fr');
    expect(pick(null, 'tr;q=0, es')).toBe('es');
    expect(pick(null, '*')).toBe('en');
    expect(pick(null, ';;;,,q=,de;q=abc')).toBe('de');
    expect(pick('ru', 'de')).toBe('ru');
    expect(pick('RU', 'de')).toBe('ru');
    expect(pick('xx', 'fr')).toBe('fr');
  });

  it('fills placeholders, and the fiat price is written the language\'s way, every digit kept', () => {
    expect(say(en, 'underpaid', { due: '0.6 ETH' })).toBe('Partly paid: 0.6 ETH still due');
    expect(formatPrice({ amount: '19.99', currency: 'EUR' }, 'en')).toBe('€19.99');
    expect(formatPrice({ amount: '19.99', currency: 'EUR' }, 'de')).toBe('19,99\u00a0€');
    expect(formatPrice({ amount: '1000', currency: 'JPY' }, 'en')).toBe('¥1,000');
    expect(formatPrice({ amount: '12345678901234567.89', currency: 'USD' }, 'en')).toBe('$12,345,678,901,234,567.89');
  });
});

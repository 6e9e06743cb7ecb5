import { de } from './de.js';
import { en, type MessageKey, type Messages } from './en.js';
import { es } from './es.js';
import { fr } from './fr.js';
import { pt } from './pt.js';
import { ru } from './ru.js';
import { tr } from './tr.js';
import { zh } from './zh.js';

export type { MessageKey, Messages };

/**
 * The hosted pages' languages (the checkout, the refund link), in the order of the language switch. To add one: a file
 * `<code>.ts` beside these (copy en.ts; the type requires every key) and a line here.
 * `locale` formats the fiat price (Intl).
 */
export const LANGUAGES: ReadonlyArray<{ code: string; locale: string; messages: Messages }> = [
  { code: 'en', locale: 'en', messages: en },
  { code: 'de', locale: 'de', messages: de },
  { code: 'es', locale: 'es', messages: es },
  { code: 'fr', locale: 'fr', messages: fr },
  { code: 'pt', locale: 'pt', messages: pt },
  { code: 'ru', locale: 'ru', messages: ru },
  { code: 'tr', locale: 'tr', messages: tr },
  { code: 'zh', locale: 'zh-CN', messages: zh },
];

const BY_CODE = new Map(LANGUAGES.map((l) => [l.code, l]));

export type Language = (typeof LANGUAGES)[number];

/**
 * The page's language: `?lang=` when it names one of ours (the language switch's links), else
 * the first of `Accept-Language` by q-value whose primary subtag we have (`pt-BR` is `pt`,
 * `zh-Hant-TW` is `zh`), else English.
 */
export function pickLanguage(query: string | null, acceptLanguage: string | undefined): Language {
  const asked = query === null ? undefined : BY_CODE.get(query.toLowerCase());
  if (asked) return asked;
  const ranked = (acceptLanguage ?? '').slice(0, 1000).split(',').map((part, i) => {
    const [tag = '', ...params] = part.trim().split(';');
    const q = params.map((p) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    return { primary: tag.trim().toLowerCase().split('-')[0]!, q: q === undefined ? 1 : Number(q), i };
  }).filter((r) => r.q > 0).sort((a, b) => b.q - a.q || a.i - b.i);
  for (const r of ranked) {
    const found = BY_CODE.get(r.primary);
    if (found) return found;
  }
  return BY_CODE.get('en')!;
}

/** `messages[key]` with each `{name}` replaced by `vars[name]` (the page escapes the result). */
export function say(messages: Messages, key: MessageKey, vars: Record<string, string | number> = {}): string {
  return messages[key].replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

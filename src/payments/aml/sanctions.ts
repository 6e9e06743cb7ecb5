import type { Kysely } from 'kysely';
import type { Database } from '../../store/index.js';
import type { AmlProvider, AmlResult, AmlSubject } from './types.js';

export class SanctionsFileError extends Error {
  readonly code = 'E_SANCTIONS_FILE';
}

export interface SanctionedAddress {
  address: string;
  currency: string;
}

/** Where the operator gets the real list (docs/payments.md says the same). */
export const OFAC_SEARCH_URL = 'https://sanctionssearch.ofac.treas.gov/';

/** Lower case for 0x addresses (EVM is case-insensitive); other chains' addresses as given. */
export function sanctionKey(address: string): string {
  const s = address.trim();
  return /^0x[0-9a-fA-F]{40}$/.test(s) ? s.toLowerCase() : s;
}

/**
 * Reads a sanctions list in any of the shapes operators have: OFAC's SDN_ADVANCED.XML
 * (its "Digital Currency Address - XXX" features), JSON (an array of addresses, of
 * `{address, currency}`, or `{addresses: [...]}`), or plain text (one address per line,
 * optionally `CURRENCY address`, `#` comments).
 */
export function parseSanctionsList(text: string): SanctionedAddress[] {
  const trimmed = text.trimStart();
  let out: SanctionedAddress[];
  if (trimmed.startsWith('<')) out = parseSdnAdvancedXml(text);
  else if (trimmed.startsWith('[') || trimmed.startsWith('{')) out = parseJsonList(trimmed);
  else out = parsePlainList(text);
  if (out.length === 0) throw new SanctionsFileError('no addresses found in the file');
  return out;
}

function parsePlainList(text: string): SanctionedAddress[] {
  const out: SanctionedAddress[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const s = line.replace(/#.*$/, '').trim();
    if (!s) return;
    const parts = s.split(/[\s,;]+/);
    if (parts.length > 2) throw new SanctionsFileError(`line ${i + 1}: expected "address" or "CURRENCY address"`);
    const address = parts.at(-1)!;
    out.push({ address, currency: parts.length === 2 ? parts[0]!.toUpperCase() : guessCurrency(address) });
  });
  return out;
}

function parseJsonList(text: string): SanctionedAddress[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new SanctionsFileError(`not valid JSON: ${(err as Error).message}`);
  }
  const list = Array.isArray(data) ? data : (data as { addresses?: unknown }).addresses;
  if (!Array.isArray(list)) throw new SanctionsFileError('JSON must be an array of addresses or an object with an "addresses" array');
  return list.map((item, i) => {
    if (typeof item === 'string') return { address: item.trim(), currency: guessCurrency(item) };
    if (item && typeof item === 'object' && typeof (item as { address?: unknown }).address === 'string') {
      const { address, currency } = item as { address: string; currency?: unknown };
      return { address: address.trim(), currency: typeof currency === 'string' ? currency.toUpperCase() : guessCurrency(address) };
    }
    throw new SanctionsFileError(`addresses[${i}]: expected a string or {address, currency}`);
  });
}

/**
 * SDN_ADVANCED.XML declares the feature types in its reference values
 * (`<FeatureType ID="345">Digital Currency Address - ETH</FeatureType>`) and lists each
 * address as a `<Feature FeatureTypeID="345">` whose `<VersionDetail>` holds the address.
 */
function parseSdnAdvancedXml(xml: string): SanctionedAddress[] {
  const types = new Map<string, string>();
  for (const m of xml.matchAll(/<FeatureType\b[^>]*\bID="(\d+)"[^>]*>\s*Digital Currency Address - ([A-Za-z0-9]+)\s*<\/FeatureType>/g)) {
    types.set(m[1]!, m[2]!.toUpperCase());
  }
  if (types.size === 0) throw new SanctionsFileError('XML without "Digital Currency Address" feature types: is this OFAC\'s SDN_ADVANCED.XML?');
  const out: SanctionedAddress[] = [];
  for (const m of xml.matchAll(/<Feature\b[^>]*\bFeatureTypeID="(\d+)"[^>]*>([\s\S]*?)<\/Feature>/g)) {
    const currency = types.get(m[1]!);
    if (!currency) continue;
    const detail = /<VersionDetail\b[^>]*>([^<]+)<\/VersionDetail>/.exec(m[2]!);
    if (detail) out.push({ address: detail[1]!.trim(), currency });
  }
  return out;
}

function guessCurrency(address: string): string {
  const s = address.trim();
  if (/^0x[0-9a-fA-F]{40}$/.test(s)) return 'ETH';
  if (/^G[A-Z2-7]{55}$/.test(s)) return 'XLM';
  if (/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(s)) return 'TRX';
  return 'XBT';
}

/** Replaces the stored list in one transaction: screening never sees half a list. */
export async function replaceSanctions(db: Kysely<Database>, list: SanctionedAddress[], source: string): Promise<number> {
  const now = new Date().toISOString();
  const rows = new Map<string, { address_key: string; address: string; currency: string; source: string; loaded_at: string }>();
  for (const a of list) rows.set(sanctionKey(a.address), { address_key: sanctionKey(a.address), address: a.address, currency: a.currency, source, loaded_at: now });
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('aml_sanctions').execute();
    const all = [...rows.values()];
    for (let i = 0; i < all.length; i += 200) await trx.insertInto('aml_sanctions').values(all.slice(i, i + 200)).execute();
  });
  return rows.size;
}

export async function sanctionsCount(db: Kysely<Database>): Promise<number> {
  const r = await db.selectFrom('aml_sanctions').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** Offline screening: a listed sender is score 100, `severe`; anything else is `low`, score 0. */
export class SanctionsListProvider implements AmlProvider {
  readonly name = 'sanctions-list';
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async screen(subject: AmlSubject): Promise<AmlResult> {
    const hit = await this.#db.selectFrom('aml_sanctions').selectAll().where('address_key', '=', sanctionKey(subject.address)).executeTakeFirst();
    const checked_at = new Date().toISOString();
    if (!hit) return { provider: this.name, score: 0, risk_level: 'low', details: [], report_url: OFAC_SEARCH_URL, checked_at };
    return {
      provider: this.name, score: 100, risk_level: 'severe',
      details: [{ category: 'sanctions', address: subject.address, source: hit.source }],
      report_url: OFAC_SEARCH_URL, checked_at,
    };
  }
}

/** Development only: passes everything, and says so. */
export class NoAmlProvider implements AmlProvider {
  readonly name = 'none';
  async screen(): Promise<AmlResult> {
    return { provider: 'none', score: 0, risk_level: 'unknown', details: [], report_url: null, checked_at: new Date().toISOString() };
  }
}

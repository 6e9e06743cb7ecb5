import type { Kysely } from 'kysely';
import { bitcoinAddressFormat } from '../../chains/utxo/formats.js';
import { lockFor, type Database, type UtxoAddressFormat } from '../../store/index.js';
import { parseSolanaAddress } from '../../chains/solana/address.js';
import { parseStellarAddress } from '../../chains/stellar/address.js';
import { parseTronAddress } from '../../chains/tron/address.js';
import { parseUtxoAddress } from '../../chains/utxo/address.js';
import type { AmlProvider, AmlResult, AmlSubject } from './types.js';
import { RpcctlError } from '../../util/errors.js';

export class SanctionsFileError extends RpcctlError {
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
 * optionally `CURRENCY address`, `#` comments). Every entry must be an address: one that is
 * not is refused as `source:line: what is wrong`, never loaded as a "sanctioned address".
 */
export function parseSanctionsList(text: string, source = 'sanctions list'): SanctionedAddress[] {
  const trimmed = text.trimStart();
  let out: SanctionedAddress[];
  if (trimmed.startsWith('<')) out = parseSdnAdvancedXml(text, source);
  else if (trimmed.startsWith('[') || trimmed.startsWith('{')) out = parseJsonList(text, source);
  else out = parsePlainList(text, source);
  if (out.length === 0) throw new SanctionsFileError(`${source}: no addresses found in the file`);
  return out;
}

function parsePlainList(text: string, source: string): SanctionedAddress[] {
  const out: SanctionedAddress[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const at = `${source}:${i + 1}`;
    const s = line.replace(/#.*$/, '').trim();
    if (!s) return;
    const parts = s.split(/[\s,;]+/);
    if (parts.length > 2) throw new SanctionsFileError(`${at}: expected "address" or "CURRENCY address", got ${JSON.stringify(clip(s))}`);
    out.push(sanctionedAddress(at, parts.at(-1)!, parts.length === 2 ? parts[0] : undefined));
  });
  return out;
}

function parseJsonList(text: string, source: string): SanctionedAddress[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    const line = /\bline (\d+)/.exec((err as Error).message)?.[1];
    throw new SanctionsFileError(`${source}${line ? `:${line}` : ''}: not valid JSON: ${(err as Error).message}`);
  }
  const list = Array.isArray(data) ? data : (data as { addresses?: unknown } | null)?.addresses;
  if (!Array.isArray(list)) throw new SanctionsFileError(`${source}: JSON must be an array of addresses or an object with an "addresses" array`);
  const lines = new TextLines(text);
  return list.map((item, i) => {
    const given = typeof item === 'string' ? item : (item as { address?: unknown } | null)?.address;
    // JSON.parse keeps no positions: the entry's line is where its address text comes next.
    const at = `${source}:${lines.next(typeof given === 'string' ? given : undefined)}: addresses[${i}]`;
    if (typeof item === 'string') return sanctionedAddress(at, item);
    if (item && typeof item === 'object' && typeof given === 'string') {
      const currency = (item as { currency?: unknown }).currency;
      if (currency !== undefined && typeof currency !== 'string') throw new SanctionsFileError(`${at}: "currency" must be a string such as "ETH"`);
      return sanctionedAddress(at, given, currency);
    }
    throw new SanctionsFileError(`${at}: expected a string or {address, currency}, got ${clip(JSON.stringify(item) ?? String(item))}`);
  });
}

/** Line numbers of a text, asked for in increasing positions (one pass over a large file). */
class TextLines {
  readonly #text: string;
  #offset = 0;
  #line = 1;

  constructor(text: string) {
    this.#text = text;
  }

  /** The line of position `index`, at or after the last one asked for. */
  at(index: number): number {
    for (let i = this.#offset; i < index; i++) if (this.#text.charCodeAt(i) === 10) this.#line++;
    this.#offset = Math.max(this.#offset, index);
    return this.#line;
  }

  /** The line where `needle` next occurs; the current line when it does not. */
  next(needle: string | undefined): number {
    const found = needle ? this.#text.indexOf(needle, this.#offset) : -1;
    if (found === -1) return this.#line;
    const line = this.at(found);
    // Past it: the same address listed twice is found twice, on its two lines.
    this.#offset = found + needle!.length;
    return line;
  }
}

/**
 * SDN_ADVANCED.XML declares the feature types in its reference values
 * (`<FeatureType ID="345">Digital Currency Address - ETH</FeatureType>`) and lists each
 * address as a `<Feature FeatureTypeID="345">` whose `<VersionDetail>` holds the address.
 */
function parseSdnAdvancedXml(xml: string, source: string): SanctionedAddress[] {
  const types = new Map<string, string>();
  for (const m of xml.matchAll(/<FeatureType\b[^>]*\bID="(\d+)"[^>]*>\s*Digital Currency Address - ([A-Za-z0-9]+)\s*<\/FeatureType>/g)) {
    types.set(m[1]!, m[2]!.toUpperCase());
  }
  if (types.size === 0) throw new SanctionsFileError(`${source}: XML without "Digital Currency Address" feature types: is this OFAC's SDN_ADVANCED.XML?`);
  const out: SanctionedAddress[] = [];
  const lines = new TextLines(xml);
  for (const m of xml.matchAll(/<Feature\b[^>]*\bFeatureTypeID="(\d+)"[^>]*>([\s\S]*?)<\/Feature>/g)) {
    const currency = types.get(m[1]!);
    if (!currency) continue;
    const detail = /<VersionDetail\b[^>]*>([^<]*)<\/VersionDetail>/.exec(m[2]!);
    // The address's own line; the feature's opening tag when it has none.
    const at = `${source}:${lines.at(m.index + (detail ? m[0].indexOf('>') + 1 + detail.index : 0))}`;
    if (!detail) throw new SanctionsFileError(`${at}: a "Digital Currency Address - ${currency}" feature without a <VersionDetail> address`);
    out.push(sanctionedAddress(at, detail[1]!, currency));
  }
  return out;
}

const CURRENCY = /^[A-Z][A-Z0-9]{1,11}$/;

/** An entry checked against its currency's address format (see `addressChecks`), or refused naming `at`. */
function sanctionedAddress(at: string, rawAddress: string, rawCurrency?: string): SanctionedAddress {
  const address = rawAddress.trim();
  if (!address) throw new SanctionsFileError(`${at}: empty address`);
  if (rawCurrency === undefined) {
    const guessed = guessAddress(address);
    if (!guessed) {
      throw new SanctionsFileError(`${at}: ${JSON.stringify(clip(address))} is not an address of a chain rpcctl knows `
        + '(EVM 0x…, Bitcoin, Litecoin, Dogecoin, Tron T…, Stellar G…, Solana); for another chain write "CURRENCY address"');
    }
    return guessed;
  }
  const currency = rawCurrency.trim().toUpperCase();
  if (!CURRENCY.test(currency)) throw new SanctionsFileError(`${at}: ${JSON.stringify(clip(rawCurrency))} is not a currency code such as ETH or XBT`);
  const checks = addressChecks(currency);
  const errors: string[] = [];
  for (const check of checks) {
    try {
      return { address: check.parse(address), currency };
    } catch (err) {
      errors.push(`${check.name}: ${(err as Error).message}`);
    }
  }
  throw new SanctionsFileError(`${at}: ${JSON.stringify(clip(address))} is not a valid ${currency} address (${errors.join('; ')})`);
}

interface AddressCheck {
  name: string;
  /** The address as stored (a canonical form where the chain has one); throws when it is not one. */
  parse(address: string): string;
}

const HEX40 = /^0x[0-9a-fA-F]{40}$/;
const BITCOIN = [bitcoinAddressFormat('mainnet')!, bitcoinAddressFormat('testnet')!, bitcoinAddressFormat('regtest')!];
const LITECOIN: UtxoAddressFormat[] = [{ bech32: 'ltc', pub_key_hash: 0x30, script_hash: 0x32 }, { bech32: 'ltc', pub_key_hash: 0x30, script_hash: 0x05 },
  { bech32: 'tltc', pub_key_hash: 0x6f, script_hash: 0x3a }];
const DOGECOIN: UtxoAddressFormat[] = [{ bech32: null, pub_key_hash: 0x1e, script_hash: 0x16 }];

const evmCheck: AddressCheck = {
  name: 'EVM',
  // Case is not judged: the list is matched case-insensitively, and a list is what it says.
  parse(a) {
    if (!HEX40.test(a)) throw new Error('must be 0x followed by 40 hex digits');
    return a;
  },
};
const utxoCheck = (name: string, formats: UtxoAddressFormat[]): AddressCheck => ({
  name,
  parse(a) {
    for (const f of formats) {
      try {
        return parseUtxoAddress(f, a).display;
      } catch { /* the next network's prefixes */ }
    }
    throw new Error('not a valid base58check or bech32 address of this chain');
  },
});
const tronCheck: AddressCheck = { name: 'Tron', parse: (a) => parseTronAddress(a).display };
const stellarCheck: AddressCheck = { name: 'Stellar', parse: (a) => parseStellarAddress(a).display };
/** A wallet's base58 public key, matched as written: base58 is case-sensitive. */
const solanaCheck: AddressCheck = { name: 'Solana', parse: (a) => parseSolanaAddress(a).display };
/** Chains rpcctl does not watch: their addresses cannot be checked, only told from prose. */
const otherCheck: AddressCheck = {
  name: 'address',
  parse(a) {
    if (!/^[A-Za-z0-9:]{20,128}$/.test(a)) throw new Error('expected 20 to 128 letters and digits');
    return a;
  },
};

const EVM_CURRENCIES = new Set(['ETH', 'ETC', 'BSC', 'BNB', 'ARB', 'MATIC', 'POL', 'OP', 'BASE', 'AVAX', 'FTM', 'GNO', 'XDAI']);

/** The formats an address of `currency` may take; a stablecoin lives on several chains. */
function addressChecks(currency: string): AddressCheck[] {
  if (EVM_CURRENCIES.has(currency)) return [evmCheck];
  switch (currency) {
    case 'XBT': case 'BTC': return [utxoCheck('Bitcoin', BITCOIN)];
    case 'LTC': return [utxoCheck('Litecoin', LITECOIN)];
    case 'DOGE': return [utxoCheck('Dogecoin', DOGECOIN)];
    case 'TRX': return [tronCheck];
    case 'XLM': return [stellarCheck];
    case 'SOL': return [solanaCheck];
    // Stablecoins: ERC-20/TRC-20/Stellar/SPL tokens (an SPL holder listed by its wallet), and Omni's USDT on Bitcoin addresses.
    case 'USDT': case 'USDC': return [evmCheck, tronCheck, stellarCheck, utxoCheck('Bitcoin', BITCOIN), solanaCheck];
    default: return [otherCheck];
  }
}

/** An address without a currency: known by its shape and checksum, else not taken. */
function guessAddress(address: string): SanctionedAddress | undefined {
  const guesses: Array<[string, AddressCheck]> = [['ETH', evmCheck], ['XLM', stellarCheck], ['TRX', tronCheck],
    ['XBT', utxoCheck('Bitcoin', BITCOIN)], ['LTC', utxoCheck('Litecoin', LITECOIN)], ['DOGE', utxoCheck('Dogecoin', DOGECOIN)],
    // Last: base58 of 32 bytes, which no base58check address above decodes to.
    ['SOL', solanaCheck]];
  for (const [currency, check] of guesses) {
    try {
      return { address: check.parse(address), currency };
    } catch { /* the next chain */ }
  }
  return undefined;
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** Replaces the stored list in one transaction: screening never sees half a list. */
export async function replaceSanctions(db: Kysely<Database>, list: SanctionedAddress[], source: string): Promise<number> {
  const now = new Date().toISOString();
  const rows = new Map<string, { address_key: string; address: string; currency: string; source: string; loaded_at: string }>();
  for (const a of list) rows.set(sanctionKey(a.address), { address_key: sanctionKey(a.address), address: a.address, currency: a.currency, source, loaded_at: now });
  await db.transaction().execute(async (trx) => {
    // Instances starting together on an empty store each load the list: without the lock the
    // second one's delete saw none of the first one's uncommitted rows, and its inserts then
    // failed on their keys ("duplicate key ... aml_sanctions_pkey"), so that instance did not start.
    await lockFor(trx, 'aml_sanctions');
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

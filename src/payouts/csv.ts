import { RpcctlError } from '../util/errors.js';
import { MAX_PAYOUT_LINES, type PayoutLineInput } from '../wire/payouts.js';

/** The columns of a payouts CSV file, in any order; `network`, `address` and `amount` are required (docs/cli.md). */
export const CSV_COLUMNS = ['network', 'asset', 'address', 'amount', 'currency', 'reference'] as const;
const REQUIRED = ['network', 'address', 'amount'] as const;
const DECIMAL = /^(?:0|[1-9]\d{0,40})(?:\.\d{1,30})?$/;

/** A line of the file that cannot be sent, named by its line number in the file. */
export class CsvError extends RpcctlError {
  readonly code = 'E_PAYOUT_CSV';
}

/** The CSV's records (RFC 4180: quoted fields may hold commas, quotes doubled, CRLF or LF), each with its first line's number. */
function records(text: string): Array<{ line: number; cells: string[] }> {
  const out: Array<{ line: number; cells: string[] }> = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  const end = () => {
    cells.push(cell);
    if (!(cells.length === 1 && cells[0]!.trim() === '')) out.push({ line: start, cells });
    cells = [];
    cell = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (c === '"') quoted = false;
      else { if (c === '\n') line++; cell += c; }
    } else if (c === '"' && cell === '') quoted = true;
    else if (c === ',') { cells.push(cell); cell = ''; }
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      end();
      line++;
      start = line;
    } else cell += c;
  }
  if (quoted) throw new CsvError(`line ${start}: a quoted field is not closed`);
  if (cell !== '' || cells.length > 0) end();
  return out;
}

/** One record as a payout line, checked as far as it can be without the service; errors name the file's line. */
function lineOf(header: string[], rec: { line: number; cells: string[] }): PayoutLineInput {
  const at = (msg: string) => new CsvError(`line ${rec.line}: ${msg}`);
  if (rec.cells.length !== header.length) throw at(`has ${rec.cells.length} fields, the header ${header.length}`);
  const v = Object.fromEntries(header.map((h, i) => [h, rec.cells[i]!.trim()])) as Record<string, string>;
  for (const k of REQUIRED) if (!v[k]) throw at(`${k}: is empty`);
  if (!DECIMAL.test(v.amount!) || /^0(\.0*)?$/.test(v.amount!)) throw at(`amount: must be a positive decimal such as 12.50, got "${v.amount}"`);
  if (/[\s\p{Cc}]/u.test(v.address!)) throw at('address: must not contain spaces or control characters');
  if (v.currency && !/^[A-Z]{3}$/.test(v.currency)) throw at(`currency: must be an ISO 4217 code in capitals such as USD, got "${v.currency}"`);
  if (v.reference && (v.reference.length > 128 || /\p{Cc}/u.test(v.reference))) throw at('reference: must be at most 128 characters, no control characters');
  return {
    network: v.network!, address: v.address!, ...(v.asset ? { asset: v.asset } : {}),
    ...(v.currency ? { price_amount: v.amount!, price_currency: v.currency } : { amount: v.amount! }),
    ...(v.reference ? { reference: v.reference } : {}),
  };
}

/** The lines of a payouts CSV file, and each one's line number in the file (for the service's errors, which count from 0). */
export function parsePayoutCsv(text: string): { lines: PayoutLineInput[]; fileLines: number[] } {
  const recs = records(text.replace(/^\uFEFF/, ''));
  const head = recs.shift();
  if (!head) throw new CsvError('the file is empty: the first line must be the header network,asset,address,amount,currency,reference');
  const header = head.cells.map((h) => h.trim().toLowerCase());
  for (const h of header) if (!(CSV_COLUMNS as readonly string[]).includes(h)) throw new CsvError(`line 1: unknown column "${h}" (the columns: ${CSV_COLUMNS.join(',')})`);
  for (const k of REQUIRED) if (!header.includes(k)) throw new CsvError(`line 1: the header has no "${k}" column (the columns: ${CSV_COLUMNS.join(',')})`);
  if (recs.length === 0) throw new CsvError('the file has a header and no lines');
  if (recs.length > MAX_PAYOUT_LINES) throw new CsvError(`${recs.length} lines: a payout has at most ${MAX_PAYOUT_LINES} (split the file)`);
  return { lines: recs.map((r) => lineOf(header, r)), fileLines: recs.map((r) => r.line) };
}

/** Exact sums of decimal strings (never floats). */
export function addDecimals(a: string, b: string): string {
  const scale = Math.max(a.split('.')[1]?.length ?? 0, b.split('.')[1]?.length ?? 0);
  const toInt = (s: string) => BigInt((s.split('.')[0] ?? '0') + (s.split('.')[1] ?? '').padEnd(scale, '0'));
  const sum = (toInt(a) + toInt(b)).toString().padStart(scale + 1, '0');
  if (scale === 0) return sum;
  return `${sum.slice(0, -scale)}.${sum.slice(-scale)}`.replace(/\.?0+$/, '');
}

/** Totals per network and asset (fiat lines per currency): what the summary shows before sending. */
export function totalsOf(lines: PayoutLineInput[]): Array<{ network: string; unit: string; lines: number; total: string }> {
  const by = new Map<string, { network: string; unit: string; lines: number; total: string }>();
  for (const l of lines) {
    const unit = l.price_currency ?? l.asset ?? 'native';
    const key = `${l.network}\u0000${unit}`;
    const t = by.get(key) ?? { network: l.network, unit, lines: 0, total: '0' };
    t.lines++;
    t.total = addDecimals(t.total, l.price_amount ?? l.amount!);
    by.set(key, t);
  }
  return [...by.values()];
}

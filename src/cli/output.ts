import { escapeControl, localTime, relativeTime } from './format.js';
import { CliError, EXIT, pendingOutput as pendingJq, type CliIO } from './io.js';

export interface OutputOptions {
  json?: boolean;
  color?: boolean;
  /** A jq filter for the JSON output (implies --json), as `gh --jq`. */
  jq?: string;
}

// Built-ins through process.getBuiltinModule, not `import ... from 'node:…'`: an ESM import
// builds a facade that reads every export, running lazy getters (util's, module's) that
// every command would pay for at start.
const { stripVTControlCharacters, styleText } = process.getBuiltinModule('node:util');

/** cli-table3 (CommonJS) is loaded only when a table goes to a terminal: piped output never needs it. */
const requireCjs = process.getBuiltinModule('node:module').createRequire(import.meta.url);

/** The few styles the CLI uses; plain text when colour is off. */
export interface Colors {
  green(text: string): string;
  yellow(text: string): string;
  red(text: string): string;
  bold(text: string): string;
  dim(text: string): string;
}

export type Style = keyof Colors;
const STYLES: Style[] = ['green', 'yellow', 'red', 'bold', 'dim'];

/**
 * ANSI styles through node:util (no chalk: its import alone costs a command several ms). As
 * chalk does, an empty string stays empty and each line is styled on its own, so a pager or
 * a terminal that cuts lines never carries a colour over.
 */
export function colors(enabled: boolean): Colors {
  const paint = (style: Style) => (text: string) => (!enabled || text === ''
    ? text
    : text.split('\n').map((line) => styleText(style, line, { validateStream: false })).join('\n'));
  return Object.fromEntries(STYLES.map((style) => [style, paint(style)])) as unknown as Colors;
}

async function runJq(value: unknown, filter: string, compact: boolean): Promise<string> {
  const { raw } = await import('jq-wasm');
  try {
    // Strings print bare (-r), as gh does: `--jq .url` gives a URL, not a quoted string.
    return await raw(JSON.stringify(value), filter, compact ? ['-r', '-c'] : ['-r']);
  } catch (err) {
    const message = (err as Error).message.replace(/^jq: error(?: \(at [^)]*\))?: /, '').trim();
    throw new CliError(`--jq: ${message}`, /compile error/.test(message) ? EXIT.usage : EXIT.error);
  }
}

export interface Column<T> {
  header: string;
  value: (row: T) => string | number | boolean | null | undefined;
  /** Never truncated to fit the terminal: ids and names, which people copy. */
  keep?: boolean;
  /**
   * How much the column matters when the terminal is narrow (default 0). Lower ones give way
   * first: a column is cut only when every less useful one is cut to its minimum. Below 0:
   * left out when the table does not fit otherwise. Above 0: cut only when every column below
   * 0 is left out (a status or an amount cut to `pendi…` or `25 US…` says nothing). Free text
   * that still reads when cut (an error, a URL) stays at 0 or below.
   */
  priority?: number;
  /** Its colour on a terminal (the value itself stays plain data, escaped before it is styled). */
  style?: (row: T) => Style | undefined;
}

/** Spaces between table columns on a terminal. */
const GAP = 2;
/** A truncated column keeps at least this many characters (with the `…`). */
const MIN_WIDTH = 6;

/**
 * Column widths that fit `columns`: the widest truncatable column gives way first, down to
 * MIN_WIDTH (or its header); kept columns never shrink. Without a known width, natural widths.
 */
export function fitWidths(natural: number[], keep: boolean[], minimum: number[], columns: number | undefined, priority: number[] = []): number[] {
  const widths = [...natural];
  if (!columns) return widths;
  const available = columns - GAP * (widths.length - 1);
  let total = widths.reduce((a, b) => a + b, 0);
  const rank = (i: number) => priority[i] ?? 0;
  while (total > available) {
    // The least useful column gives way first; among equals, the widest.
    let widest = -1;
    for (let i = 0; i < widths.length; i++) {
      if (keep[i] || widths[i]! <= minimum[i]!) continue;
      if (widest === -1 || rank(i) < rank(widest) || (rank(i) === rank(widest) && widths[i]! > widths[widest]!)) widest = i;
    }
    if (widest === -1) break; // nothing left to give: wider than the terminal, as little as possible
    widths[widest]!--;
    total--;
  }
  return widths;
}

/**
 * Which columns a terminal `columns` wide shows: a column with a priority below 0 is left out
 * (the least useful first) while the table does not fit with the columns of priority 0 and
 * below cut to their `minimum` and those above 0 at their `natural` width. So a column that
 * says nothing when cut (a status, an amount: priority above 0) is cut only when nothing is
 * left to leave out. Without `natural`, only when even the narrowest widths do not fit.
 */
export function shownColumns(minimum: number[], priority: number[], columns: number | undefined, natural: number[] = minimum): boolean[] {
  const shown = minimum.map(() => true);
  if (!columns) return shown;
  const need = () => minimum.reduce((sum, w, i) => sum + (shown[i] ? (priority[i]! > 0 ? natural[i]! : w) + GAP : 0), -GAP);
  while (need() > columns) {
    let drop = -1;
    for (let i = 0; i < minimum.length; i++) {
      if (shown[i] && priority[i]! < 0 && (drop === -1 || priority[i]! < priority[drop]!)) drop = i;
    }
    if (drop === -1) break;
    shown[drop] = false;
  }
  return shown;
}

/**
 * The note under a table that left columns out, in lines that fit `columns` (it speaks of
 * this width, so it must fit it).
 */
export function leftOutNote(headers: string[], columns: number | undefined): string {
  const words = `(left out at this width: ${headers.join(', ')}; piped output and --json have all)`.split(' ');
  if (!columns) return words.join(' ');
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line !== '' && line.length + 1 + word.length > columns) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  return [...lines, line].join('\n');
}

/**
 * Where commands print. On a TTY: tables and colour. Piped: tab-separated, no colour, no
 * truncation. `--json`: the API objects, nothing else on stdout.
 */
export class Output {
  readonly io: CliIO;
  readonly json: boolean;
  readonly isTTY: boolean;
  readonly c: Colors;
  readonly jq: string | undefined;

  constructor(io: CliIO, opts: OutputOptions = {}) {
    this.io = io;
    this.jq = opts.jq;
    this.json = (opts.json ?? false) || opts.jq !== undefined;
    this.isTTY = io.stdout.isTTY === true;
    const color = opts.color !== false && this.isTTY && !('NO_COLOR' in io.env && io.env.NO_COLOR !== '') && io.env.TERM !== 'dumb';
    this.c = colors(color);
  }

  print(text = ''): void {
    this.io.stdout.write(`${text}\n`);
  }

  printJson(value: unknown): void {
    if (this.jq !== undefined) return this.#jq(value, false);
    this.io.stdout.write(`${jsonText(value, 2)}\n`);
  }

  /** One value as one line (JSON lines: `events`, `webhook listen`). */
  printJsonLine(value: unknown): void {
    if (this.jq !== undefined) return this.#jq(value, true);
    this.io.stdout.write(`${jsonText(value)}\n`);
  }

  /**
   * Text as it came (`rpcctl api`'s body that is not JSON): exactly, piped; on a terminal each
   * line escaped (escapeControl), as it may come from anywhere (a proxy's error page).
   */
  printRaw(text: string): void {
    const body = text.endsWith('\n') ? text.slice(0, -1) : text;
    this.print(this.isTTY ? body.split('\n').map(escapeControl).join('\n') : body);
  }

  #jq(value: unknown, compact: boolean): void {
    const filter = this.jq!;
    const done = (pendingJq.get(this.io) ?? Promise.resolve()).then(async () => {
      const text = await runJq(value, filter, compact);
      // Strings print bare (-r): on a terminal, a value's ESC or bidi override would act.
      if (text !== '') this.printRaw(text);
    });
    // Handled here so Node does not call it unhandled; `flushOutput` still rejects with it.
    done.catch(() => {});
    pendingJq.set(this.io, done);
  }

  /** Status lines for people go to stderr, so stdout stays parseable. */
  note(text: string): void {
    this.io.stderr.write(`${text}\n`);
  }

  /** One tab-separated line of data cells (piped output), each escaped: a tab or a newline in a value never makes a column or a row. */
  tsv(cells: readonly unknown[]): void {
    this.print(cells.map(format).join('\t'));
  }

  /**
   * Rows as a table fitted to the terminal (long cells cut with `…`, least useful columns
   * first, `keep` columns whole); piped, tab-separated and whole. Every cell is escaped
   * (escapeControl): table data comes from outside. `empty` says what to do when there are
   * no rows (on stderr, so stdout stays empty for scripts).
   */
  table<T>(rows: readonly T[], columns: Column<T>[], empty?: string): void {
    const cells = rows.map((r) => columns.map((col) => format(col.value(r))));
    if (rows.length === 0) {
      if (this.isTTY && !empty) this.print(this.c.dim('(none)'));
      if (empty) this.note(empty);
      return;
    }
    if (!this.isTTY) {
      for (const line of cells) this.print(line.join('\t'));
      return;
    }
    const natural = columns.map((col, i) => Math.max(col.header.length, ...cells.map((line) => visibleLength(line[i]!))));
    const minimum = columns.map((col, i) => (col.keep ? natural[i]! : Math.min(natural[i]!, Math.max(MIN_WIDTH, col.header.length))));
    const priority = columns.map((col) => col.priority ?? 0);
    const shown = shownColumns(minimum, priority, this.io.stdout.columns, natural);
    const keepIf = <V>(list: V[]) => list.filter((_v, i) => shown[i]);
    const widths = fitWidths(keepIf(natural), keepIf(columns.map((col) => col.keep === true)), keepIf(minimum), this.io.stdout.columns, keepIf(priority));
    const Table = requireCjs('cli-table3') as typeof import('cli-table3');
    const table = new Table({
      head: keepIf(columns).map((col) => this.c.bold(col.header)),
      colWidths: widths,
      truncate: '…',
      style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
      chars: { top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '', left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: ' '.repeat(GAP) },
    });
    const styled = rows.map((r, row) => columns.map((col, i) => {
      const style = col.style?.(r);
      return style ? this.c[style](cells[row]![i]!) : cells[row]![i]!;
    }));
    for (const line of styled) table.push(keepIf(line));
    this.print(table.toString().split('\n').map((l) => l.trimEnd()).join('\n'));
    const hidden = columns.filter((_c, i) => !shown[i]).map((col) => col.header);
    if (hidden.length) this.note(this.c.dim(leftOutNote(hidden, this.io.stdout.columns)));
  }

  /** A time in a table: relative on a terminal (`3m ago`), the API's ISO-8601 UTC when piped. */
  when(iso: string | null | undefined): string {
    if (!iso) return '';
    return this.isTTY ? relativeTime(iso) : iso;
  }

  /** A time in a detail view: local time on a terminal, ISO-8601 UTC when piped. */
  at(iso: string | null | undefined): string {
    if (!iso) return '';
    return this.isTTY ? localTime(iso) : iso;
  }

  /** Label/value pairs for one object, each value escaped; a third element colours it on a terminal. */
  fields(pairs: Array<[string, string | number | boolean | null | undefined, Style?]>): void {
    const width = Math.max(...pairs.map(([k]) => k.length));
    for (const [k, v, style] of pairs) {
      const value = style ? this.c[style](format(v)) : format(v);
      this.print(this.isTTY ? `${this.c.bold(k.padEnd(width))}  ${value}` : `${k}\t${value}`);
    }
  }
}

function visibleLength(text: string): number {
  return [...stripVTControlCharacters(text)].length;
}

/**
 * JSON as JSON.stringify writes it, with what it leaves raw but a terminal acts on (DEL, C1
 * such as U+009B CSI, U+2028/U+2029, bidi controls such as U+202E) as `\u` escapes: the same
 * value to a parser. They can only be inside strings, where `\u` escapes are valid.
 */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(JSON_RAW_CONTROL, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
const JSON_RAW_CONTROL = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** A value as table, TSV or field text: escaped, since it may come from outside. */
function format(v: unknown): string {
  if (v === null || v === undefined) return '';
  return escapeControl(String(v));
}

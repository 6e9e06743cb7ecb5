import { localTime, relativeTime } from './format.js';
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

type Style = keyof Colors;
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
   * How much the column matters when the terminal is narrow (default 0): lower ones are cut
   * first, and a column with a priority below 0 is left out when even cut columns do not fit.
   */
  priority?: number;
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
 * Which columns a terminal `columns` wide shows: while even the narrowest widths do not fit,
 * the least useful column with a priority below 0 is left out (rather than the table wrapping).
 */
export function shownColumns(minimum: number[], priority: number[], columns: number | undefined): boolean[] {
  const shown = minimum.map(() => true);
  if (!columns) return shown;
  const need = () => minimum.reduce((sum, w, i) => sum + (shown[i] ? w + GAP : 0), -GAP);
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
    this.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** One value as one line (JSON lines: `events`, `webhook listen`). */
  printJsonLine(value: unknown): void {
    if (this.jq !== undefined) return this.#jq(value, true);
    this.io.stdout.write(`${JSON.stringify(value)}\n`);
  }

  #jq(value: unknown, compact: boolean): void {
    const filter = this.jq!;
    const done = (pendingJq.get(this.io) ?? Promise.resolve()).then(async () => {
      const text = await runJq(value, filter, compact);
      if (text !== '') this.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    });
    // Handled here so Node does not call it unhandled; `flushOutput` still rejects with it.
    done.catch(() => {});
    pendingJq.set(this.io, done);
  }

  /** Status lines for people go to stderr, so stdout stays parseable. */
  note(text: string): void {
    this.io.stderr.write(`${text}\n`);
  }

  /**
   * Rows as a table fitted to the terminal (long cells cut with `…`, widest column first, `keep`
   * columns whole); piped, tab-separated and whole. `empty` says what to do when there are no
   * rows (on stderr, so stdout stays empty for scripts).
   */
  table<T>(rows: readonly T[], columns: Column<T>[], empty?: string): void {
    const cells = rows.map((r) => columns.map((col) => format(col.value(r))));
    if (rows.length === 0) {
      if (this.isTTY && !empty) this.print(this.c.dim('(none)'));
      if (empty) this.note(empty);
      return;
    }
    if (!this.isTTY) {
      for (const line of cells) this.print(line.map((v) => v.replace(/[\t\n]/g, ' ')).join('\t'));
      return;
    }
    const natural = columns.map((col, i) => Math.max(col.header.length, ...cells.map((line) => visibleLength(line[i]!))));
    const minimum = columns.map((col, i) => (col.keep ? natural[i]! : Math.min(natural[i]!, Math.max(MIN_WIDTH, col.header.length))));
    const priority = columns.map((col) => col.priority ?? 0);
    const shown = shownColumns(minimum, priority, this.io.stdout.columns);
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
    for (const line of cells) table.push(keepIf(line));
    this.print(table.toString().split('\n').map((l) => l.trimEnd()).join('\n'));
    const hidden = columns.filter((_c, i) => !shown[i]).map((col) => col.header);
    if (hidden.length) this.note(this.c.dim(`(${hidden.join(', ')} left out at this width; piped output and --json have every column)`));
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

  /** Label/value pairs for one object. */
  fields(pairs: Array<[string, string | number | boolean | null | undefined]>): void {
    const width = Math.max(...pairs.map(([k]) => k.length));
    for (const [k, v] of pairs) {
      this.print(this.isTTY ? `${this.c.bold(k.padEnd(width))}  ${format(v)}` : `${k}\t${format(v)}`);
    }
  }
}

function visibleLength(text: string): number {
  return [...stripVTControlCharacters(text)].length;
}

function format(v: string | number | boolean | null | undefined): string {
  if (v === null || v === undefined) return '';
  return String(v);
}

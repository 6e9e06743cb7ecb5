import { Chalk, type ChalkInstance } from 'chalk';
import Table from 'cli-table3';
import { CliError, EXIT, pendingOutput as pendingJq, type CliIO } from './io.js';

export interface OutputOptions {
  json?: boolean;
  color?: boolean;
  /** A jq filter for the JSON output (implies --json), as `gh --jq`. */
  jq?: string;
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
}

/**
 * Where commands print. On a TTY: tables and colour. Piped: tab-separated, no colour, no
 * truncation. `--json`: the API objects, nothing else on stdout.
 */
export class Output {
  readonly io: CliIO;
  readonly json: boolean;
  readonly isTTY: boolean;
  readonly c: ChalkInstance;
  readonly jq: string | undefined;

  constructor(io: CliIO, opts: OutputOptions = {}) {
    this.io = io;
    this.jq = opts.jq;
    this.json = (opts.json ?? false) || opts.jq !== undefined;
    this.isTTY = io.stdout.isTTY === true;
    const color = opts.color !== false && this.isTTY && !('NO_COLOR' in io.env && io.env.NO_COLOR !== '') && io.env.TERM !== 'dumb';
    this.c = new Chalk({ level: color ? 1 : 0 });
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

  table<T>(rows: readonly T[], columns: Column<T>[]): void {
    const cells = rows.map((r) => columns.map((col) => format(col.value(r))));
    if (!this.isTTY) {
      for (const line of cells) this.print(line.map((v) => v.replace(/[\t\n]/g, ' ')).join('\t'));
      return;
    }
    const table = new Table({
      head: columns.map((col) => this.c.bold(col.header)),
      style: { head: [], border: [] },
      chars: { top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '', left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '  ' },
    });
    for (const line of cells) table.push(line);
    this.print(rows.length ? table.toString().split('\n').map((l) => l.trimEnd()).join('\n') : this.c.dim('(none)'));
  }

  /** Label/value pairs for one object. */
  fields(pairs: Array<[string, string | number | boolean | null | undefined]>): void {
    const width = Math.max(...pairs.map(([k]) => k.length));
    for (const [k, v] of pairs) {
      this.print(this.isTTY ? `${this.c.bold(k.padEnd(width))}  ${format(v)}` : `${k}\t${format(v)}`);
    }
  }
}

function format(v: string | number | boolean | null | undefined): string {
  if (v === null || v === undefined) return '';
  return String(v);
}

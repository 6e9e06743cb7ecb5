import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { fitWidths, Output, shownColumns } from './output.js';
import { flushOutput } from './io.js';

const visible = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

function tty(columns: number | undefined, isTTY = true) {
  let text = '';
  const stdout = Object.assign(new Writable({ write(c, _e, cb) { text += c.toString(); cb(); } }), { isTTY, columns });
  const out = new Output({ stdout, stderr: stdout, stdin: process.stdin, env: {} } as never, {});
  return { out, text: () => text };
}

describe('tables fit the terminal', () => {
  const rows = [
    { id: 12, name: 'payments-backend', status: 'active', url: 'http://rpc-eth-mainnet.localhost:8545/0cd2a3ae-bfbb-4e8c-9865-b0cec8d777bd', note: 'a'.repeat(40) },
    { id: 3, name: 'x', status: 'paused', url: 'http://rpc-polygon-amoy.localhost:8545/213d8570-bafd-4b50-837a-56a4c87d7093', note: '' },
  ];
  const columns = [
    { header: 'ID', value: (r: typeof rows[number]) => r.id, keep: true },
    { header: 'NAME', value: (r: typeof rows[number]) => r.name, keep: true },
    { header: 'STATUS', value: (r: typeof rows[number]) => r.status },
    { header: 'NOTE', value: (r: typeof rows[number]) => r.note },
    { header: 'URL', value: (r: typeof rows[number]) => r.url },
  ];

  it('at 80 columns: widest columns cut with …, ids and names whole, two spaces between columns', () => {
    const { out, text } = tty(80);
    out.table(rows, columns);
    const lines = visible(text()).trimEnd().split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(lines[0]).toMatch(/^ID  NAME {14}STATUS  NOTE/);
    expect(lines[1]).toMatch(/^12  payments-backend  active  a+…  http:\/\/rpc-eth-\S*…$/);
    expect(lines[2]).toMatch(/^3 {3}x {17}paused/);
  });

  it('wide enough: nothing is cut', () => {
    const { out, text } = tty(250);
    out.table(rows, columns);
    expect(visible(text())).toContain(rows[0]!.url);
    expect(visible(text())).not.toContain('…');
  });

  it('piped: tab-separated and whole, whatever the width', () => {
    const { out, text } = tty(40, false);
    out.table(rows, columns);
    expect(text().split('\n')[0]).toBe(`12\tpayments-backend\tactive\t${'a'.repeat(40)}\t${rows[0]!.url}`);
  });

  it('fitWidths: the widest gives way first, never below its minimum, kept columns never', () => {
    expect(fitWidths([2, 10, 30, 30], [true, true, false, false], [2, 4, 6, 6], 50)).toEqual([2, 10, 16, 16]);
    expect(fitWidths([2, 10, 30], [true, true, false], [2, 4, 6], 10)).toEqual([2, 10, 6]);
    expect(fitWidths([2, 10], [false, false], [2, 4], undefined)).toEqual([2, 10]);
    // With priorities the least useful column gives way first, however narrow it already is.
    expect(fitWidths([10, 30, 20], [false, false, false], [6, 6, 6], 50, [0, 1, 0])).toEqual([8, 30, 8]);
    expect(fitWidths([10, 30, 20], [false, false, false], [6, 6, 6], 40, [0, 1, 0])).toEqual([6, 24, 6]);
  });

  it('shownColumns: below-zero priorities are left out, least useful first, only when even the narrowest widths do not fit', () => {
    expect(shownColumns([8, 8, 8], [0, -1, -2], 30)).toEqual([true, true, true]);
    expect(shownColumns([8, 8, 8], [0, -1, -2], 20)).toEqual([true, true, false]);
    expect(shownColumns([8, 8, 8], [0, -1, -2], 9)).toEqual([true, false, false]);
    expect(shownColumns([8, 8, 8], [0, -1, -2], undefined)).toEqual([true, true, true]);
  });

  it('an empty list says what to do next, on stderr', () => {
    const { out, text } = tty(80);
    out.table([], columns, 'No endpoints yet. Create one: rpcctl endpoints create ...');
    expect(text()).toBe('No endpoints yet. Create one: rpcctl endpoints create ...\n');
  });
});

/** An Output over separate stdout and stderr, with the environment and options given. */
function io(o: { isTTY?: boolean; columns?: number; env?: Record<string, string>; json?: boolean; jq?: string; color?: boolean } = {}) {
  const sink = () => {
    let text = '';
    const w = Object.assign(new Writable({ write(c, _e, cb) { text += c.toString(); cb(); } }), { isTTY: o.isTTY ?? true, columns: o.columns ?? 100 });
    return { w, text: () => text };
  };
  const stdout = sink();
  const stderr = sink();
  const out = new Output({ stdout: stdout.w, stderr: stderr.w, stdin: process.stdin, env: o.env ?? {} } as never, { json: o.json, jq: o.jq, color: o.color });
  return { out, stdout: stdout.text, stderr: stderr.text };
}

const ESC = '\x1b[';

describe('colour, as gh decides it', () => {
  const headed = (o: Parameters<typeof io>[0]) => {
    const x = io(o);
    x.out.table([{ a: 1 }], [{ header: 'A', value: (r: { a: number }) => r.a }]);
    return x.stdout();
  };

  it('on a terminal: bold headers', () => {
    expect(headed({})).toContain(ESC);
  });

  it('NO_COLOR (any non-empty value), TERM=dumb, --no-color or a pipe: no escape codes at all', () => {
    for (const o of [{ env: { NO_COLOR: '1' } }, { env: { TERM: 'dumb' } }, { color: false }, { isTTY: false }] as Array<Parameters<typeof io>[0]>) {
      expect(headed(o), JSON.stringify(o)).not.toContain(ESC);
    }
    // An empty NO_COLOR is unset, as the convention says.
    expect(headed({ env: { NO_COLOR: '' } })).toContain(ESC);
  });
});

describe('--json and --jq', () => {
  it('--json prints the value indented, on stdout only', () => {
    const x = io({ json: true });
    expect(x.out.json).toBe(true);
    x.out.printJson({ a: [1, 'b'] });
    expect(x.stdout()).toBe('{\n  "a": [\n    1,\n    "b"\n  ]\n}\n');
    expect(x.stderr()).toBe('');
  });

  it('JSON lines: one value a line', () => {
    const x = io({ isTTY: false });
    x.out.printJsonLine({ a: 1 });
    x.out.printJsonLine({ b: 2 });
    expect(x.stdout()).toBe('{"a":1}\n{"b":2}\n');
  });

  it('--jq implies JSON and filters each value, in order', async () => {
    const x = io({ jq: '.items[].id' });
    expect(x.out.json).toBe(true);
    x.out.printJson({ items: [{ id: 1 }, { id: 2 }] });
    x.out.printJson({ items: [{ id: 3 }] });
    await expect.poll(x.stdout).toBe('1\n2\n3\n');
  });
});

describe('times and fields', () => {
  const iso = new Date(Date.now() - 180_000).toISOString();
  it('a table\'s time is relative on a terminal, the API\'s ISO-8601 when piped', () => {
    expect(io().out.when(iso)).toBe('3m ago');
    expect(io({ isTTY: false }).out.when(iso)).toBe(iso);
    expect(io().out.when(null)).toBe('');
  });

  it('a detail view\'s time is local on a terminal, ISO-8601 when piped', () => {
    expect(io().out.at(iso)).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(io({ isTTY: false }).out.at(iso)).toBe(iso);
  });

  it('label/value pairs: aligned on a terminal, tab-separated when piped, empty for null', () => {
    const pairs: Array<[string, string | number | null]> = [['id', 7], ['name', 'main'], ['note', null]];
    const term = io({ env: { NO_COLOR: '1' } });
    term.out.fields(pairs);
    expect(term.stdout()).toBe('id    7\nname  main\nnote  \n');
    const piped = io({ isTTY: false });
    piped.out.fields(pairs);
    expect(piped.stdout()).toBe('id\t7\nname\tmain\nnote\t\n');
  });

  it('notes go to stderr, so stdout stays parseable', () => {
    const x = io();
    x.out.note('Created endpoint 7');
    expect([x.stdout(), x.stderr()]).toEqual(['', 'Created endpoint 7\n']);
  });
});

describe('piped tables stay one row a line', () => {
  it('a tab or a newline inside a value cannot split a row or a column', () => {
    const x = io({ isTTY: false });
    x.out.table([{ a: 'one\ttwo', b: 'three\nfour' }], [{ header: 'A', value: (r: { a: string; b: string }) => r.a }, { header: 'B', value: (r: { a: string; b: string }) => r.b }]);
    const lines = x.stdout().split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.split('\t')).toHaveLength(2);
  });

  it('no header row when piped (scripts read rows), the header on a terminal', () => {
    const cols = [{ header: 'NAME', value: (r: { n: string }) => r.n }];
    const piped = io({ isTTY: false });
    piped.out.table([{ n: 'x' }], cols);
    expect(piped.stdout()).toBe('x\n');
    const term = io({ env: { NO_COLOR: '1' } });
    term.out.table([{ n: 'x' }], cols);
    expect(term.stdout()).toBe('NAME\nx\n');
  });
});

describe('outside data in JSON, --jq and raw output', () => {
  const hostile = { name: 'a\x1b[2Jb\u202ec\u009bd\u2028e\x7ff' };

  it('--json: C1, DEL, line separators and bidi controls as \\u escapes (the same value to a parser)', () => {
    for (const print of ['printJson', 'printJsonLine'] as const) {
      const x = io({ isTTY: false });
      x.out[print](hostile);
      expect(x.stdout()).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u202e]/);
      expect(x.stdout()).toContain('\\u202e');
      expect(JSON.parse(x.stdout())).toEqual(hostile);
    }
  });

  it('--jq strings print bare: escaped on a terminal, exactly when piped', async () => {
    const term = io({ jq: '.name' });
    term.out.printJson(hostile);
    const piped = io({ jq: '.name', isTTY: false });
    piped.out.printJson(hostile);
    await flushOutput(term.out.io);
    await flushOutput(piped.out.io);
    expect(term.stdout()).toBe('a\\x1b[2Jb\\u202ec\\x9bd\\u2028e\\x7ff\n');
    expect(piped.stdout()).toBe(`${hostile.name}\n`);
  });

  it('raw text (rpcctl api, a body that is not JSON): escaped on a terminal line by line, exactly when piped', () => {
    const term = io();
    term.out.printRaw('<h1>\x1b]0;owned\x07</h1>\nline two\n');
    expect(term.stdout()).toBe('<h1>\\x1b]0;owned\\x07</h1>\nline two\n');
    const piped = io({ isTTY: false });
    piped.out.printRaw('x\x1b[31my');
    expect(piped.stdout()).toBe('x\x1b[31my\n');
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The payments core stays split by job (issue 32): no file over 300 lines in src/payments/ (and
 * src/payouts/, issue 34), no
 * function or method over 60. A function is measured from its declaration to the closing brace
 * at the declaration's own indent.
 */
const dirs = [new URL('../src/payments', import.meta.url).pathname, new URL('../src/payouts', import.meta.url).pathname];
const MAX_FILE = 300;
const MAX_FUNCTION = 60;

function tsFiles(d: string): string[] {
  return readdirSync(d, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(d, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [join(d, e.name)] : [],
  );
}

const DECL = /^( *)(?:export\s+)?(?:async\s+)?(?:function\s+(\w+)|(?:static\s+|private\s+|get\s+)?(#?\w+)\s*\([^)]*\)?[^;=]*\{\s*$)/;

/** Each function's name and length in lines. */
export function functionLengths(source: string): Array<{ name: string; lines: number; at: number }> {
  const lines = source.split('\n');
  const out: Array<{ name: string; lines: number; at: number }> = [];
  lines.forEach((line, i) => {
    const m = DECL.exec(line);
    if (!m || /^\s*(if|for|while|switch|catch|return|else)\b/.test(line)) return;
    const indent = m[1]!;
    const end = lines.findIndex((l, j) => j > i && l.startsWith(`${indent}}`) && !l.startsWith(`${indent}} `) || (j > i && l === `${indent}}`));
    if (end > i) out.push({ name: m[2] ?? m[3]!, lines: end - i + 1, at: i + 1 });
  });
  return out;
}

describe('src/payments/ and src/payouts/ shape', () => {
  it('measures functions', () => {
    const src = ['export async function a(x: number): Promise<void> {', '  if (x) {', '    x++;', '  }', '}', '', 'class C {', '  async #m(y: string): Promise<void> {', '    y;', '  }', '}'].join('\n');
    expect(functionLengths(src).map((f) => [f.name, f.lines])).toEqual([['a', 5], ['#m', 3]]);
  });

  it(`no file over ${MAX_FILE} lines, no function over ${MAX_FUNCTION}`, () => {
    const files = dirs.flatMap((d) => tsFiles(d).map((f) => ({ f, d })));
    expect(files.length).toBeGreaterThan(30);
    const big = files.flatMap(({ f, d: dir }) => {
      const text = readFileSync(f, 'utf8');
      const n = text.split('\n').length - 1;
      const name = relative(dir, f);
      return [
        ...(n > MAX_FILE ? [`${name}: ${n} lines`] : []),
        ...functionLengths(text).filter((fn) => fn.lines > MAX_FUNCTION).map((fn) => `${name}:${fn.at} ${fn.name}: ${fn.lines} lines`),
      ];
    });
    expect(big).toEqual([]);
  });
});

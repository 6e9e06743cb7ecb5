import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { skipSummary } from './helpers/skips-reporter.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.name === 'node_modules' ? [] : e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** `describe.skip`, `it.skipIf(...)`, `test.runIf(...)`, `ctx.skip()`: every way vitest skips quietly. */
const BARE_SKIP = /\b(?:describe|it|test|suite)\s*\.\s*(?:skip|skipIf|runIf|todo)\b|\b(?:ctx|context|t)\s*\.\s*skip\s*\(/;

describe('skipped parts are counted, never silent', () => {
  it('no test skips a part except through helpers/skips.ts (describeUnless, itUnless), which records the reason', () => {
    const own = resolve(root, 'test', 'helpers', 'skips.ts');
    const found: string[] = [];
    for (const file of [...tsFiles(join(root, 'test')), ...tsFiles(join(root, 'src')).filter((f) => f.endsWith('.test.ts'))]) {
      if (file === own || file === fileURLToPath(import.meta.url)) continue;
      readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
        if (BARE_SKIP.test(line) && !/^\s*(\/\/|\*)/.test(line)) found.push(`${relative(root, file)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('the pattern catches each quiet form', () => {
    for (const line of ['describe.skip(\'x\', () => {})', 'it.skipIf(!pg)(\'x\', f)', 'test.runIf(ok)(\'x\', f)', 'ctx.skip()', 'describe.todo(\'x\')']) {
      expect(BARE_SKIP.test(line), line).toBe(true);
    }
    expect(BARE_SKIP.test('describeUnless(why, \'x\', () => {})')).toBe(false);
  });

  it('the closing line counts skipped parts by reason, most first, a part once', () => {
    expect(skipSummary([])).toMatch(/^Skipped parts: none/);
    expect(skipSummary([
      { file: 'a.test.ts', part: 'one', why: 'set RPCCTL_TEST_DATABASE_URL' },
      { file: 'b.test.ts', part: 'two', why: 'set RPCCTL_TEST_DATABASE_URL' },
      { file: 'b.test.ts', part: 'two', why: 'set RPCCTL_TEST_DATABASE_URL' },
      { file: 'c.test.ts', part: 'three', why: 'litecoind is not installed' },
    ])).toBe('Skipped parts: 3 (2 × set RPCCTL_TEST_DATABASE_URL; 1 × litecoind is not installed)');
  });
});

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The map from each source folder to its tests, in test/README.md between the markers below:
 * the unit tests beside its files (src/<folder>/*.test.ts) and the suites in test/ that import
 * its modules directly. Generated here and compared, so it stays true;
 * `RPCCTL_UPDATE_TEST_MAP=1 npx vitest run test/tests-map.test.ts` rewrites it.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const README = join(root, 'test', 'README.md');
const START = '<!-- test-map:start -->';
const END = '<!-- test-map:end -->';

function files(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name), keep) : keep(e.name) ? [join(dir, e.name)] : [],
  );
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.[^'"]+)['"]/gm;

/** The src/ folders (relative, `gateway/http`) a file imports from directly. */
function importedFolders(file: string): Set<string> {
  const out = new Set<string>();
  for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
    const target = relative(src, resolve(dirname(file), m[1]!));
    if (!target.startsWith('..')) out.add(dirname(target));
  }
  return out;
}

function testMap(): string {
  const sourceFolders = [...new Set(files(src, (n) => n.endsWith('.ts') && !n.endsWith('.test.ts')).map((f) => dirname(relative(src, f))))].sort();
  const beside = files(src, (n) => n.endsWith('.test.ts')).map((f) => relative(src, f));
  const suites = readdirSync(join(root, 'test')).filter((n) => n.endsWith('.test.ts')).sort();
  const importers = new Map<string, string[]>();
  for (const s of suites) for (const folder of importedFolders(join(root, 'test', s))) importers.set(folder, [...importers.get(folder) ?? [], s.replace(/\.test\.ts$/, '')]);
  const rows = sourceFolders.map((folder) => {
    const own = beside.filter((f) => dirname(f) === folder).map((f) => f.slice(folder.length + 1).replace(/\.test\.ts$/, ''));
    const unit = own.length ? `${own.join(', ')} (\`npx vitest run src/${folder}/\`)` : '—';
    return `| \`${folder}/\` | ${unit} | ${(importers.get(folder) ?? []).join(', ') || '—'} |`;
  });
  return [
    START,
    '| src folder | unit tests beside it | suites in test/ importing it |',
    '|---|---|---|',
    ...rows,
    END,
  ].join('\n');
}

/** What a beside test may not use: they are units, so no service, process, browser or chain node. */
const NOT_A_UNIT = /helpers\/(service|serve-process|anvil|litecoind|browser|private-servers|shared-stores|cli|client-suite)\.js|node:child_process|from 'execa'|playwright/;

describe('the map from source folders to their tests', () => {
  it('test/README.md has the current map (RPCCTL_UPDATE_TEST_MAP=1 rewrites it)', () => {
    const text = readFileSync(README, 'utf8');
    const start = text.indexOf(START);
    const end = text.indexOf(END);
    expect(start, `test/README.md has no ${START} … ${END} section`).toBeGreaterThanOrEqual(0);
    const current = text.slice(start, end + END.length);
    const wanted = testMap();
    if (current !== wanted && process.env.RPCCTL_UPDATE_TEST_MAP) {
      writeFileSync(README, text.slice(0, start) + wanted + text.slice(end + END.length));
      return;
    }
    expect(current, 'the test map is stale: RPCCTL_UPDATE_TEST_MAP=1 npx vitest run test/tests-map.test.ts').toBe(wanted);
  });

  it('tests beside the code are units: no service, process, browser, store server or chain node', () => {
    const offenders = files(src, (n) => n.endsWith('.test.ts'))
      .filter((f) => NOT_A_UNIT.test(readFileSync(f, 'utf8')))
      .map((f) => relative(root, f));
    expect(offenders).toEqual([]);
  });

  it('nothing in the product imports a test', () => {
    const importsTest = files(src, (n) => n.endsWith('.ts') && !n.endsWith('.test.ts'))
      .filter((f) => /from\s*['"][^'"]*\.test\.js['"]|['"][^'"]*\/test\/[^'"]*['"]/.test(readFileSync(f, 'utf8').replace(/^\s*(\/\/|\*).*$/gm, '')))
      .map((f) => relative(root, f));
    expect(importsTest).toEqual([]);
  });
});

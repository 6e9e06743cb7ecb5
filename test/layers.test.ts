import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The layers of src/, top to bottom (docs/architecture.md says the same). A folder may import
 * its own rank or lower, never higher; folders on one line share a rank. The static twin of the
 * start-up import trace (test/helpers/trace-imports.mjs).
 */
const LAYERS: string[][] = [
  ['cli'],
  ['serve'],
  ['retention'],
  ['payouts'],
  ['payments'],
  ['watch'],
  ['webhooks'],
  ['cabinet'],
  ['api'],
  ['gateway'],
  ['limits'],
  ['runtime'],
  ['metrics', 'telemetry'],
  ['store'],
  ['config'],
  ['pricing'],
  ['chains'],
  ['client'],
  ['wire'],
  ['util', 'log', 'types'],
];

const src = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');

function rankOf(folder: string): number {
  const i = LAYERS.findIndex((names) => names.includes(folder));
  if (i < 0) throw new Error(`src/${folder}/ has no layer: add it to LAYERS and docs/architecture.md`);
  return i;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
  );
}

/** Static (`from '…'`, also `import type` and re-exports), side-effect and dynamic imports. */
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.[^'"]+)['"]/gm;

interface Edge { from: string; to: string }

/** Every relative import in src/ as file → file (paths relative to src/, `.js` read as `.ts`). */
function fileEdges(): Edge[] {
  const edges: Edge[] = [];
  for (const file of tsFiles(src)) {
    // Comment lines are not imports (doc examples show `import('./x.js')`).
    const text = readFileSync(file, 'utf8').replace(/^\s*(\/\/|\*|\/\*).*$/gm, '');
    for (const m of text.matchAll(IMPORT)) {
      const target = resolve(dirname(file), m[1]!).replace(/\.js$/, '.ts');
      edges.push({ from: relative(src, file), to: relative(src, target) });
    }
  }
  return edges;
}

const folderOf = (path: string): string => (path.includes('/') ? path.slice(0, path.indexOf('/')) : '.');

/** Strongly connected components with more than one node (Tarjan), each sorted. */
function cycles(edges: Edge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    if (from === to) continue;
    if (!next.has(from)) next.set(from, new Set());
    if (!next.has(to)) next.set(to, new Set());
    next.get(from)!.add(to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  let n = 0;
  const visit = (v: string): void => {
    index.set(v, n);
    low.set(v, n++);
    stack.push(v);
    on.add(v);
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe('layers of src/', () => {
  const edges = fileEdges();

  it('reads the imports', () => {
    expect(edges.length).toBeGreaterThan(500);
  });

  it('no folder imports a folder above it', () => {
    const upward = edges
      .filter(({ from, to }) => folderOf(from) !== '.' && folderOf(to) !== '.')
      .filter(({ from, to }) => rankOf(folderOf(to)) < rankOf(folderOf(from)))
      .map(({ from, to }) => `${from} → ${to}`);
    expect(upward).toEqual([]);
  });

  it('no import cycle between folders', () => {
    const folders = edges
      .map(({ from, to }) => ({ from: folderOf(from), to: folderOf(to) }))
      .filter(({ from, to }) => from !== to);
    expect(cycles(folders)).toEqual([]);
  });

  // Within a folder too: src/cli/ once was one 31-file circle through program.ts, and the
  // address codecs imported the error class from the module that imported them.
  it('no import cycle between files', () => {
    expect(cycles(edges)).toEqual([]);
  });
});

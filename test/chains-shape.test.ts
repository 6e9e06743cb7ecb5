import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { chainFamilies } from '../src/chains/index.js';
import { allTraits, traitsOf } from '../src/chains/traits.js';

/**
 * What differs between chain families lives in src/chains/<family>/ behind `ChainFamily`
 * (docs/architecture.md, "Adding a chain family"). Code elsewhere asks `chainOf(family)` for a
 * trait; it never dispatches on a family's name, or a fifth family would mean hunting down
 * every such branch. Names in zod enums, type unions and messages are fine: they select nothing.
 */
const src = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');

const NAME = `'(?:evm|stellar|utxo|tron)'`;
const CMP = '[!=]==?';
/** Expressions that choose behaviour by a family's name. */
const BRANCHES: Array<[what: string, pattern: RegExp]> = [
  ['comparison with a family name', new RegExp(`${CMP}\\s*${NAME}|${NAME}\\s*${CMP}`)],
  ['case on a family name', new RegExp(`\\bcase\\s+${NAME}\\s*:`)],
  // `form !== n.family`, `env.network.family === x`: a comparison on the family field itself.
  ['comparison of a family field', new RegExp(`\\.family\\s*${CMP}|${CMP}\\s*[\\w.?!]*\\.family\\b`)],
  ['switch on a family field', /\bswitch\s*\([^)]*\.family\s*\)/],
  // `({ evm: 'ethereum', stellar: 'stellar' })[s.family]`: a lookup table keyed by family names.
  ['table keyed by family names', /\b(?:evm|stellar|utxo|tron)\s*:[^:\n]*\b(?:evm|stellar|utxo|tron)\s*:[^\n]*\]?\s*\[[\w.?!]*family\]|\)\[[\w.?!]*\.family\]/],
  // `NATIVE[env.network.family]`: a constant table (written elsewhere) read by family.
  ['constant table read by family', /\b[A-Z][A-Z0-9_]*\[[\w.?!]*\bfamily\]/],
];

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** `file:line: what: source` for every family branch in the given files. */
function familyBranches(files: Array<{ path: string; text: string }>): string[] {
  const found: string[] = [];
  for (const { path, text } of files) {
    text.split('\n').forEach((line, i) => {
      // Comment lines say why, they choose nothing.
      if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
      const code = line.replace(/\/\/.*$/, '');
      for (const [what, pattern] of BRANCHES) {
        if (pattern.test(code)) found.push(`${path}:${i + 1}: ${what}: ${line.trim()}`);
      }
    });
  }
  return found;
}

const outsideChains = () => tsFiles(src)
  .map((file) => ({ path: relative(src, file), text: readFileSync(file, 'utf8') }))
  .filter((f) => !f.path.startsWith(`chains/`));

describe('chain families', () => {
  it('no code outside src/chains/ branches on a family name', () => {
    expect(familyBranches(outsideChains())).toEqual([]);
  });

  it('the check sees the branches it is there for', () => {
    const samples = [
      "if (family === 'utxo') parseUtxoXpub(xpub);",
      "if (ep.env.network.family === 'stellar' || ep.env.network.family === 'tron') return x;",
      "    case 'tron': return new TronChain(env.upstreams);",
      'if (form !== n.family) fail(x);',
      'switch (env.network.family) {',
      "const chain = ({ evm: 'ethereum', stellar: 'stellar', utxo: 'bitcoin', tron: 'tron' } as const)[s.family];",
      "rpcErrorsAre500: ep.env.network.family === 'utxo' },",
      'const native = NATIVE[env.network.family]!;',
    ];
    for (const line of samples) expect(familyBranches([{ path: 'x.ts', text: line }]), line).not.toEqual([]);
    const fine = [
      "family: z.enum(['evm', 'stellar', 'utxo', 'tron']).default('evm'),",
      "export type NetworkFamily = 'evm' | 'stellar' | 'utxo' | 'tron';",
      'fail(`networks[${i}]: only for the utxo family`);',
      'const envs = catalog.networks.filter((n) => chainOf(n.family) === chainOf(f));',
      "if (chainOf(ep.env.network.family).gateway.transport === 'rest') return x;",
      "// a family === 'evm' check would go here",
    ];
    for (const line of fine) expect(familyBranches([{ path: 'x.ts', text: line }]), line).toEqual([]);
  });

  it('every family folder is registered, and every registered family has its folder', () => {
    const folders = readdirSync(join(src, 'chains'), { withFileTypes: true })
      .filter((e) => e.isDirectory() && readdirSync(join(src, 'chains', e.name)).includes('index.ts'))
      .map((e) => e.name).sort();
    expect(chainFamilies().map((f) => f.name).sort()).toEqual(folders);
    expect(allTraits().map((f) => f.name).sort()).toEqual(folders);
    // A family's adapter is its traits and more: both registries answer alike.
    for (const family of chainFamilies()) expect(family.gateway).toBe(traitsOf(family.name).gateway);
  });

  // The gateway's workers, config and the catalog read traits: loading them must not pull in a
  // scanner, an HTTP client or BIP32 code (about 70 ms and 6 MB per gateway worker).
  it('the traits registry loads no scanner, HTTP client or key derivation', () => {
    const reached = new Set<string>();
    const packages = new Set<string>();
    const queue = [join(src, 'chains', 'traits.ts')];
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (reached.has(file)) continue;
      reached.add(file);
      for (const m of readFileSync(file, 'utf8').matchAll(/^import\s+(?!type\b)(?:[^;']*?from\s*)?'([^']+)'/gm)) {
        if (m[1]!.startsWith('.')) queue.push(resolve(dirname(file), m[1]!).replace(/\.js$/, '.ts'));
        else packages.add(m[1]!);
      }
    }
    const heavy = [...reached].map((f) => relative(src, f)).filter((f) => /\/(?:index|chain|derive|match|rpc|xpub)\.ts$/.test(f));
    expect(heavy).toEqual([]);
    expect([...packages].filter((p) => /^(?:undici|@scure\/bip32|@scure\/btc-signer|@noble\/curves)/.test(p))).toEqual([]);
  });
});

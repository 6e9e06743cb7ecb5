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

const NAME = `'(?:evm|stellar|utxo|tron|solana)'`;
const CMP = '[!=]==?';
/** Expressions that choose behaviour by a family's name. */
const BRANCHES: Array<[what: string, pattern: RegExp]> = [
  ['comparison with a family name', new RegExp(`${CMP}\\s*${NAME}|${NAME}\\s*${CMP}`)],
  ['case on a family name', new RegExp(`\\bcase\\s+${NAME}\\s*:`)],
  // `form !== n.family`, `env.network.family === x`: a comparison on the family field itself.
  ['comparison of a family field', new RegExp(`\\.family\\s*${CMP}|${CMP}\\s*[\\w.?!]*\\.family\\b`)],
  ['switch on a family field', /\bswitch\s*\([^)]*\.family\s*\)/],
  // `({ evm: 'ethereum', stellar: 'stellar' })[s.family]`: a lookup table keyed by family names.
  ['table keyed by family names', /\b(?:evm|stellar|utxo|tron|solana)\s*:[^:\n]*\b(?:evm|stellar|utxo|tron|solana)\s*:[^\n]*\]?\s*\[[\w.?!]*family\]|\)\[[\w.?!]*\.family\]/],
  // `NATIVE[env.network.family]`: a constant table (written elsewhere) read by family.
  ['constant table read by family', /\b[A-Z][A-Z0-9_]*\[[\w.?!]*\bfamily\]/],
];

/**
 * EVM method names (as string literals in code, comments aside) belong to src/chains/evm/: the
 * gateway, pricing and every other family read them through the traits (src/chains/gateway.ts).
 * The namespaces are the EVM nodes' (geth, erigon, parity/openethereum). Allowed elsewhere: only
 * examples written for people, which choose nothing: the CLI's help texts and hints (static text,
 * printed without a network at hand; the cabinet asks the family's `example` trait instead).
 */
const EVM_METHOD = /\b(?:eth|net|web3|debug|trace|txpool|erigon|parity)_[a-zA-Z]/;
const EVM_NAMES_ALLOWED = new Set([
  'cli/program.ts', 'cli/rpc/command.ts', 'cli/endpoints/command.ts', 'cli/endpoints/run.ts', 'cli/init/local.ts', 'cli/init/run.ts',
]);
/** Comments and string literals, in order: only the literals are checked. */
const TOKENS = /\/\/[^\n]*|\/\*[\s\S]*?\*\/|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g;

function evmMethodNames(files: Array<{ path: string; text: string }>): string[] {
  const found: string[] = [];
  for (const { path, text } of files) {
    if (path.startsWith('chains/evm/') || EVM_NAMES_ALLOWED.has(path)) continue;
    for (const m of text.matchAll(TOKENS)) {
      const token = m[0];
      if (token.startsWith('//') || token.startsWith('/*') || !EVM_METHOD.test(token)) continue;
      found.push(`${path}:${text.slice(0, m.index).split('\n').length}: ${token.slice(0, 120)}`);
    }
  }
  return found;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
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

  it('no code outside src/chains/evm/ names an EVM method', () => {
    expect(evmMethodNames(tsFiles(src).map((file) => ({ path: relative(src, file), text: readFileSync(file, 'utf8') })))).toEqual([]);
  });

  it('the EVM method check sees the names it is there for', () => {
    const caught = [
      "if (call.method === 'eth_getLogs') return x;",
      'const body = \'{"jsonrpc":"2.0","method":"eth_blockNumber","params":[]}\';',
      'const m = "debug_traceTransaction";',
      'throw new Error(`${x} eth_subscribe needs a type`);',
      "const NS = new Set(['web3_clientVersion', 'net_version', 'trace_block', 'txpool_status']);",
    ];
    for (const line of caught) expect(evmMethodNames([{ path: 'gateway/x.ts', text: line }]), line).not.toEqual([]);
    const fine = [
      '/** `eth_getLogs` ranges wider than this are refused. */',
      '// eth_subscribe is the only subscription call',
      "const id = span.trace_id; const sql = 'select network_id from x';",
      "if (call.method === query.method) return x;",
    ];
    for (const line of fine) expect(evmMethodNames([{ path: 'gateway/x.ts', text: line }]), line).toEqual([]);
    expect(evmMethodNames([{ path: 'chains/evm/gateway.ts', text: "const m = 'eth_call';" }])).toEqual([]);
  });
});

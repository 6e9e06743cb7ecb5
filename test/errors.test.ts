import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { STATUS_BY_CODE } from '../src/api/http.js';

/**
 * The error model, read from the source (docs/architecture.md, "Errors"): every error class in
 * src/ derives from util/errors.ts RpcctlError with a literal code, and every code a Public API
 * handler can meet is either in api/http.ts STATUS_BY_CODE or named below as a fault (a 500).
 * src/client/ is the published library with its own base (RpcctlClientError) and is not read.
 */

const src = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');

/** Error classes that stay outside the model, and why. */
const OUTSIDE_THE_BASE: Record<string, string> = {
  // The CLI's exit signal (an exit code, no error code); cli/io.ts loads at every start-up, where
  // the module set is kept to commander and the definitions (test/e2e-cli.test.ts).
  'cli/io.ts:CliError': 'exit signal of the CLI',
};
/** Classes whose code is not one of a fixed set, and why. */
const OPEN_CODES: Record<string, string> = {
  // Passes the system's listen error through (EADDRINUSE, EACCES...): serve/ tests for EADDRINUSE.
  'gateway/workers/pool.ts:GatewayListenError': 'the errno code of a failed listen',
};
/**
 * Codes that can reach a route handler and are the service's failure, not the client's: they
 * are answered 500 (logged) on purpose. A new code reaching the handlers must be put either here
 * or in STATUS_BY_CODE, so no failure is answered by accident.
 */
const FAULT_CODES = new Set([
  'E_AMOUNT', 'E_ASSET', // createOrder wraps them into PaymentError where it reads the client's input
  'E_CURSOR_MOVED', 'E_LEASE_LOST', 'E_WATCHES_BEHIND', // the scanners' bookkeeping, loaded with watch/
  'E_UPSTREAM', // a scanner's node failed: the service's own traffic, never a client's mistake
  'E_KEY_MISFIT', // createOrder turns it into a PaymentError naming the settings to fix
  'E_UNKNOWN_FAMILY', // a stored network of a family this version does not know: the operator's to fix
  'E_SUBSCRIBE_PARAMS', // the traits' WebSocket protocols throw it on the gateway's sockets only, which answer it as a JSON-RPC error
  'E_TX_UPSTREAM', // no upstream took a payout transaction to relay: the service's side, the client may retry
  'E_ILLEGAL_MOVE', // a payout line's move the table has not: every caller checks the status first
]);
/** Answered by the API listener itself, with its own texts and headers (api/server.ts answerFailure). */
const LISTENER_CODES = new Set(['E_BODY_TOO_LARGE', 'E_BODY_TIMEOUT', 'E_BODY_BUDGET']);
/** An HttpError is already the answer: its status travels with it. */
const ANSWER_CODES = new Set(['E_HTTP']);

interface ErrorClass { id: string; file: string; name: string; parent: string; codes: string[] | 'open' | undefined; abstract: boolean }

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
  );
}

const files = tsFiles(src).map((f) => relative(src, f)).filter((f) => !f.startsWith('client/'));
const text = new Map(files.map((f) => [f, readFileSync(join(src, f), 'utf8')]));

/** `class X extends YError { … }` with its body up to the closing brace at the start of a line. */
const CLASS = /^(?:export\s+)?(abstract\s+)?class\s+(\w+)\s+extends\s+(\w*Error)\b[^{]*\{(?:\}|([\s\S]*?)^\})/gm;

function codesOf(body: string): string[] | 'open' | undefined {
  const assigned = /readonly\s+code\s*=\s*'([^']+)'/.exec(body);
  if (assigned) return [assigned[1]!];
  const typed = /readonly\s+code\s*:\s*([^;=]+);/.exec(body);
  if (!typed) return undefined;
  const literals = typed[1]!.split('|').map((t) => t.trim());
  return literals.every((t) => /^'[^']+'$/.test(t)) ? literals.map((t) => t.slice(1, -1)) : 'open';
}

function errorClasses(sources: Map<string, string>): ErrorClass[] {
  const found: ErrorClass[] = [];
  for (const [file, body] of sources) {
    for (const m of body.matchAll(CLASS)) {
      found.push({ id: `${file}:${m[2]}`, file, name: m[2]!, parent: m[3]!, codes: codesOf(m[4] ?? ''), abstract: m[1] !== undefined });
    }
  }
  return found;
}

/** The class `name` as `file` sees it: its own, or the one it imports by that name. */
function resolveClass(classes: ErrorClass[], file: string, name: string, sources: Map<string, string>): ErrorClass | undefined {
  const local = classes.find((c) => c.file === file && c.name === name);
  if (local) return local;
  for (const m of sources.get(file)!.matchAll(/import\s*\{([^}]*)\}\s*from\s*'(\.[^']+)'/g)) {
    if (!m[1]!.split(',').some((n) => n.trim() === name)) continue;
    const target = relative(src, resolve(dirname(join(src, file)), m[2]!)).replace(/\.js$/, '.ts');
    return resolveClass(classes, target, name, sources);
  }
  return undefined;
}

/** What is wrong with each class: not under RpcctlError, or without a literal code (own or inherited). */
function violations(sources: Map<string, string>): string[] {
  const classes = errorClasses(sources);
  const out: string[] = [];
  for (const c of classes) {
    // An abstract class is never thrown itself; its concrete subclasses are checked.
    if (OUTSIDE_THE_BASE[c.id] || c.id === 'util/errors.ts:RpcctlError' || c.abstract) continue;
    let at: ErrorClass | undefined = c;
    let codes = c.codes;
    const seen = new Set<string>();
    while (at && at.parent !== 'RpcctlError' && !seen.has(at.id)) {
      seen.add(at.id);
      at = resolveClass(classes, at.file, at.parent, sources);
      codes ??= at?.codes;
    }
    if (!at) out.push(`${c.id} does not derive from RpcctlError (src/util/errors.ts)`);
    else if (codes === undefined) out.push(`${c.id} has no code: give it \`readonly code = 'E_…'\``);
    else if (codes === 'open' && !OPEN_CODES[c.id]) out.push(`${c.id}'s code is not a literal (or a union of literals)`);
  }
  return out;
}

/** Codes of the classes (with inherited ones) thrown anywhere `from` reaches by runtime imports. */
function codesReachableFrom(from: string[]): Map<string, string> {
  const classes = errorClasses(text);
  const reached = new Set<string>();
  const queue = [...from];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (reached.has(file) || !text.has(file)) continue;
    reached.add(file);
    // Type-only imports load nothing.
    for (const m of text.get(file)!.matchAll(/^import\s+(?!type\b)[^;]*?from\s*'(\.[^']+)'/gm)) {
      queue.push(relative(src, resolve(dirname(join(src, file)), m[1]!)).replace(/\.js$/, '.ts'));
    }
  }
  const codes = new Map<string, string>();
  for (const file of reached) {
    for (const m of text.get(file)!.matchAll(/new\s+(\w+Error)\s*\(/g)) {
      let c = resolveClass(classes, file, m[1]!, text);
      let own = c?.codes;
      while (c && own === undefined) {
        c = resolveClass(classes, c.file, c.parent, text);
        own = c?.codes;
      }
      if (Array.isArray(own)) for (const code of own) codes.set(code, `${file} (new ${m[1]})`);
    }
  }
  return codes;
}

/** Files that define Public API routes (the handlers' code and everything it loads). */
const routeFiles = files.filter((f) => /\broute\(\{/.test(text.get(f)!) && !f.startsWith('cabinet/'));

describe('the error model', () => {
  it('every error class derives from RpcctlError and has a literal code', () => {
    expect(violations(text)).toEqual([]);
  });

  it('fails on a class outside the model, so the check above means something', () => {
    const broken = new Map([['util/errors.ts', text.get('util/errors.ts')!]]);
    broken.set('watch/made-up.ts', 'export class StrayError extends Error {}\nexport class CodelessError extends RpcctlError {\n  readonly note = 1;\n}\n');
    expect(violations(broken)).toEqual([
      'watch/made-up.ts:StrayError does not derive from RpcctlError (src/util/errors.ts)',
      "watch/made-up.ts:CodelessError has no code: give it `readonly code = 'E_…'`",
    ]);
  });

  it('every code a route handler can meet has a status or is named a fault', () => {
    expect(routeFiles.length).toBeGreaterThanOrEqual(5);
    // The API listener and every route module, with what they load.
    const codes = codesReachableFrom([...routeFiles, 'api/server.ts']);
    // The check sees the codes the routes are known to answer with, and the lists name no stale code.
    expect([...codes.keys()]).toEqual(expect.arrayContaining(['E_PAYMENT_INVALID', 'E_SLOT_LIMIT', 'E_IN_FLIGHT', 'E_INVALID_ADDRESS']));
    expect([...FAULT_CODES, ...LISTENER_CODES].filter((code) => !codes.has(code))).toEqual([]);
    const unplaced = [...codes].filter(([code]) => !(code in STATUS_BY_CODE) && !FAULT_CODES.has(code) && !LISTENER_CODES.has(code) && !ANSWER_CODES.has(code));
    expect(unplaced.map(([code, where]) => `${code} from ${where}`)).toEqual([]);
  });

  it('the listener answers its own codes itself', () => {
    const server = text.get('api/server.ts')!;
    const classes = errorClasses(text).filter((c) => Array.isArray(c.codes) && c.codes.some((code) => LISTENER_CODES.has(code)));
    expect(classes.map((c) => c.name).filter((name) => !server.includes(`instanceof ${name}`))).toEqual([]);
  });

  it('STATUS_BY_CODE names only codes some error class has, and no code is both a status and a fault', () => {
    const declared = new Set(errorClasses(text).flatMap((c) => (Array.isArray(c.codes) ? c.codes : [])));
    expect(Object.keys(STATUS_BY_CODE).filter((code) => !declared.has(code))).toEqual([]);
    expect(Object.keys(STATUS_BY_CODE).filter((code) => FAULT_CODES.has(code))).toEqual([]);
  });

  it('route files leave the translation to STATUS_BY_CODE: no instanceof checks on error classes', () => {
    const handTranslated = routeFiles.filter((f) => /instanceof\s+\w+Error\b/.test(text.get(f)!));
    expect(handTranslated).toEqual([]);
  });
});

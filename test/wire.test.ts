import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * One source for each wire type (docs/architecture.md, "Wire shapes"): the Public API's shapes
 * are zod schemas in src/wire/ with their `z.output` types; the routes validate and document with
 * the schemas, the published client re-exports the types (type-only, so the client loads no
 * zod), and the server imports them from wire/, never from client/. Read from the source.
 */

const src = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const files = new Map(tsFiles(src).map((f) => [relative(src, f), readFileSync(f, 'utf8')]));
const wireFiles = [...files.keys()].filter((f) => f.startsWith('wire/'));

/** The types wire/ exports (`export type X =`, `export type X<…> =`). */
const wireTypes = wireFiles.flatMap((f) => [...files.get(f)!.matchAll(/^export type (\w+)\s*[<=]/gm)].map((m) => m[1]!));

/**
 * Names the server once gave its own copies of wire types; a copy under one of them is a
 * second definition too.
 */
const FORMER_COPIES = ['AuditRecord', 'CreateInput', 'PaymentSettingsView', 'PublicPlan'];

/** Declarations of `names` (interface, type alias, class, enum) in `text`; re-exports are not declarations. */
function declarations(text: string, names: Set<string>): string[] {
  return [...text.matchAll(/^\s*(?:export\s+)?(?:declare\s+)?(?:interface|type|class|enum)\s+(\w+)\b(?!\s*,|\s*\})/gm)]
    .map((m) => m[1]!).filter((n) => names.has(n));
}

/** Every wire type declared outside wire/, as `file: Name`. */
function declaredTwice(sources: Map<string, string>): string[] {
  const names = new Set([...wireTypes, ...FORMER_COPIES]);
  return [...sources].filter(([f]) => !f.startsWith('wire/')).flatMap(([f, text]) => declarations(text, names).map((n) => `${f}: ${n}`));
}

describe('wire types', () => {
  it('wire/ holds the shapes the server and the client share', () => {
    expect(wireTypes).toEqual(expect.arrayContaining([
      'Plan', 'Endpoint', 'Usage', 'RequestLogEntry', 'AuditEntry', 'Payment', 'PaymentStatus', 'AmlResult', 'CreatePayment',
      'PaymentSettings', 'PaymentSettingsInput', 'WatchedAddress', 'WebhookDelivery', 'WebhookAttempt', 'DeliveryStatus', 'WebhookEventFilters',
    ]));
  });

  it('no wire type is declared a second time anywhere in src/ (7 were, on the server and in the client)', () => {
    expect(declaredTwice(files)).toEqual([]);
  });

  it('the check finds a second declaration, so it means something', () => {
    const planted = new Map([
      ['payments/orders.ts', "export type PaymentStatus = 'pending' | 'paid';\nexport type { Payment } from '../wire/payments.js';\n"],
      ['client/types.ts', 'export interface Plan {\n  id: number;\n}\n'],
      ['store/audit.ts', 'export interface AuditRecord { audit_id: string }\n'],
    ]);
    expect(declaredTwice(planted)).toEqual(['payments/orders.ts: PaymentStatus', 'client/types.ts: Plan', 'store/audit.ts: AuditRecord']);
  });

  it('the client takes wire types only as types: its bundle loads no zod and no server code', () => {
    for (const [f, text] of files) {
      if (!f.startsWith('client/')) continue;
      for (const m of text.matchAll(/^(import|export)\b([^;]*?)from\s+'([^']+)'/gms)) {
        if (m[3]!.includes('/wire/')) expect(`${f}: ${m[1]}${m[2]!.slice(0, 5)}`, `${f} imports wire/ as values`).toBe(`${f}: ${m[1]} type`);
        expect(m[3], `${f} imports ${m[3]}`).not.toMatch(/^\.\.\/(?!wire\/)/);
      }
    }
  });

  it('wire/ imports only zod and itself', () => {
    for (const f of wireFiles) {
      for (const m of files.get(f)!.matchAll(/from\s+'([^']+)'/g)) expect(m[1], f).toMatch(/^zod$|^\.\//);
    }
  });

  it('the server imports wire shapes from wire/, not from the client (one way)', () => {
    const fromClientShapes = [...files].filter(([f]) => !f.startsWith('client/') && !f.startsWith('cli/'))
      .filter(([, text]) => /from\s+'(?:\.\.\/)+client\/(?:types|payments|address-watch)\.js'/.test(text)).map(([f]) => f);
    expect(fromClientShapes).toEqual([]);
  });
});

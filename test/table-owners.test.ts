import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every table has one owner module (docs/architecture.md "Tables and their owners"): only the
 * owner's SQL names it, to write or to read; another module calls the owner (payments read the
 * watch's events through `watch/events.ts` hitEvents, a typed query they run or join as a
 * subquery), or is handed a function by serve/ (or by the layer above: the cabinet hands
 * store/members.ts removeMember what deletes its own rows of a member). The import graph
 * (test/layers.test.ts) cannot see SQL: this test reads it, and fails on a statement whose
 * table it cannot read (a variable), outside the few generic helpers listed with their tables.
 */
const OWNERS: Record<string, string> = {
  plans: 'store', networks: 'store', network_environments: 'store', accounts: 'store', api_keys: 'store', endpoints: 'store',
  usage_daily: 'store', usage_account_daily: 'store', store_changes: 'store', store_meta: 'store', audit_log: 'store',
  cabinet_members: 'store',
  cabinet_login_links: 'cabinet', cabinet_recovery_codes: 'cabinet', cabinet_sign_in_challenges: 'cabinet', cabinet_policies: 'cabinet',
  cabinet_sessions: 'cabinet',
  instance_heartbeats: 'limits',
  watched_addresses: 'watch', watch_events: 'watch', scanner_cursors: 'watch', scanner_blocks: 'watch', scanner_leases: 'watch',
  watch_webhooks: 'webhooks', webhook_deliveries: 'webhooks', webhook_attempts: 'webhooks',
  payment_orders: 'payments', payment_funding: 'payments', payment_sightings: 'payments', payment_settings: 'payments',
  payment_rates: 'payments', aml_jobs: 'payments', aml_sanctions: 'payments',
  payouts: 'payouts', payout_lines: 'payouts', refund_links: 'payouts',
};

/**
 * Statements whose table is a variable, by file, with the tables it can be (each the file's own):
 * the usage roll-ups share one upsert and one read for their two tables.
 */
const VARIABLE_TABLES: Record<string, string[]> = {
  'store/usage.ts': ['usage_daily', 'usage_account_daily'],
};

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
  );
}

/** A statement's table: named, or `hidden` behind an expression this test cannot read (its text). */
export interface SqlSite { file: string; line: number; table: string; write: boolean; hidden?: string }

const WRITES = ['insertInto', 'replaceInto', 'mergeInto', 'updateTable', 'deleteFrom'];
/** A Kysely builder that takes a table. */
const KYSELY = /\b(insertInto|replaceInto|mergeInto|updateTable|deleteFrom|selectFrom|innerJoin|leftJoin|rightJoin|fullJoin|crossJoin|innerJoinLateral|leftJoinLateral)\(/g;
/** A literal table, `'name'` or `'name as alias'`. */
const LITERAL = /^'([a-z_0-9]+)(?:\s+as\s+\w+)?'$/;
/**
 * A subquery, aliased as Kysely requires (`hitEvents(db, f).as('e')`), or a callback that builds
 * one: its own builder is a site where it is written (in the owner of its table).
 */
const SUBQUERY = /(\.as\(\s*'\w+'\s*\)$)|(^(\(\s*\w*\s*\)|\w+)\s*=>)/;
/** Raw SQL (prepared statements, `sql` templates): a table name after a keyword that reads or writes. */
const RAW = /\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM|FROM|JOIN)\s+"?([a-z_0-9]+)"?/g;
/** Raw SQL whose table is interpolated: `FROM ${table}` (`sql.table('literal')` is read as the literal). */
const RAW_HIDDEN = /\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM|FROM|JOIN)\s+\$\{\s*(?!sql\.table\('[a-z_0-9]+'\)\s*\})([^}]{0,60})\}/g;

/** The text without comments (prose names tables), lines kept so offsets still tell the line. */
function withoutComments(text: string): string {
  return text.split('\n').map((raw) => (/^\s*(\*|\/\*)/.test(raw) ? '' : raw.replace(/\/\/.*$/, ''))).join('\n');
}

/** The first argument of the call whose `(` ends at `from`: up to a comma or `)` outside brackets and quotes. */
function firstArgument(code: string, from: number): string {
  let depth = 0;
  let quote = '';
  for (let i = from; i < code.length; i++) {
    const c = code[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) {
      if (depth === 0) return code.slice(from, i).trim();
      depth--;
    } else if (c === ',' && depth === 0) return code.slice(from, i).trim();
  }
  return code.slice(from).trim();
}

/** The SQL sites of one source text: Kysely builders (a call may span lines) and raw statements. */
export function sqlSites(file: string, text: string): SqlSite[] {
  const code = withoutComments(text);
  const lineAt = (offset: number) => code.slice(0, offset).split('\n').length;
  const sites: SqlSite[] = [];
  for (const m of code.matchAll(KYSELY)) {
    const write = WRITES.includes(m[1]!);
    const arg = firstArgument(code, m.index + m[0].length);
    const literal = LITERAL.exec(arg);
    if (literal) sites.push({ file, line: lineAt(m.index), table: literal[1]!, write });
    else if (write || !SUBQUERY.test(arg)) sites.push({ file, line: lineAt(m.index), table: '?', write, hidden: `${m[1]}(${arg.replace(/\s+/g, ' ')})` });
  }
  for (const m of code.matchAll(RAW)) {
    if (!(m[2]! in OWNERS)) continue;
    sites.push({ file, line: lineAt(m.index), table: m[2]!, write: !/^(FROM|JOIN)$/.test(m[1]!) });
  }
  for (const m of code.matchAll(RAW_HIDDEN)) {
    sites.push({ file, line: lineAt(m.index), table: '?', write: !/^(FROM|JOIN)$/.test(m[1]!), hidden: `${m[1]} \${${m[2]!.trim()}}` });
  }
  return sites.sort((a, b) => a.line - b.line);
}

/** What is wrong with a site of `folder`'s code: another module's table, or a table it does not name. */
function violation(folder: string, site: SqlSite): string | undefined {
  if (site.hidden !== undefined) {
    const tables = VARIABLE_TABLES[site.file];
    if (tables && tables.every((t) => OWNERS[t] === folder)) return undefined;
    return `${site.file}:${site.line} ${site.write ? 'writes' : 'reads'} a table named by a variable (${site.hidden}): name each table in its own statement`;
  }
  const owner = OWNERS[site.table];
  if (!owner || owner === folder) return undefined;
  if (site.write) return `${site.file}:${site.line} writes ${site.table} (owner: ${owner}/)`;
  return `${site.file}:${site.line} reads ${site.table} itself: read it through its owner, ${owner}/`;
}

/** Migrations create and rewrite every table: store/ owns the schema, not the rows' meaning. */
const SCHEMA_FILES = new Set(['store/migrations.ts', 'store/payments-migration.ts']);

function allSites(): Array<SqlSite & { folder: string }> {
  return tsFiles(src).flatMap((path) => {
    const file = relative(src, path);
    if (SCHEMA_FILES.has(file)) return [];
    const folder = file.includes('/') ? file.slice(0, file.indexOf('/')) : '.';
    return sqlSites(file, readFileSync(path, 'utf8')).map((s) => ({ ...s, folder }));
  });
}

describe('table owners', () => {
  it('maps every table in src/store to one owner', () => {
    const tables = new Set<string>();
    const schema = readFileSync(join(src, 'store', 'tables.ts'), 'utf8');
    const db = schema.slice(schema.indexOf('export interface Database'));
    for (const m of db.slice(0, db.indexOf('}')).matchAll(/^\s+([a-z_0-9]+):/gm)) tables.add(m[1]!);
    expect(tables.size).toBeGreaterThan(20);
    expect([...tables].filter((t) => !(t in OWNERS)), 'tables without an owner').toEqual([]);
    expect(Object.keys(OWNERS).filter((t) => !tables.has(t)), 'owners of tables that are gone').toEqual([]);
  });

  it('reads Kysely and raw SQL sites', () => {
    const sites = sqlSites('x.ts', [
      "db.selectFrom('payment_orders as o').innerJoin('watch_events as e', 'e.id', 'o.id')",
      "  .updateTable('webhook_deliveries')",
      "// db.deleteFrom('accounts') in a comment",
      "raw.prepare('UPDATE store_changes SET v = 1')",
      "await trx.deleteFrom(",
      "  'cabinet_sessions').where('member_id', '=', id)",
    ].join('\n'));
    expect(sites.map((s) => [s.table, s.write, s.line])).toEqual([
      ['payment_orders', false, 1], ['watch_events', false, 1], ['webhook_deliveries', true, 2], ['store_changes', true, 4], ['cabinet_sessions', true, 5],
    ]);
    expect(violation('watch', sites[0]!)).toMatch(/reads payment_orders itself: read it through its owner, payments\//);
    expect(violation('payments', sites[0]!)).toBeUndefined();
    // Payments read the watch's events through watch/, not by naming its table.
    expect(violation('payments', sites[1]!)).toMatch(/reads watch_events itself: read it through its owner, watch\//);
    expect(violation('payments', sites[2]!)).toMatch(/writes webhook_deliveries \(owner: webhooks\/\)/);
    expect(violation('webhooks', sites[2]!)).toBeUndefined();
    expect(violation('store', sites[4]!)).toMatch(/writes cabinet_sessions \(owner: cabinet\/\)/);
  });

  it('sees a statement whose table is a variable, and lets a subquery of the owner\'s through', () => {
    const sites = sqlSites('store/members.ts', [
      "for (const table of ['cabinet_sessions', 'cabinet_login_links'] as const) {",
      '  await trx.deleteFrom(table).where(\'member_id\', \'=\', memberId).execute();',
      '}',
      'await db.selectFrom(tableOf(kind) as never).selectAll().execute();',
      "await db.selectFrom(hitEvents(db, { watchId }).as('e')).leftJoin('payment_funding as f', (j) => j).execute();",
      "await db.selectFrom((eb) => eb.selectFrom('payment_orders').select('id').as('o')).execute();",
      'await db.selectFrom(table).execute();',
      'await sql`DELETE FROM ${sql.raw(table)} WHERE id = 1`.execute(db);',
      "await sql`select 1 from ${sql.table('kysely_migration')}`.execute(db);",
    ].join('\n'));
    expect(sites.map((s) => [s.line, s.table, s.write, s.hidden])).toEqual([
      [2, '?', true, 'deleteFrom(table)'],
      [4, '?', false, 'selectFrom(tableOf(kind) as never)'],
      [5, 'payment_funding', false, undefined],
      [6, 'payment_orders', false, undefined],
      [7, '?', false, 'selectFrom(table)'],
      [8, '?', true, 'DELETE FROM ${sql.raw(table)}'],
    ]);
    for (const site of sites.filter((s) => s.hidden)) expect(violation('store', site)).toMatch(/a table named by a variable/);
    // The one helper allowed a variable names only its own folder's tables.
    const usage = sqlSites('store/usage.ts', "trx.insertInto(t as 'usage_daily').values(row)");
    expect(usage).toHaveLength(1);
    expect(violation('store', usage[0]!)).toBeUndefined();
    expect(violation('payments', { ...usage[0]!, file: 'payments/usage.ts' })).toMatch(/a table named by a variable/);
  });

  it('allows a variable table only where it is listed, with tables of the file\'s own folder', () => {
    const used = new Set(allSites().filter((s) => s.hidden).map((s) => s.file));
    for (const [file, tables] of Object.entries(VARIABLE_TABLES)) {
      expect(used.has(file), `${file} no longer names a table by a variable: take it off the list`).toBe(true);
      expect(tables.map((t) => OWNERS[t]), file).toEqual(tables.map(() => file.slice(0, file.indexOf('/'))));
    }
  });

  it('only the owner names a table, to write or to read, and every table is named', () => {
    const sites = allSites();
    expect(sites.length).toBeGreaterThan(100);
    // No exceptions: a read or write of another module's table moves into the owner, it is not listed here.
    expect(sites.flatMap((s) => violation(s.folder, s) ?? [])).toEqual([]);
  });
});

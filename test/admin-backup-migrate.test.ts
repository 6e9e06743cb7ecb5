import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { Kysely, Migrator } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/store/index.js';
import { migrationProvider, migrations } from '../src/store/migrations.js';
import { openSqlite } from '../src/store/sqlite-dialect.js';
import { cli } from './helpers/cli.js';
import { startTestService } from './helpers/service.js';
import { describeUnless } from './helpers/skips.js';

/**
 * `rpcctl admin backup` (a consistent copy of a live SQLite store) and `rpcctl admin migrate
 * [--check]` (what a rolling upgrade runs first). The store is SQLite here whatever the pass.
 */
const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'rpcctl-maint-'));
  dirs.push(d);
  return d;
};
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const sqliteOnly = { RPCCTL_DATABASE_URL: '', RPCCTL_REDIS_URL: '', RPCCTL_MASTER_KEY: '' };
const names = Object.keys(migrations).sort();

/** A store made by this version's migrations up to and including `last` (an older release's store). */
async function storeAt(last: string): Promise<string> {
  const dataDir = tempDir();
  const db = new Kysely<any>({ dialect: openSqlite(join(dataDir, 'rpcctl.db')).dialect });
  try {
    const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo(last);
    expect(error).toBeUndefined();
  } finally {
    await db.destroy();
  }
  return dataDir;
}

describeUnless(process.env.RPCCTL_TEST_DATABASE_URL && 'backs up the SQLite store (on PostgreSQL, pg_dump does)', 'rpcctl admin backup', () => {
  it('copies the store while serve writes to it: the copy is whole, as of one moment, and opens with the master key', async () => {
    const t = await startTestService({}, { env: sqliteOnly });
    try {
      for (let i = 0; i < 20; i++) await createAccount(t.store, { planId: t.store.catalog.plans[0]!.id, name: `before-${i}` });
      const target = join(tempDir(), 'backup.db');
      // Writes go on in this process while the real CLI copies in its own.
      let writing = true;
      let written = 20;
      const writer = (async () => {
        while (writing) {
          await createAccount(t.store, { planId: t.store.catalog.plans[0]!.id, name: `during-${written}` });
          written++;
          // SQLite calls finish synchronously: let the event loop see the CLI's exit.
          await new Promise((r) => setImmediate(r));
        }
      })();
      const r = await execa(process.execPath, [bin, 'admin', 'backup', target, '--data-dir', t.dataDir, '--json'], { reject: false, env: sqliteOnly });
      writing = false;
      await writer;
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ file: target, bytes: expect.any(Number) });

      const copy = new DatabaseSync(target, { readOnly: true });
      let copied: number;
      try {
        expect(copy.prepare('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
        copied = Number((copy.prepare('select count(*) as n from accounts').get() as { n: number }).n);
        // Accounts are numbered in order: a consistent copy holds exactly the first `copied`.
        const ids = (copy.prepare('select id from accounts order by id').all() as Array<{ id: number }>).map((a) => Number(a.id));
        expect(ids).toEqual(Array.from({ length: copied }, (_, i) => i + 1));
      } finally {
        copy.close();
      }
      expect(copied).toBeGreaterThanOrEqual(20);
      expect(copied).toBeLessThanOrEqual(written);
      // Restored beside its master key, the CLI reads it as a store.
      const restored = tempDir();
      copyFileSync(target, join(restored, 'rpcctl.db'));
      copyFileSync(join(t.dataDir, 'master.key'), join(restored, 'master.key'));
      const list = await cli(['admin', 'accounts', 'list', '--json', '--data-dir', restored], { env: sqliteOnly });
      expect(list.code).toBe(0);
      expect(JSON.parse(list.stdout)).toHaveLength(copied);
    } finally {
      await t.stop();
    }
  }, 120_000);

  it('never overwrites (exit 2), says when there is no store (exit 1), and on PostgreSQL names pg_dump without printing the URL (exit 2)', async () => {
    const dataDir = await storeAt(names.at(-1)!);
    const existing = join(tempDir(), 'taken.db');
    writeFileSync(existing, 'keep me');
    const taken = await cli(['admin', 'backup', existing, '--data-dir', dataDir], { env: sqliteOnly });
    expect(taken).toMatchObject({ code: 2, stdout: '' });
    expect(taken.stderr).toMatch(/taken\.db exists: give a new file name/);

    const empty = tempDir();
    const none = await cli(['admin', 'backup', join(empty, 'x.db'), '--data-dir', empty], { env: sqliteOnly });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no store in .* \(no rpcctl\.db\)/);
    // Nothing was created: not the copy, not an empty store.
    expect(readdirSync(empty)).toEqual([]);

    const pg = await cli(['admin', 'backup', join(empty, 'x.db'), '--data-dir', empty, '--database', 'postgres://rpcctl:s3cret-pw@db.internal:5432/rpcctl'], { env: sqliteOnly });
    expect(pg.code).toBe(2);
    expect(pg.stderr).toMatch(/^error: the store is PostgreSQL: back it up with pg_dump/);
    expect(pg.stderr).not.toMatch(/s3cret|db\.internal/);
  });
});

describe('rpcctl admin migrate', () => {
  it('--check on a store of the previous migration lists exactly the new one, applies nothing, exits 1; migrate applies it; then --check exits 0', async () => {
    const previous = names.at(-2)!;
    const dataDir = await storeAt(previous);
    const check = await cli(['admin', 'migrate', '--check', '--data-dir', dataDir], { env: sqliteOnly });
    expect(check.stdout.trim().split('\n')).toEqual([names.at(-1)]);
    expect(check.stderr).toMatch(/1 pending migration\(s\); nothing was applied/);
    expect(check.code).toBe(1);
    const json = await cli(['admin', 'migrate', '--check', '--json', '--data-dir', dataDir], { env: sqliteOnly });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({ applied: names.slice(0, -1), pending: [names.at(-1)], unknown: [] });

    // A store several migrations behind lists them all, in the order they run.
    const older = await storeAt(names.at(-4)!);
    expect((await cli(['admin', 'migrate', '--check', '--data-dir', older], { env: sqliteOnly })).stdout.trim().split('\n')).toEqual(names.slice(-3));

    const applied = await cli(['admin', 'migrate', '--data-dir', dataDir], { env: sqliteOnly });
    expect(applied.code).toBe(0);
    expect(applied.stdout.trim()).toBe(names.at(-1));
    const after = await cli(['admin', 'migrate', '--check', '--data-dir', dataDir], { env: sqliteOnly });
    expect(after).toMatchObject({ code: 0, stdout: '' });
    expect(after.stderr).toMatch(/No pending migrations/);
  });

  it('--check names migrations the store has and this version does not (a newer version ran them); this version then refuses to open it', async () => {
    const dataDir = await storeAt(names.at(-1)!);
    const db = new DatabaseSync(join(dataDir, 'rpcctl.db'));
    db.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('9999_from_the_future', new Date().toISOString());
    db.close();
    const r = await cli(['admin', 'migrate', '--check', '--json', '--data-dir', dataDir], { env: sqliteOnly });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ pending: [], unknown: ['9999_from_the_future'] });
    expect(r.stderr).toMatch(/warning: the store has migrations this version does not know .*9999_from_the_future/);
    // And this (older) version does not start on it: the rolling-upgrade rule in docs/operations.md.
    const open = await cli(['admin', 'accounts', 'list', '--data-dir', dataDir], { env: sqliteOnly });
    expect(open.code).toBe(1);
    expect(open.stderr).toMatch(/previously executed migration 9999_from_the_future is missing/);
  });

  it('--check on a data dir without a store says so (exit 1) and creates nothing', async () => {
    const empty = tempDir();
    mkdirSync(join(empty, 'sub'));
    const r = await cli(['admin', 'migrate', '--check', '--data-dir', join(empty, 'sub')], { env: sqliteOnly });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no store in/);
    expect(existsSync(join(empty, 'sub', 'rpcctl.db'))).toBe(false);
  });
});

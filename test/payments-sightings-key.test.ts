import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { Store } from '../src/store/index.js';
import { freshSchema, testDatabaseUrl, type TestSchema } from './helpers/shared-stores.js';

/**
 * The store's key for one `seen` per funding transaction and sighting (issue 23): `(order_pk,
 * tx_hash)` unique among the sightings still on the chain. Both writers insert it with
 * ON CONFLICT DO NOTHING and send `seen` only when they inserted; on PostgreSQL the second of two
 * concurrent transactions waits for the first and then conflicts.
 */
let store: Store;
let schema: TestSchema | undefined;

beforeAll(async () => {
  if (testDatabaseUrl) schema = await freshSchema();
  store = await Store.open({
    dataDir: mkdtempSync(join(tmpdir(), 'rpcctl-sightings-')), config: parseConfig({}), syncCatalog: 'always',
    env: { RPCCTL_MASTER_KEY: 'ef'.repeat(32) }, url: schema?.url,
  });
});
afterAll(async () => {
  await store?.close();
  await schema?.drop();
});

const insert = (db: Store['db'], orderPk: number, tx: string) => db.insertInto('payment_sightings').values({ order_pk: orderPk, tx_hash: tx, seen_ms: 1 })
  .onConflict((oc) => oc.doNothing()).executeTakeFirst().then((r) => Number(r.numInsertedOrUpdatedRows ?? 0n));

describe(`payment_sightings key (${testDatabaseUrl ? 'PostgreSQL' : 'SQLite'})`, () => {
  it('one live sighting per order and transaction; a removed one frees the key for the same transaction in a new block', async () => {
    expect(await insert(store.db, 1, '0xa')).toBe(1);
    expect(await insert(store.db, 1, '0xa')).toBe(0);
    expect(await insert(store.db, 2, '0xa')).toBe(1);
    await store.db.updateTable('payment_sightings').set({ removed: 1 }).where('order_pk', '=', 1).where('tx_hash', '=', '0xa').execute();
    expect(await insert(store.db, 1, '0xa')).toBe(1);
    expect(await insert(store.db, 1, '0xa')).toBe(0);
    const rows = await store.db.selectFrom('payment_sightings').select(['order_pk', 'removed']).where('tx_hash', '=', '0xa').orderBy('id').execute();
    expect(rows).toEqual([{ order_pk: 1, removed: 1 }, { order_pk: 2, removed: 0 }, { order_pk: 1, removed: 0 }]);
  });

  it('two concurrent transactions inserting one sighting: exactly one inserts', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    let firstInserted!: () => void;
    const inserted = new Promise<void>((r) => { firstInserted = r; });
    let firstPid = 0;
    const first = store.db.transaction().execute(async (trx) => {
      const n = await insert(trx, 7, '0xrace');
      if (store.kind === 'postgres') firstPid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
      firstInserted();
      await gate;
      return n;
    });
    await inserted;
    const second = store.db.transaction().execute((trx) => insert(trx, 7, '0xrace'));
    // On PostgreSQL the second waits on the first's uncommitted row: released once it is seen
    // blocked by the first. On SQLite transactions are serial (the second waits for the first).
    if (store.kind === 'postgres') {
      const deadline = Date.now() + 10_000;
      while (Number((await sql<{ n: number }>`select count(*) as n from pg_stat_activity where ${firstPid} = any(pg_blocking_pids(pid))`.execute(store.db)).rows[0]!.n) === 0) {
        if (Date.now() > deadline) throw new Error('the second insert never waited on the first');
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    release();
    expect([await first, await second]).toEqual([1, 0]);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import {
  clearTwoFactorIn, confirmPendingTotp, createAccount, insertMember, memberTwoFactor, pendingTotpKey, spendTotpStep, Store,
} from '../src/store/index.js';
import { freshSchema, reachable, testDatabaseUrl, type TestSchema } from './helpers/shared-stores.js';
import { describeUnless } from './helpers/skips.js';

/**
 * The owner of `cabinet_members` keeps the second factor's columns (store/member-two-factor.ts):
 * keys sealed at rest, and each change one conditional UPDATE, so two requests racing with one
 * code cannot both pass. The cabinet's suites drive it through pages; this holds the guarantees
 * at the store, on both dialects.
 */

const pgWhy = !testDatabaseUrl ? 'RPCCTL_TEST_DATABASE_URL is not set' : !(await reachable(testDatabaseUrl)) ? `no PostgreSQL answers at ${testDatabaseUrl}` : undefined;
const config = parseConfig({});
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => { for (const c of cleanups.reverse()) await c(); });

async function openStore(kind: 'sqlite' | 'postgres'): Promise<Store> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-member-2fa-'));
  let schema: TestSchema | undefined;
  if (kind === 'postgres') schema = await freshSchema();
  const store = await Store.open({ dataDir, config, syncCatalog: 'always', env: { RPCCTL_MASTER_KEY: 'ab'.repeat(32) }, url: schema?.url });
  cleanups.push(async () => { await store.close(); await schema?.drop(); rmSync(dataDir, { recursive: true, force: true }); });
  return store;
}

async function newMember(store: Store): Promise<number> {
  const account = await createAccount(store, { planId: store.catalog.plans[0]!.id });
  return insertMember(store, { accountId: account.id, email: `m${account.id}@example.com`, passwordHash: null, role: 'owner', joined: true, now: new Date().toISOString() });
}

const KEY = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';

for (const { kind, why } of [{ kind: 'sqlite' as const, why: undefined }, { kind: 'postgres' as const, why: pgWhy }]) {
  describeUnless(why, `member two-factor columns (${kind})`, () => {
    it('the pending key is made once, sealed at rest, and becomes the key once when the matcher accepts it', async () => {
      const store = await openStore(kind);
      const id = await newMember(store);
      let made = 0;
      const make = () => { made++; return KEY; };
      expect(await pendingTotpKey(store, id, make)).toBe(KEY);
      expect(await pendingTotpKey(store, id, make)).toBe(KEY);
      expect(made).toBe(1);
      const sealed = await store.db.selectFrom('cabinet_members').select(['totp_pending', 'totp_secret']).where('id', '=', id).executeTakeFirstOrThrow();
      expect(sealed.totp_pending).toBeTruthy();
      expect(sealed.totp_pending).not.toContain(KEY);
      // The seal is bound to the row and column: it opens with the same associated data only.
      expect(store.secrets.open(sealed.totp_pending!, `cabinet_members:${id}:totp_pending`)).toBe(KEY);
      expect(() => store.secrets.open(sealed.totp_pending!, `cabinet_members:${id + 1}:totp_pending`)).toThrow();

      expect(await confirmPendingTotp(store, id, () => undefined, new Date().toISOString())).toBe(false);
      expect((await memberTwoFactor(store, id)).enabled).toBe(false);
      const seen: string[] = [];
      const results = await Promise.all([1, 2].map(() => confirmPendingTotp(store, id, (k) => { seen.push(k); return 100; }, '2026-01-01T00:00:00.000Z')));
      // Two confirmations at once: one turns it on, whichever reads the pending key last finds it gone or loses the UPDATE.
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(seen.every((k) => k === KEY)).toBe(true);
      expect(await memberTwoFactor(store, id)).toEqual({ enabled: true, enabledAt: '2026-01-01T00:00:00.000Z' });
      const row = await store.db.selectFrom('cabinet_members').select(['totp_pending', 'totp_secret', 'totp_last_step']).where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.totp_pending).toBeNull();
      expect(row.totp_secret).not.toContain(KEY);
      expect(store.secrets.open(row.totp_secret!, `cabinet_members:${id}:totp_secret`)).toBe(KEY);
      expect(Number(row.totp_last_step)).toBe(100);
    });

    it('a step is spent once: two racing requests with one code, one passes; an older step never', async () => {
      const store = await openStore(kind);
      const id = await newMember(store);
      await pendingTotpKey(store, id, () => KEY);
      expect(await confirmPendingTotp(store, id, () => 100, new Date().toISOString())).toBe(true);
      // The enrolling code's step is spent already.
      expect(await spendTotpStep(store, id, () => 100)).toBe(false);
      for (let step = 101; step < 106; step++) {
        const raced = await Promise.all([1, 2, 3].map(() => spendTotpStep(store, id, (k) => (k === KEY ? step : undefined))));
        expect(raced.filter(Boolean), `step ${step}`).toHaveLength(1);
      }
      expect(await spendTotpStep(store, id, () => 103)).toBe(false);
      expect(await spendTotpStep(store, id, () => undefined)).toBe(false);
      expect(await spendTotpStep(store, id, () => 106)).toBe(true);
    });

    it('clearing turns it off once, and a member without a key spends nothing', async () => {
      const store = await openStore(kind);
      const id = await newMember(store);
      expect(await spendTotpStep(store, id, () => 1)).toBe(false);
      await pendingTotpKey(store, id, () => KEY);
      expect(await confirmPendingTotp(store, id, () => 5, new Date().toISOString())).toBe(true);
      expect(await store.db.transaction().execute((trx) => clearTwoFactorIn(trx, id))).toBe(true);
      expect(await store.db.transaction().execute((trx) => clearTwoFactorIn(trx, id))).toBe(false);
      expect(await memberTwoFactor(store, id)).toEqual({ enabled: false, enabledAt: null });
      expect(await spendTotpStep(store, id, () => 6)).toBe(false);
    });
  });
}

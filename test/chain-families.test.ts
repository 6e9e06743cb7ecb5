import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chainFamilies, chainOf } from '../src/chains/index.js';
import { DERIVING_FAMILIES, FAMILY_NAMES, REFERENCE_FAMILIES, traitsOf, UnknownFamilyError } from '../src/chains/traits.js';
import { parseConfig } from '../src/config/index.js';
import { loadCatalog, Store } from '../src/store/index.js';
import { paymentSettingsSchemas } from '../src/wire/payments.js';
import { freshSchema, testDatabaseUrl, type TestSchema } from './helpers/shared-stores.js';

// Which families derive order addresses has one source, the traits (`payments.derives`, with
// the adapter's `payments.derivation`); a family this version does not know is refused where it
// appears (config at start, a store row at load), never read as EVM (issue 32).

const dirs: string[] = [];
const schemas: TestSchema[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await Promise.all(schemas.map((s) => s.drop()));
});

/** A migrated store on SQLite, or on PostgreSQL when RPCCTL_TEST_DATABASE_URL is set. */
async function openStore(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'rpcctl-families-'));
  dirs.push(dir);
  const schema = testDatabaseUrl ? await freshSchema() : undefined;
  if (schema) schemas.push(schema);
  const config = parseConfig({ networks: [{ slug: 'eth', name: 'Ethereum', family: 'evm', environments: [{ slug: 'mainnet', upstreams: ['http://127.0.0.1:9'] }] }] });
  return Store.open({ dataDir: dir, config, syncCatalog: 'always', url: schema?.url, env: {} });
}

describe('chain families', () => {
  it('the deriving families are those whose traits say so, and each has the adapter\'s derivation', () => {
    expect(DERIVING_FAMILIES).toEqual(['evm', 'utxo', 'tron']);
    for (const f of chainFamilies()) {
      expect(f.payments.derives, f.name).toBe(f.payments.derivation !== undefined);
      expect(traitsOf(f.name).payments.derives, f.name).toBe(DERIVING_FAMILIES.includes(f.name as never));
    }
    expect(FAMILY_NAMES).toEqual(chainFamilies().map((f) => f.name));
  });

  it('the settings take keys of the deriving families only, and say which when given another', () => {
    const { input, view } = paymentSettingsSchemas(DERIVING_FAMILIES);
    expect(input.safeParse({ xpubs: { evm: 'x', utxo: 'y', tron: 'z' } }).success).toBe(true);
    const refused = input.safeParse({ xpubs: { stellar: 'x' } });
    expect(refused.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual(['xpubs: has "stellar": its keys are the families that derive addresses (evm, utxo, tron)']);
    expect(view.safeParse({ xpubs: {}, wallets: {}, aml_fail_at: 'high', underpaid_tolerance_bps: 0, accept_late: false, display_name: null, redirect_url: null, derived: { stellar: { first_address: 'G', next_index: 0 } } }).success).toBe(false);
  });

  it('an unknown family is an error naming it, not the EVM adapter', () => {
    expect(() => chainOf('cardano')).toThrow(UnknownFamilyError);
    expect(() => chainOf('cardano')).toThrow(/unknown chain family "cardano" \(this version knows evm, stellar, utxo, tron, solana/);
    expect(() => traitsOf('cardano')).toThrow(UnknownFamilyError);
    // Not an own property either: the registry is no plain lookup.
    expect(() => chainOf('toString')).toThrow(UnknownFamilyError);
  });

  it('config refuses an unknown family at start, naming the value and the network', () => {
    const net = (family: string) => ({ networks: [{ slug: 'ada', name: 'Cardano', family, environments: [{ slug: 'mainnet', upstreams: ['http://127.0.0.1:9'] }] }] });
    expect(() => parseConfig(net('cardano'))).toThrow(/networks\[0\]\.family: unknown chain family "cardano" \(one of evm, stellar, utxo, tron, solana\)/);
    expect(parseConfig(net('tron')).networks[0]!.family).toBe('tron');
  });

  it('a stored network of an unknown family (written by a newer version) fails the catalog load, naming the network', async () => {
    const store = await openStore();
    try {
      await store.db.updateTable('networks').set({ family: 'cardano' }).where('slug', '=', 'eth').execute();
      const err = await loadCatalog(store.db).then(() => undefined, (e: Error) => e);
      expect(err).toBeInstanceOf(UnknownFamilyError);
      expect(err?.message).toMatch(/^network "eth" in the store: unknown chain family "cardano"/);
    } finally {
      await store.close();
    }
  });

  it('the migrated payment_settings has the key and counter columns of every deriving family', async () => {
    const store = await openStore();
    try {
      const tables = await store.db.introspection.getTables();
      const columns = tables.find((t) => t.name === 'payment_settings')!.columns.map((c) => c.name);
      for (const f of DERIVING_FAMILIES) expect(columns, f).toEqual(expect.arrayContaining([`xpub_${f}`, `next_index_${f}`]));
      // Families whose orders share the merchant's wallet (told apart by a reference) store it per family.
      expect(REFERENCE_FAMILIES).toEqual(['solana']);
      for (const f of REFERENCE_FAMILIES) expect(columns, f).toContain(`wallet_${f}`);
      // Each such family gives its reference, and none other does.
      for (const f of FAMILY_NAMES) expect(chainOf(f).payments.reference !== undefined, f).toBe(traitsOf(f).payments.references);
    } finally {
      await store.close();
    }
  });
});

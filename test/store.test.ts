import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import {
  createAccount, createApiKey, findActiveKey, getAccount, listApiKeys, rotateWebhookSecret, SecretBox, Store, webhookSecretOf,
} from '../src/store/index.js';

const config = parseConfig({});

describe('store', () => {
  it('keeps API and webhook secrets encrypted at rest, and files private', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-store-'));
    const store = await Store.open({ dataDir, config, syncCatalog: 'always' });
    const account = await createAccount(store, { planId: 1 });
    const key = await createApiKey(store, { accountId: account.id, allowedIps: ['192.0.2.1'] });
    const webhookSecret = webhookSecretOf(store, (await getAccount(store, account.id))!);
    store.raw?.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    await store.close();

    const bytes = readFileSync(join(dataDir, 'rpcctl.db')).toString('latin1');
    expect(bytes).toContain(key.api_key);
    expect(bytes).not.toContain(key.secret);
    expect(bytes).not.toContain(webhookSecret);
    expect(statSync(join(dataDir, 'master.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'rpcctl.db')).mode & 0o777).toBe(0o600);

    // Reopening runs no migration twice and decrypts with the same master key.
    const again = await Store.open({ dataDir, config, syncCatalog: 'always' });
    expect((await findActiveKey(again, key.api_key))!.secret).toBe(key.secret);
    expect((await listApiKeys(again, account.id))[0]).not.toHaveProperty('secret');
    const rotated = await rotateWebhookSecret(again, account.id);
    expect(rotated).not.toBe(webhookSecret);
    expect(webhookSecretOf(again, (await getAccount(again, account.id))!)).toBe(rotated);
    await again.close();
  });

  it('a wrong master key cannot open secrets: the store refuses to open with it, saying why', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-store-'));
    const store = await Store.open({ dataDir, config, syncCatalog: 'always' });
    const account = await createAccount(store, { planId: 1 });
    await createApiKey(store, { accountId: account.id });
    await store.close();
    writeFileSync(join(dataDir, 'master.key'), `${'ab'.repeat(32)}\n`);
    await expect(Store.open({ dataDir, config, syncCatalog: 'always' })).rejects.toThrow(/same RPCCTL_MASTER_KEY/);
  });

  it('a sealed secret is bound to its row', () => {
    const box = new SecretBox(Buffer.alloc(32, 7));
    const sealed = box.seal('s3cret', 'api_key:a');
    expect(box.open(sealed, 'api_key:a')).toBe('s3cret');
    expect(() => box.open(sealed, 'api_key:b')).toThrow();
  });

  it('keeps network and environment ids across config changes and refuses to renumber them', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-store-'));
    const first = parseConfig({ networks: [{ slug: 'a', name: 'A', environments: [{ slug: 'main' }, { slug: 'test' }] }] });
    const s1 = await Store.open({ dataDir, config: first, syncCatalog: 'always' });
    const envIds = s1.catalog.networkBySlug('a')!.environments.map((e) => e.id);
    await s1.close();
    const second = parseConfig({ networks: [
      { slug: 'b', name: 'B', environments: [{ slug: 'main' }] },
      { slug: 'a', name: 'A', environments: [{ slug: 'test' }, { slug: 'main' }] },
    ] });
    const s2 = await Store.open({ dataDir, config: second, syncCatalog: 'always' });
    const a = s2.catalog.networkBySlug('a')!;
    expect(a.environments.find((e) => e.slug === 'main')!.id).toBe(envIds[0]);
    expect(a.environments.find((e) => e.slug === 'test')!.id).toBe(envIds[1]);
    expect(s2.catalog.environmentBySlug('a')!.slug).toBe('test');
    expect(s2.catalog.environmentBySlug('a-main')!.id).toBe(envIds[0]);
    await s2.close();
    const clash = parseConfig({ networks: [{ id: 99, slug: 'a', name: 'A', environments: [{ slug: 'main' }] }] });
    await expect(Store.open({ dataDir, config: clash, syncCatalog: 'always' })).rejects.toThrow(/networks\[0\]\.id: network "a" is stored with id/);
  });
});

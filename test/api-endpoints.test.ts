import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';
import { testDatabaseUrl } from './helpers/shared-stores.js';
import { migrationDb } from './helpers/migration-db.js';

let t: TestService;

const networks = [
  { id: 1, slug: 'eth', name: 'Ethereum', sort: 10, environments: [{ id: 1, slug: 'mainnet', upstreams: ['http://127.0.0.1:1'] }, { id: 2, slug: 'sepolia', upstreams: [] }] },
  { id: 2, slug: 'polygon', name: 'Polygon', sort: 20, environments: [{ id: 3, slug: 'mainnet', upstreams: [] }] },
  { id: 3, slug: 'base', name: 'Base', sort: 5, environments: [{ id: 4, slug: 'mainnet', upstreams: [] }] },
];
const plans = [
  { id: 1, slug: 'free', name: 'Free', included_credits: 1000, rps_limit: 5, endpoints_limit: 1, webhook_address_slots: 0, network_limit: 1, allowed_network_slugs: [] },
  { id: 2, slug: 'two', name: 'Two', included_credits: 1000, rps_limit: 7, endpoints_limit: 3, network_limit: 2, allowed_network_slugs: [] },
  { id: 3, slug: 'ethonly', name: 'Eth only', included_credits: 1000, rps_limit: 9, endpoints_limit: 5, network_limit: null, allowed_network_slugs: ['eth'] },
  { id: 4, slug: 'pro', name: 'Pro', included_credits: 1000, rps_limit: 50, endpoints_limit: 100, network_limit: null, allowed_network_slugs: [] },
];

beforeAll(async () => {
  t = await startTestService({ networks, plans, gateway: { host_prefix: 'rpc', rpc_domain: 'example.test', scheme: 'https' } });
});
afterAll(() => t.stop());

const FIELDS = ['id', 'uuid', 'name', 'status', 'network_id', 'network_name', 'network_slug', 'network_environment_id', 'env_slug',
  'url', 'rps_limit', 'plan_id', 'created_at', 'version', 'block_height', 'allowed_ips'];

async function create(m: Merchant, body: unknown) {
  return m.call('POST', '/v1/endpoints', typeof body === 'string' ? body : JSON.stringify(body));
}

describe('endpoints', () => {
  it('creates by network_environment_id with the full field set, active, with its gateway URL', async () => {
    const m = await t.merchant({ plan: 'pro' });
    const r = await create(m, { name: 'main', network_environment_id: 2 });
    expect(r.status).toBe(200);
    const e = r.body.endpoint;
    expect(Object.keys(e).sort()).toEqual([...FIELDS].sort());
    expect(e).toMatchObject({
      name: 'main', status: 'active', network_id: 1, network_name: 'Ethereum', network_slug: 'eth',
      network_environment_id: 2, env_slug: 'sepolia', rps_limit: 50, plan_id: 4, version: null, block_height: null, allowed_ips: [],
    });
    expect(e.url).toBe(`https://rpc-eth-sepolia.example.test/${e.uuid}`);
    expect(e.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Date(e.created_at).toISOString()).toBe(e.created_at);

    const list = await m.call('GET', '/v1/endpoints');
    expect(list.body).toEqual({ ok: true, endpoints: [e] });
    expect((await m.call('GET', `/v1/endpoints/${e.id}`)).body).toEqual({ ok: true, endpoint: e });
  });

  it('creates by network_id + env_slug, and by network_slug + env_slug with a default name', async () => {
    const m = await t.merchant({ plan: 'pro' });
    const a = await create(m, { name: 'poly', network_id: 2, env_slug: 'mainnet' });
    expect(a.body.endpoint).toMatchObject({ network_slug: 'polygon', env_slug: 'mainnet', network_environment_id: 3 });
    const b = await create(m, { network_slug: 'base', env_slug: 'mainnet' });
    expect(b.body.endpoint).toMatchObject({ name: 'base-mainnet', network_environment_id: 4 });
  });

  it.each([
    [{ network_environment_id: 1 }, /^name: /],
    [{ name: '', network_environment_id: 1 }, /^name: must not be empty/],
    [{ name: 'x'.repeat(256), network_environment_id: 1 }, /^name: must be at most 255 characters/],
    [{ name: 7, network_environment_id: 1 }, /^name: must be a string/],
    [{ name: 'n', network_environment_id: 0 }, /^network_environment_id: must be at least 1/],
    [{ name: 'n', network_environment_id: 1.5 }, /^network_environment_id: must be an integer/],
    [{ name: 'n', network_environment_id: 99 }, /^network_environment_id: unknown network environment 99/],
    [{ name: 'n' }, /^network_environment_id: provide network_environment_id, or network_id with env_slug/],
    [{ name: 'n', network_id: 1 }, /^env_slug: is required with network_id/],
    [{ name: 'n', network_id: 1, env_slug: 'e'.repeat(81) }, /^env_slug: must be at most 80 characters/],
    [{ name: 'n', network_id: 1, env_slug: 'goerli' }, /^env_slug: "goerli" is not an environment of eth/],
    [{ name: 'n', network_id: 42, env_slug: 'mainnet' }, /^network_id: unknown network 42/],
    [{ name: 'n', network_environment_id: 1, network_id: 1, env_slug: 'mainnet' }, /not both/],
  ])('rejects %j with a 400 naming the field', async (body, message) => {
    const m = await t.merchant({ plan: 'pro' });
    const r = await create(m, body);
    expect(r.status).toBe(400);
    expect(r.body.ok).toBe(false);
    expect(r.body.error).toMatch(message);
    expect((await m.call('GET', '/v1/endpoints')).body.endpoints).toEqual([]);
  });

  it('malformed JSON, a non-object and an empty body are 400', async () => {
    const m = await t.merchant({ plan: 'pro' });
    expect(await create(m, '{"name": ')).toMatchObject({ status: 400, body: { ok: false, error: 'Malformed JSON body' } });
    expect(await create(m, '[1,2]')).toMatchObject({ status: 400, body: { ok: false, error: 'Request body must be a JSON object' } });
    expect(await create(m, '')).toMatchObject({ status: 400, body: { ok: false } });
  });

  it('enforces endpoints_limit', async () => {
    const m = await t.merchant({ plan: 'free' });
    expect((await create(m, { name: 'a', network_environment_id: 1 })).status).toBe(200);
    const r = await create(m, { name: 'b', network_environment_id: 1 });
    expect(r).toMatchObject({ status: 400, body: { ok: false, error: 'Endpoint limit reached: the Free plan allows 1 endpoint' } });
  });

  it('enforces endpoints_limit under concurrent creates', async () => {
    const m = await t.merchant({ plan: 'two' });
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => create(m, { name: `c${i}`, network_environment_id: 1 })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    expect((await m.call('GET', '/v1/endpoints')).body.endpoints).toHaveLength(3);
  });

  it('enforces network_limit and narrows available networks once it is reached', async () => {
    const m = await t.merchant({ plan: 'two' });
    const all = await m.call('GET', '/v1/endpoints/available-networks');
    expect(all.body).toEqual({
      ok: true,
      networks: [
        { id: 3, uuid: expect.any(String), name: 'Base', slug: 'base', sort: 5, environment_kinds: ['mainnet'] },
        { id: 1, uuid: expect.any(String), name: 'Ethereum', slug: 'eth', sort: 10, environment_kinds: ['mainnet', 'sepolia'] },
        { id: 2, uuid: expect.any(String), name: 'Polygon', slug: 'polygon', sort: 20, environment_kinds: ['mainnet'] },
      ],
      network_limit: 2,
      allowed_network_slugs: [],
    });
    await create(m, { name: 'a', network_environment_id: 1 });
    await create(m, { name: 'b', network_environment_id: 3 });
    const r = await create(m, { name: 'c', network_environment_id: 4 });
    expect(r).toMatchObject({ status: 400, body: { error: 'Network limit reached: the Two plan allows endpoints on 2 networks' } });
    // Another environment of a network already in use is fine.
    expect((await create(m, { name: 'd', network_environment_id: 2 })).status).toBe(200);
    const narrowed = await m.call('GET', '/v1/endpoints/available-networks');
    expect(narrowed.body.networks.map((n: { slug: string }) => n.slug)).toEqual(['eth', 'polygon']);
  });

  it('enforces allowed_network_slugs', async () => {
    const m = await t.merchant({ plan: 'ethonly' });
    const avail = await m.call('GET', '/v1/endpoints/available-networks');
    expect(avail.body.networks.map((n: { slug: string }) => n.slug)).toEqual(['eth']);
    expect(avail.body).toMatchObject({ network_limit: null, allowed_network_slugs: ['eth'] });
    const r = await create(m, { name: 'p', network_environment_id: 3 });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/Network "polygon" is not available on the Eth only plan/);
  });

  it('an account never sees another account\'s endpoint', async () => {
    const a = await t.merchant({ plan: 'pro' });
    const b = await t.merchant({ plan: 'pro' });
    const e = (await create(a, { name: 'mine', network_environment_id: 1 })).body.endpoint;
    for (const [method, path, body] of [
      ['GET', `/v1/endpoints/${e.id}`, ''],
      ['GET', `/v1/endpoints/${e.id}/usage`, ''],
      ['PATCH', `/v1/endpoints/${e.id}/status`, '{"status":"paused"}'],
      ['PATCH', `/v1/endpoints/${e.id}/allowed-ips`, '{"allowed_ips":[]}'],
    ] as const) {
      expect(await b.call(method, path, body)).toMatchObject({ status: 404, body: { ok: false, error: 'Endpoint not found' } });
    }
    expect((await b.call('GET', '/v1/endpoints')).body.endpoints).toEqual([]);
    expect((await a.call('GET', `/v1/endpoints/${e.id}`)).body.endpoint.status).toBe('active');
  });

  it('a non-numeric id is a 400 naming it', async () => {
    const m = await t.merchant({ plan: 'pro' });
    expect(await m.call('GET', '/v1/endpoints/abc')).toMatchObject({ status: 400, body: { error: 'id: must be a positive integer' } });
  });

  it('names are unique within an account: 409 on create and on rename, one winner of a race; other accounts and default names are not affected', async () => {
    const m = await t.merchant({ plan: 'pro' });
    const first = (await create(m, { name: 'main', network_environment_id: 1 })).body.endpoint;
    const again = await create(m, { name: 'main', network_environment_id: 3 });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ ok: false, error: `name: an endpoint named "main" exists already (id ${first.id}); names are unique within an account: choose another, or rename that one` });
    // Trimmed as the schema trims: " main " is "main".
    expect((await create(m, { name: ' main ', network_environment_id: 1 })).status).toBe(409);
    const other = (await create(m, { name: 'other', network_environment_id: 1 })).body.endpoint;
    const renamed = await m.call('PATCH', `/v1/endpoints/${other.id}`, JSON.stringify({ name: 'main' }));
    expect(renamed.status).toBe(409);
    expect(renamed.body.error).toMatch(/^name: an endpoint named "main" exists already/);
    // Renaming an endpoint to its own name is no clash.
    expect((await m.call('PATCH', `/v1/endpoints/${first.id}`, JSON.stringify({ name: 'main' }))).status).toBe(200);
    expect((await m.call('GET', '/v1/endpoints')).body.endpoints.map((e: { name: string }) => e.name).sort()).toEqual(['main', 'other']);
    // Another account may use the name; a name left out is made free (eth-mainnet, eth-mainnet-2).
    expect((await create(await t.merchant({ plan: 'pro' }), { name: 'main', network_environment_id: 1 })).status).toBe(200);
    const d1 = await create(m, { network_slug: 'eth', env_slug: 'mainnet' });
    const d2 = await create(m, { network_slug: 'eth', env_slug: 'mainnet' });
    expect([d1.body.endpoint.name, d2.body.endpoint.name]).toEqual(['eth-mainnet', 'eth-mainnet-2']);
    // Four creates of one name at once: one endpoint.
    const racer = await t.merchant({ plan: 'pro' });
    // Bodies that differ in white space only: one signed request sent twice would be a replay (401).
    const results = await Promise.all(Array.from({ length: 4 }, (_, i) => create(racer, `${JSON.stringify({ name: 'race', network_environment_id: 1 })}${' '.repeat(i)}`)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    expect((await racer.call('GET', '/v1/endpoints')).body.endpoints).toHaveLength(1);
  });

  it('pauses and resumes', async () => {
    const m = await t.merchant({ plan: 'pro' });
    const e = (await create(m, { name: 's', network_environment_id: 1 })).body.endpoint;
    const paused = await m.call('PATCH', `/v1/endpoints/${e.id}/status`, '{"status":"paused"}');
    expect(paused.body).toMatchObject({ ok: true, endpoint: { id: e.id, status: 'paused' } });
    expect((await m.call('GET', `/v1/endpoints/${e.id}`)).body.endpoint.status).toBe('paused');
    const resumed = await m.call('PATCH', `/v1/endpoints/${e.id}/status`, '{"status":"active"}');
    expect(resumed.body.endpoint.status).toBe('active');
    const bad = await m.call('PATCH', `/v1/endpoints/${e.id}/status`, '{"status":"deleted"}');
    expect(bad).toMatchObject({ status: 400, body: { ok: false, error: 'status: must be "active" or "paused"' } });
  });

  it('replaces, clears and validates the allowlist; a rejected update changes nothing', async () => {
    const m = await t.merchant({ plan: 'pro' });
    const e = (await create(m, { name: 'ips', network_environment_id: 1 })).body.endpoint;
    const path = `/v1/endpoints/${e.id}/allowed-ips`;
    const set = await m.call('PATCH', path, JSON.stringify({ allowed_ips: ['203.0.113.7', '2001:db8::1'] }));
    expect(set.body.endpoint.allowed_ips).toEqual(['203.0.113.7', '2001:db8::1']);

    const rejects: Array<[unknown, RegExp]> = [
      [{}, /^allowed_ips: is required/],
      [{ allowed_ips: '1.2.3.4' }, /^allowed_ips: /],
      [{ allowed_ips: ['1.2.3.4', 'not-an-ip'] }, /^allowed_ips\[1\]: must be an IPv4 or IPv6 address/],
      [{ allowed_ips: ['1.2.3.4/24'] }, /^allowed_ips\[0\]: must be an IPv4 or IPv6 address/],
      [{ allowed_ips: ['fe80::1%eth0'] }, /^allowed_ips\[0\]: must be an IPv4 or IPv6 address/],
      [{ allowed_ips: ['1.2.3.256'] }, /^allowed_ips\[0\]: /],
      [{ allowed_ips: ['a'.repeat(46)] }, /^allowed_ips\[0\]: must be at most 45 characters/],
      [{ allowed_ips: Array.from({ length: 51 }, (_, i) => `10.0.0.${i}`) }, /^allowed_ips: must have at most 50 entries/],
    ];
    for (const [body, message] of rejects) {
      const r = await m.call('PATCH', path, JSON.stringify(body));
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(message);
    }
    expect((await m.call('GET', `/v1/endpoints/${e.id}`)).body.endpoint.allowed_ips).toEqual(['203.0.113.7', '2001:db8::1']);

    const fifty = Array.from({ length: 50 }, (_, i) => `10.0.0.${i}`);
    expect((await m.call('PATCH', path, JSON.stringify({ allowed_ips: fifty }))).body.endpoint.allowed_ips).toHaveLength(50);
    expect((await m.call('PATCH', path, '{"allowed_ips":[]}')).body.endpoint.allowed_ips).toEqual([]);
  });
});

describe('migration 0030 (endpoint names unique)', () => {
  const kinds = testDatabaseUrl ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);
  for (const kind of kinds) {
    it(`keeps the oldest endpoint's name, renames later duplicates NAME-2, NAME-3 with an audit entry, then refuses duplicates (${kind})`, async () => {
      const { db, migrator, cleanup } = await migrationDb(kind);
      try {
        expect((await migrator.migrateTo('0028_audit_log')).error).toBeUndefined();
        const now = new Date().toISOString();
        await db.insertInto('plans').values({ id: 1, slug: 'p', name: 'P', included_credits: 1, rps_limit: 1, endpoints_limit: 9 }).execute();
        await db.insertInto('networks').values({ id: 1, uuid: 'n1', slug: 'eth', name: 'Ethereum', family: 'evm', sort: 1, credits: '{}' }).execute();
        await db.insertInto('network_environments').values({ id: 1, network_id: 1, slug: 'mainnet', upstreams: '[]' }).execute();
        for (const id of [1, 2]) await db.insertInto('accounts').values({ id, name: null, plan_id: 1, webhook_secret: 'x', created_at: now }).execute();
        const endpoint = (id: number, account: number, name: string) => ({
          id, uuid: `00000000-0000-4000-8000-00000000000${id}`, account_id: account, name, status: 'active', network_environment_id: 1,
          allowed_ips: '[]', created_at: now, updated_at: now, version: null, block_height: null,
        });
        // Account 1: three "main" (one "main-2" taken already); account 2 has its own "main".
        await db.insertInto('endpoints').values([endpoint(1, 1, 'main'), endpoint(2, 1, 'main'), endpoint(3, 1, 'main-2'), endpoint(4, 1, 'main'), endpoint(5, 2, 'main')]).execute();

        expect((await migrator.migrateToLatest()).error).toBeUndefined();
        const names = (await db.selectFrom('endpoints').select(['id', 'name']).orderBy('id').execute()).map((r) => [Number(r.id), r.name]);
        expect(names).toEqual([[1, 'main'], [2, 'main-3'], [3, 'main-2'], [4, 'main-4'], [5, 'main']]);
        const audit = await db.selectFrom('audit_log').select(['account_id', 'action', 'target_id', 'actor_label', 'changes']).orderBy('id').execute();
        expect(audit.map((a) => [Number(a.account_id), a.action, a.target_id, a.actor_label, JSON.parse(a.changes).was])).toEqual([
          [1, 'endpoint.rename', '2', 'migration 0030', 'main'], [1, 'endpoint.rename', '4', 'migration 0030', 'main'],
        ]);
        await expect(db.insertInto('endpoints').values(endpoint(6, 1, 'main')).execute()).rejects.toThrow();
        await db.insertInto('endpoints').values(endpoint(7, 2, 'main-2')).execute();
      } finally {
        await cleanup();
      }
    });
  }
});

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { execa } from 'execa';
import openapiTS from 'openapi-typescript';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { rawCall, startTestService, type Merchant, type TestService } from './helpers/service.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import type { NetworkFamily } from '../src/chains/family.js';

// The review checked openapi.json with a real OpenAPI 3.1 validator and a code generator:
// Error referred to itself, integer parameters were strings, WatchEvent was incomplete.
// This validates the document, then validates a real answer of every route against the
// schema the document declares for it.
let t: TestService;
let m: Merchant;
let rx: Receiver;
let doc: any;

beforeAll(async () => {
  rx = await startReceiver();
  t = await startTestService({
    webhooks: { allow_private_urls: true, timeout_ms: 1000, egress_ips: ['203.0.113.7'] },
    plans: [{ id: 1, slug: 'pro', name: 'Pro', included_credits: 100_000, rps_limit: 100, endpoints_limit: 10, webhook_address_slots: 10, network_limit: null }],
  });
  m = await t.merchant();
  doc = (await rawCall(t.baseUrl, 'GET', '/v1/openapi.json')).body;
});
afterAll(async () => {
  await t.stop();
  await rx.close();
});

describe('openapi.json', () => {
  it('is a valid OpenAPI 3.1 document with no circular references', async () => {
    const copy = structuredClone(doc);
    await expect(SwaggerParser.validate(copy)).resolves.toBeTruthy();
    // A schema that is nothing but a $ref back to itself ("Self-referencing circular pointer"
    // in openapi-typescript): the validator lets it pass, so follow every pure $ref chain here.
    const schemas = doc.components.schemas as Record<string, { $ref?: string }>;
    for (const name of Object.keys(schemas)) {
      const seen = new Set<string>();
      let current: string | undefined = name;
      while (current !== undefined) {
        expect(seen.has(current), `components.schemas.${name} is a $ref cycle`).toBe(false);
        seen.add(current);
        const s: { $ref?: string } | undefined = schemas[current];
        current = s && Object.keys(s).length === 1 && s.$ref ? s.$ref.split('/').pop() : undefined;
      }
    }
    expect(doc.components.schemas.Error).toMatchObject({ type: 'object', required: ['ok', 'error'] });
  });

  it('generates client types with openapi-typescript that compile, take numbers for integer parameters and take an answer\'s id back as it came', async () => {
    const types = await openapiTS(structuredClone(doc));
    const dir = mkdtempSync(join(tmpdir(), 'rpcctl-openapi-'));
    try {
      writeFileSync(join(dir, 'api.ts'), types);
      writeFileSync(join(dir, 'use.ts'), `import type { components, paths } from './api.js';
type UsageQuery = NonNullable<paths['/v1/endpoints/{id}/usage']['get']['parameters']['query']>;
type EndpointPath = paths['/v1/endpoints/{id}']['get']['parameters']['path'];
type ListQuery = NonNullable<paths['/v1/address-watch/addresses']['get']['parameters']['query']>;
export const q: UsageQuery = { days: 90 };
// @ts-expect-error days is 7 | 30 | 90
export const bad: UsageQuery = { days: 5 };
export const p: EndpointPath = { id: 12 };
export const l: ListQuery = { page: 2, per_page: 50 };
type EventsQuery = NonNullable<paths['/v1/address-watch/events']['get']['parameters']['query']>;
export const follow: EventsQuery[] = [{ after: 'latest' }, { after: 42, limit: 500 }];
export const e: components['schemas']['Error'] = { ok: false, error: 'x' };
export function kind(ev: components['schemas']['WatchEvent']): string {
  return ev.type === 'block' ? String(ev.tx_count) : ev.tx_hash;
}
// An id an answer carries goes back as a parameter as it came (orval: redeliver(list().deliveries[0].delivery_id)).
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Deliveries = Json<paths['/v1/address-watch/deliveries']['get']['responses'][200]>;
type RedeliverPath = paths['/v1/address-watch/deliveries/{delivery_id}/redeliver']['post']['parameters']['path'];
type DeliveriesQuery = NonNullable<paths['/v1/address-watch/deliveries']['get']['parameters']['query']>;
export function again(list: Deliveries): RedeliverPath {
  return { delivery_id: list.deliveries[0]!.delivery_id };
}
export const byNumber: RedeliverPath = { delivery_id: 7 };
export function older(list: Deliveries): DeliveriesQuery {
  return { before: list.next_before ?? undefined, event_id: list.deliveries[0]!.event_id ?? undefined };
}
type Audit = Json<paths['/v1/account/audit']['get']['responses'][200]>;
type AuditQuery = NonNullable<paths['/v1/account/audit']['get']['parameters']['query']>;
export function olderAudit(page: Audit): AuditQuery {
  return { before: page.next_before ?? undefined };
}
type Events = Json<paths['/v1/address-watch/events']['get']['responses'][200]>;
export function next(page: Events): EventsQuery {
  return { after: page.next_after ?? 'latest' };
}
`);
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'nodenext', target: 'es2022', skipLibCheck: true }, files: ['use.ts'] }));
      const tsc = new URL('../node_modules/.bin/tsc', import.meta.url).pathname;
      const r = await execa(tsc, ['-p', join(dir, 'tsconfig.json')], { reject: false });
      expect(r.exitCode, `${r.stdout}\n${types.slice(0, 2000)}`).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('names every operation with a unique operationId, pinned here so a rename is a visible change', () => {
    // Generated clients name their methods after these: a missing one makes the name follow the path.
    const ids = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops as Record<string, { operationId?: string }>).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`));
    expect(ids.filter((x) => x.endsWith(' undefined'))).toEqual([]);
    const names = ids.map((x) => x.split(' ')[2]);
    expect(new Set(names).size).toBe(names.length);
    expect(ids.sort()).toEqual([
      'DELETE /v1/address-watch/addresses unwatchAddress',
      'GET /v1/account getAccount',
      'GET /v1/account/audit listAuditLog',
      'GET /v1/account/usage getAccountUsage',
      'GET /v1/address-watch/account getWatchAccount',
      'GET /v1/address-watch/addresses listWatchedAddresses',
      'GET /v1/address-watch/deliveries listWebhookDeliveries',
      'GET /v1/address-watch/events listWatchEvents',
      'GET /v1/address-watch/webhook getWebhook',
      'GET /v1/endpoints listEndpoints',
      'GET /v1/endpoints/available-networks listAvailableNetworks',
      'GET /v1/endpoints/usage getEndpointsUsage',
      'GET /v1/endpoints/{id} getEndpoint',
      'GET /v1/endpoints/{id}/logs getEndpointLogs',
      'GET /v1/endpoints/{id}/usage getEndpointUsage',
      'GET /v1/openapi.json getOpenApiDocument',
      'GET /v1/payments listPayments',
      'GET /v1/payments/settings getPaymentSettings',
      'GET /v1/payments/{payment_id} getPayment',
      'GET /v1/payments/{payment_id}/refunds listRefunds',
      'GET /v1/payouts listPayouts',
      'GET /v1/payouts/{payout_id} getPayout',
      'GET /v1/payouts/{payout_id}/psbt getPayoutPsbt',
      'PATCH /v1/endpoints/{id} renameEndpoint',
      'PATCH /v1/endpoints/{id}/allowed-ips setEndpointAllowedIps',
      'PATCH /v1/endpoints/{id}/status setEndpointStatus',
      'POST /v1/address-watch/addresses watchAddress',
      'POST /v1/address-watch/deliveries/{delivery_id}/redeliver redeliverWebhook',
      'POST /v1/address-watch/webhook/test testWebhook',
      'POST /v1/endpoints createEndpoint',
      'POST /v1/payments createPayment',
      'POST /v1/payments/{payment_id}/cancel cancelPayment',
      'POST /v1/payments/{payment_id}/refunds createRefund',
      'POST /v1/payouts createPayout',
      'POST /v1/payouts/{payout_id}/approve approvePayout',
      'POST /v1/payouts/{payout_id}/cancel cancelPayout',
      'POST /v1/payouts/{payout_id}/transaction submitPayoutTransaction',
      'PUT /v1/address-watch/webhook setWebhook',
      'PUT /v1/payments/settings updatePaymentSettings',
    ]);
  });

  it('declares integer parameters as integers', () => {
    const param = (path: string, method: string, name: string) => doc.paths[path][method].parameters.find((p: { name: string }) => p.name === name);
    expect(param('/v1/endpoints/{id}', 'get', 'id').schema).toMatchObject({ type: 'integer', minimum: 1 });
    expect(param('/v1/endpoints/{id}/usage', 'get', 'days').schema).toMatchObject({ type: 'integer', enum: [7, 30, 90] });
    expect(param('/v1/address-watch/addresses', 'get', 'page').schema).toMatchObject({ type: 'integer' });
    expect(param('/v1/address-watch/addresses', 'get', 'per_page').schema).toMatchObject({ type: 'integer' });
  });

  it('declares the bounds the server enforces on every integer query parameter (the server is asked at each edge)', async () => {
    // per_page and limit once read as "0 to anything" in the document while the server took 1..200 / 1..500.
    const walked: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths) as Array<[string, Record<string, { parameters?: Array<{ name: string; in: string; schema: any }> }>]>) {
      // Routes under a path parameter need a real resource; their query schemas are the shared ones walked here.
      if (path.includes('{')) continue;
      for (const p of ops.get?.parameters?.filter((x) => x.in === 'query') ?? []) {
        const int = (p.schema.oneOf ?? [p.schema]).find((b: { type?: string }) => b.type === 'integer');
        if (!int) continue;
        const status = async (v: number) => (await m.call('GET', `${path}?${p.name}=${v}`)).status;
        const at = `${path}?${p.name}`;
        walked.push(at);
        if (int.enum) {
          for (const v of int.enum) expect(await status(v), `${at}=${v}`).toBe(200);
          expect(await status(Math.max(...int.enum) + 1), at).toBe(400);
          continue;
        }
        expect(int, `${at} declares both bounds`).toMatchObject({ minimum: expect.any(Number), maximum: expect.any(Number) });
        expect(await status(int.minimum), `${at}=${int.minimum} (minimum)`).toBe(200);
        expect(await status(int.maximum), `${at}=${int.maximum} (maximum)`).toBe(200);
        expect(await status(int.minimum - 1), `${at}=${int.minimum - 1} (below)`).toBe(400);
        expect(await status(int.maximum + 1), `${at}=${int.maximum + 1} (above)`).toBe(400);
      }
    }
    expect(walked.sort()).toEqual([
      '/v1/account/audit?before', '/v1/account/audit?limit', '/v1/account/usage?days', '/v1/address-watch/addresses?page', '/v1/address-watch/addresses?per_page',
      '/v1/address-watch/deliveries?before', '/v1/address-watch/deliveries?event_id', '/v1/address-watch/deliveries?limit',
      '/v1/address-watch/events?after', '/v1/address-watch/events?limit', '/v1/endpoints/usage?days',
      '/v1/payments?page', '/v1/payments?per_page', '/v1/payouts?page', '/v1/payouts?per_page',
    ]);
    const bounds = (path: string, name: string) => doc.paths[path].get.parameters.find((x: { name: string }) => x.name === name).schema;
    expect(bounds('/v1/address-watch/addresses', 'per_page')).toMatchObject({ type: 'integer', minimum: 1, maximum: 200 });
    expect(bounds('/v1/payments', 'per_page')).toMatchObject({ type: 'integer', minimum: 1, maximum: 200 });
    expect(bounds('/v1/address-watch/events', 'limit')).toMatchObject({ type: 'integer', minimum: 1, maximum: 500 });
  }, 60_000);

  it('lets a client send after=latest: the document\'s schema takes it, and so does the server', async () => {
    const schema = doc.paths['/v1/address-watch/events'].get.parameters.find((x: { name: string }) => x.name === 'after').schema;
    const validate = new Ajv2020({ strict: false }).compile(schema);
    expect(validate('latest'), JSON.stringify(schema)).toBe(true);
    expect(validate(42)).toBe(true);
    expect(validate('soon')).toBe(false);
    expect(validate(-1)).toBe(false);
    expect((await m.call('GET', '/v1/address-watch/events?after=latest')).status).toBe(200);
    expect((await m.call('GET', '/v1/address-watch/events?after=soon')).body).toEqual({ ok: false, error: 'after: must be an event id or "latest"' });
  });

  it('describes addresses, tokens, amounts and transactions of every family, Solana included', () => {
    // Keyed by family: a new family fails to typecheck here until the document describes it.
    const facts = {
      evm: { address: /EVM 0x hex/, token: /ERC-20 contract/, amount: /wei/ },
      stellar: { address: /Stellar account id/, token: /Stellar asset CODE:ISSUER/, amount: /stroops/ },
      utxo: { address: /Bitcoin-style/, token: /BTC/, amount: /satoshis/ },
      tron: { address: /Tron \(T\.\.\./, token: /TRC-20 contract/, amount: /sun/ },
      solana: { address: /Solana public key \(base58/, token: /Solana SPL mint \(base58\)/, amount: /lamports/ },
    } satisfies Record<NetworkFamily, Record<string, RegExp>>;
    const event = doc.components.schemas.WalletEvent.properties;
    const watchBody = doc.paths['/v1/address-watch/addresses'].post.requestBody.content['application/json'].schema;
    const address = (watchBody.$ref ? doc.components.schemas[watchBody.$ref.split('/').pop()] : watchBody).properties.address.description;
    for (const [family, f] of Object.entries(facts)) {
      expect(address, family).toMatch(f.address);
      expect(event.token.description, family).toMatch(f.token);
      expect(event.amount.description, family).toMatch(f.amount);
    }
    expect(event.tx_hash.description).toMatch(/Solana transaction signature/);
    expect(event.block_height.description).toMatch(/Solana slot/);
    expect(doc.components.schemas.BlockEvent.properties.block_height.description).toMatch(/Solana slot/);
  });

  it('PUT webhook answers without egress_ips; GET has them', () => {
    const put = doc.paths['/v1/address-watch/webhook'].put.responses['200'].content['application/json'].schema;
    const get = doc.paths['/v1/address-watch/webhook'].get.responses['200'].content['application/json'].schema;
    const resolve = (s: any) => (s.$ref ? doc.components.schemas[s.$ref.split('/').pop()] : s);
    expect(Object.keys(resolve(put).properties)).not.toContain('egress_ips');
    expect(Object.keys(resolve(get).properties)).toContain('egress_ips');
  });

  it('every route\'s real answer matches its declared schema', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ ...doc, $id: 'doc' });
    const pointer = (path: string, method: string, status: number) =>
      `doc#/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1').replaceAll('{', '%7B').replaceAll('}', '%7D')}/${method}/responses/${status}/content/application~1json/schema`;
    const checked = new Set<string>();
    const check = async (method: string, path: string, template: string, body?: unknown, status = 200) => {
      const r = await m.call(method, path, body === undefined ? '' : JSON.stringify(body));
      expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(status);
      const validate = ajv.getSchema(pointer(template, method.toLowerCase(), status));
      expect(validate, `${method} ${template} ${status} has a schema`).toBeTruthy();
      expect(validate!(r.body), `${method} ${template}: ${JSON.stringify(validate!.errors)}\n${JSON.stringify(r.body)}`).toBe(true);
      checked.add(`${method.toLowerCase()} ${template}`);
      return r.body;
    };

    const e = (await check('POST', '/v1/endpoints', '/v1/endpoints', { name: 'main', network_slug: 'eth', env_slug: 'mainnet' })).endpoint;
    await check('GET', '/v1/endpoints', '/v1/endpoints');
    await check('GET', '/v1/endpoints/available-networks', '/v1/endpoints/available-networks');
    await check('GET', '/v1/endpoints/usage?days=7', '/v1/endpoints/usage');
    await check('GET', `/v1/endpoints/${e.id}`, '/v1/endpoints/{id}');
    await check('GET', `/v1/endpoints/${e.id}/usage?days=90`, '/v1/endpoints/{id}/usage');
    await check('GET', `/v1/endpoints/${e.id}/logs?status=error&limit=5`, '/v1/endpoints/{id}/logs');
    await check('PATCH', `/v1/endpoints/${e.id}`, '/v1/endpoints/{id}', { name: 'renamed' });
    await check('PATCH', `/v1/endpoints/${e.id}/status`, '/v1/endpoints/{id}/status', { status: 'paused' });
    await check('PATCH', `/v1/endpoints/${e.id}/allowed-ips`, '/v1/endpoints/{id}/allowed-ips', { allowed_ips: ['203.0.113.9'] });
    await check('GET', '/v1/account', '/v1/account');
    await check('GET', '/v1/account/usage', '/v1/account/usage');
    await check('GET', '/v1/address-watch/account', '/v1/address-watch/account');
    const w = await check('POST', '/v1/address-watch/addresses', '/v1/address-watch/addresses', { network_slug: 'eth', address: '0x52908400098527886E0F7030069857D2E4169EE7' });
    await check('GET', '/v1/address-watch/addresses?page=1&per_page=10', '/v1/address-watch/addresses');
    await check('PUT', '/v1/address-watch/webhook', '/v1/address-watch/webhook', { url: rx.url, enabled: true });
    await check('GET', '/v1/address-watch/webhook', '/v1/address-watch/webhook');
    await check('POST', '/v1/address-watch/webhook/test', '/v1/address-watch/webhook/test', { type: 'payment', network: 'eth' });
    await rx.waitFor((all) => all.length >= 1, 10_000);
    // The receiver has it before the worker records the answer: wait for the delivered row.
    const delivered = await vi.waitFor(async () => {
      const deliveries = await check('GET', '/v1/address-watch/deliveries', '/v1/address-watch/deliveries');
      const found = deliveries.deliveries.find((d: { status: string }) => d.status === 'delivered');
      expect(found).toBeDefined();
      return found;
    }, { timeout: 10_000, interval: 100 });
    await check('POST', `/v1/address-watch/deliveries/${delivered.delivery_id}/redeliver`, '/v1/address-watch/deliveries/{delivery_id}/redeliver');

    // Payment orders: settings with an xpub, an order on a derived address, the list, cancel.
    const xpub = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
    await check('PUT', '/v1/payments/settings', '/v1/payments/settings', { xpubs: { evm: xpub } });
    await check('GET', '/v1/payments/settings', '/v1/payments/settings');
    const order = (await check('POST', '/v1/payments', '/v1/payments', { order_id: 'contract-1', network_slug: 'eth', amount: '0.5' })).payment;
    await check('GET', `/v1/payments/${order.payment_id}`, '/v1/payments/{payment_id}');
    await check('GET', '/v1/payments?status=pending', '/v1/payments');
    await check('POST', `/v1/payments/${order.payment_id}/cancel`, '/v1/payments/{payment_id}/cancel');
    // Refunds and payouts: a canceled order received nothing (409); a payout, listed, shown, refused where it cannot go, canceled.
    await check('POST', `/v1/payments/${order.payment_id}/refunds`, '/v1/payments/{payment_id}/refunds', { amount: 'full', address: '0x52908400098527886E0F7030069857D2E4169EE7' }, 409);
    await check('GET', `/v1/payments/${order.payment_id}/refunds`, '/v1/payments/{payment_id}/refunds');
    const payout = (await check('POST', '/v1/payouts', '/v1/payouts', { lines: [{ network: 'eth', address: '0x52908400098527886E0F7030069857D2E4169EE7', amount: '0.1', reference: 'inv-1' }] })).payout;
    await check('GET', '/v1/payouts?page=1&per_page=10', '/v1/payouts');
    await check('GET', `/v1/payouts/${payout.payout_id}`, '/v1/payouts/{payout_id}');
    await check('POST', `/v1/payouts/${payout.payout_id}/approve`, '/v1/payouts/{payout_id}/approve', undefined, 409);
    await check('POST', `/v1/payouts/${payout.payout_id}/transaction`, '/v1/payouts/{payout_id}/transaction', { signed_transaction: '0x02' }, 400);
    await check('GET', `/v1/payouts/${payout.payout_id}/psbt`, '/v1/payouts/{payout_id}/psbt', undefined, 400);
    await check('POST', `/v1/payouts/${payout.payout_id}/cancel`, '/v1/payouts/{payout_id}/cancel');

    // The feed with one event of each kind, as the recorder writes them.
    const now = new Date().toISOString();
    const wallet = {
      watch_id: w.watch_id, network: 'eth', address: w.address, tx_hash: `0x${'ab'.repeat(32)}`, block_height: 10, type: 'payment', direction: 'in',
      block_hash: `0x${'cd'.repeat(32)}`, from: `0x${'11'.repeat(20)}`, to: w.address, token: null, amount: '1000', log_index: null,
    };
    const block = { type: 'block', network: 'eth', block_height: 11, block_hash: `0x${'ef'.repeat(32)}`, tx_count: 1, transactions: [`0x${'12'.repeat(32)}`] };
    for (const body of [wallet, block]) {
      await t.store.db.insertInto('watch_events').values({
        account_id: m.userId, watch_id: body.type === 'block' ? null : w.watch_id, network_environment_id: 1, network: 'eth', type: body.type,
        block_height: body.block_height, block_hash: body.block_hash, body: JSON.stringify(body), removed: 0, created_at: now,
      }).execute();
    }
    const feed = await check('GET', '/v1/address-watch/events', '/v1/address-watch/events');
    expect(feed.events.map((x: { type: string }) => x.type)).toEqual(['payment', 'block']);
    await check('DELETE', '/v1/address-watch/addresses', '/v1/address-watch/addresses', { watch_id: w.watch_id });
    // The changes above, as the audit log tells them.
    const audit = await check('GET', '/v1/account/audit?limit=200&action=endpoint.', '/v1/account/audit');
    expect(audit.entries.map((x: { action: string }) => x.action)).toEqual(['endpoint.allowlist', 'endpoint.pause', 'endpoint.rename', 'endpoint.create']);

    const declared = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops as object).map((op) => `${op} ${p}`)).filter((k) => k !== 'get /v1/openapi.json');
    expect([...checked].sort()).toEqual(declared.sort());
  });
});

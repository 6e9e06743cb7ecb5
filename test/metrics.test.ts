import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { parseConfig } from '../src/config/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeEvm } from './helpers/fake-evm.js';
import { rawCall, startTestService, type Merchant, type TestService } from './helpers/service.js';
import { startTestService as startOff } from './helpers/service.js';
import { itUnless } from './helpers/skips.js';

const json = (o: unknown) => JSON.stringify(o);
let up: FakeEvm;
let t: TestService;
let m: Merchant;
let uuid: string;
let id: number;

beforeAll(async () => {
  up = await new FakeEvm().start();
  t = await startTestService({
    networks: [{ slug: 'eth', name: 'Ethereum', environments: [{ slug: 'main', upstreams: [`${up.url}/v2/PROVIDERKEY123`] }] }],
  });
  m = await t.merchant({ plan: 'free' });
  const ep = (await m.call('POST', '/v1/endpoints', json({ name: 'm', network_slug: 'eth', env_slug: 'main' }))).body.endpoint;
  uuid = ep.uuid;
  id = ep.id;
});
afterAll(async () => {
  await t?.stop();
  await up?.stop();
});

const scrape = async (base: string) => {
  const r = await rawCall(base, 'GET', '/metrics');
  expect(r.status).toBe(200);
  expect(String(r.headers['content-type'])).toMatch(/^text\/plain; version=0\.0\.4/);
  return r.body as string;
};
const value = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('GET /metrics', () => {
  it('is served on the metrics listener only: not on the gateway listener, not on the API listener without metrics.token', async () => {
    expect(await scrape(t.metricsUrl!)).toContain('# TYPE rpcctl_upstream_request_duration_seconds histogram');
    // The gateway's clients hold the endpoint URLs of every dApp: labels name networks and upstream hosts.
    expect((await rawCall(t.gatewayUrl, 'GET', '/metrics')).status).toBe(404);
    expect((await rawCall(t.baseUrl, 'GET', '/metrics')).status).toBe(404);
    expect((await rawCall(t.metricsUrl!, 'GET', '/other')).status).toBe(404);
    expect((await rawCall(t.baseUrl, 'GET', '/health')).body).toEqual({ ok: true, store: t.store.kind });
  });

  it('metrics.token serves /metrics on the API listener to Authorization: Bearer <token> alone (and asks it on the metrics listener too)', async () => {
    const token = 'a-long-enough-metrics-token';
    const withToken = await startOff({ metrics: { token } });
    try {
      const auth = { authorization: `Bearer ${token}` };
      for (const base of [withToken.baseUrl, withToken.metricsUrl!]) {
        const none = await rawCall(base, 'GET', '/metrics');
        expect(none.status).toBe(401);
        expect(none.headers['www-authenticate']).toBe('Bearer');
        expect((await rawCall(base, 'GET', '/metrics', undefined, { authorization: `Bearer ${token}x` })).status).toBe(401);
        const ok = await rawCall(base, 'GET', '/metrics', undefined, auth);
        expect(ok.status).toBe(200);
        expect(ok.body).toContain('rpcctl_gateway_requests_total');
      }
      expect((await rawCall(withToken.gatewayUrl, 'GET', '/metrics', undefined, auth)).status).toBe(404);
    } finally {
      await withToken.stop();
    }
  });

  it('metrics.listen: a taken address the operator chose stops the start; the default one taken costs a warning only', async () => {
    const holder = createServer().listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const port = (holder.address() as { port: number }).port;
    try {
      await expect(startOff({ metrics: { listen: `127.0.0.1:${port}` } })).rejects.toMatchObject({ code: 'E_ADDRESS_IN_USE', part: 'metrics', port });
    } finally {
      holder.close();
    }
    // The default address, taken (here, or by any other process on the machine): the service starts without it.
    const defaultHolder = createServer().listen(9464, '127.0.0.1');
    await new Promise<void>((resolve) => { defaultHolder.once('listening', resolve).once('error', () => resolve()); });
    try {
      const started = await startOff({ metrics: { listen: undefined } });
      expect(started.metricsUrl).toBeUndefined();
      await started.stop();
    } finally {
      defaultHolder.close();
    }
    expect(() => parseConfig({ metrics: { listen: '9464' } })).toThrow(/metrics\.listen.*host:port/s);
    expect(() => parseConfig({ metrics: { listen: '127.0.0.1:70000' } })).toThrow(/0-65535/);
    expect(() => parseConfig({ metrics: { token: 'short' } })).toThrow(/16 characters/);
    expect(parseConfig({ metrics: { listen: '[::1]:0' } }).metrics.listen).toBe('[::1]:0');
  });

  it('metrics.listen: false runs no metrics listener', async () => {
    const off = await startOff({ metrics: { listen: false } });
    try {
      expect(off.metricsUrl).toBeUndefined();
    } finally {
      await off.stop();
    }
  });

  it('counts requests and rejections by network and reason; upstream latency and failures by host only', async () => {
    const call = (path: string, body = json({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' })) => rawCall(t.gatewayUrl, 'POST', path, body, { 'content-type': 'application/json' });
    // The gateway's /metrics asked in the test above is an unmatched path like any other.
    const notFound = 'rpcctl_gateway_rejections_total{network="unknown",env="unknown",reason="not_found",transport="http"}';
    const notFoundBefore = value(await scrape(t.metricsUrl!), notFound) ?? 0;
    for (let i = 0; i < 3; i++) expect((await call(`/${uuid}`)).status).toBe(200);
    expect((await call(`/${uuid}`, 'nope')).status).toBe(400);
    expect((await call('/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    up.behaviour = 'fail500';
    expect((await call(`/${uuid}`)).status).toBe(502);
    // The node's own 400, passed on, is no refusal of the gateway's.
    up.behaviour = 'bad400';
    expect((await call(`/${uuid}`)).status).toBe(400);
    up.behaviour = 'ok';
    await m.call('PATCH', `/v1/endpoints/${id}/status`, json({ status: 'paused' }));
    expect((await call(`/${uuid}`)).status).toBe(403);
    await m.call('PATCH', `/v1/endpoints/${id}/status`, json({ status: 'active' }));

    const text = await scrape(t.metricsUrl!);
    expect(value(text, 'rpcctl_gateway_requests_total{network="eth",env="main",status="200"}')).toBe(3);
    expect(value(text, 'rpcctl_gateway_rejections_total{network="eth",env="main",reason="invalid_request",transport="http"}')).toBe(1);
    expect(value(text, 'rpcctl_gateway_rejections_total{network="eth",env="main",reason="paused",transport="http"}')).toBe(1);
    expect(value(text, notFound)! - notFoundBefore).toBe(1);
    const host = new URL(up.url).host;
    expect(value(text, `rpcctl_upstream_failures_total{network="eth",env="main",upstream="http://${host}",reason="http_5xx"}`)).toBe(1);
    expect(value(text, `rpcctl_upstream_request_duration_seconds_count{network="eth",env="main",upstream="http://${host}"}`)).toBeGreaterThanOrEqual(4);
    expect(text).not.toContain('PROVIDERKEY123');
    expect(text).not.toContain(uuid);
    expect(value(text, 'rpcctl_usage_flush_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(value(text, 'rpcctl_webhook_outbox_depth')).toBe(0);
    expect(text).toContain('rpcctl_store_query_duration_seconds_bucket');
    expect(text).toContain('rpcctl_process_cpu_seconds_total');
  });

  it('payment orders by status, counted in the store at scrape time, every status present', async () => {
    const before = await scrape(t.metricsUrl!);
    for (const s of ['pending', 'seen', 'underpaid', 'aml_check', 'paid', 'failed', 'expired']) expect(value(before, `rpcctl_payment_orders{status="${s}"}`), s).toBe(0);
    const payer = await t.merchant({ plan: 'basic' });
    const create = async (order_id: string, address: string) => {
      const r = await payer.call('POST', '/v1/payments', json({ order_id, network_slug: 'eth-main', amount: '1.5', address }));
      expect(r.status, json(r.body)).toBe(200);
      return r.body.payment.payment_id as string;
    };
    await create('m-1', '0x00000000000000000000000000000000000000a1');
    await create('m-2', '0x00000000000000000000000000000000000000a2');
    const third = await create('m-3', '0x00000000000000000000000000000000000000a3');
    expect((await payer.call('POST', `/v1/payments/${third}/cancel`)).status).toBe(200);
    const text = await scrape(t.metricsUrl!);
    expect(value(text, 'rpcctl_payment_orders{status="pending"}')).toBe(2);
    expect(value(text, 'rpcctl_payment_orders{status="failed"}')).toBe(1);
    expect(value(text, 'rpcctl_payment_orders{status="paid"}')).toBe(0);
    expect(text).toContain('# TYPE rpcctl_payment_orders gauge');
    // Low cardinality: one series per status, never an order or an account.
    expect(text.split('\n').filter((l) => l.startsWith('rpcctl_payment_orders{'))).toHaveLength(7);
  });

  it('metrics.enabled: false runs no metrics listener; a client outside metrics.allowed_ips gets 404', async () => {
    const disabled = await startOff({ metrics: { enabled: false, token: 'a-long-enough-metrics-token' } });
    try {
      expect(disabled.metricsUrl).toBeUndefined();
      expect((await rawCall(disabled.baseUrl, 'GET', '/metrics', undefined, { authorization: 'Bearer a-long-enough-metrics-token' })).status).toBe(404);
    } finally {
      await disabled.stop();
    }
    const outside = await startOff({ metrics: { allowed_ips: ['10.9.9.9'] } });
    try {
      expect((await rawCall(outside.metricsUrl!, 'GET', '/metrics')).status).toBe(404);
    } finally {
      await outside.stop();
    }
    const allowed = await startOff({ metrics: { allowed_ips: ['127.0.0.1'] } });
    try {
      expect((await rawCall(allowed.metricsUrl!, 'GET', '/metrics')).status).toBe(200);
    } finally {
      await allowed.stop();
    }
  });
});

const promtool = spawnSync('promtool', ['--version']).status === 0;

describe('metric names', () => {
  itUnless(!promtool && 'promtool is not installed (apt-get install prometheus)', 'pass promtool check metrics (Prometheus naming: counters end in _total, base units, no _total on gauges)', async () => {
    const text = await scrape(t.metricsUrl!);
    const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
    expect(r.status).toBe(0);
  });

  it('are every one listed in docs/operations.md, with the same type', async () => {
    const text = await scrape(t.metricsUrl!);
    const docs = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');
    const section = docs.slice(docs.indexOf('\n## Metrics'), docs.indexOf('\n## ', docs.indexOf('\n## Metrics') + 5));
    const families = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => ({ name: m[1]!, type: m[2]! }));
    expect(families.length).toBeGreaterThan(30);
    const missing = families.filter(({ name, type }) => {
      const row = section.split('\n').find((l) => l.startsWith('|') && l.includes(`\`${name}\``));
      return !row || !row.includes(`| ${type} |`);
    });
    expect(missing.map((f) => `${f.name} (${f.type})`)).toEqual([]);
  });
});

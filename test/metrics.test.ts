import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { rawCall, startTestService, type Merchant, type TestService } from './helpers/service.js';
import { startTestService as startOff } from './helpers/service.js';

const json = (o: unknown) => JSON.stringify(o);
let up: FakeUpstream;
let t: TestService;
let m: Merchant;
let uuid: string;
let id: number;

beforeAll(async () => {
  up = await new FakeUpstream().start();
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
  it('is served on both listeners, and /health too', async () => {
    expect(await scrape(t.baseUrl)).toContain('rpcctl_gateway_requests_total');
    expect(await scrape(t.gatewayUrl)).toContain('# TYPE rpcctl_upstream_request_duration_seconds histogram');
    expect((await rawCall(t.baseUrl, 'GET', '/health')).body).toEqual({ ok: true, store: t.store.kind });
  });

  it('counts requests and rejections by network and reason; upstream latency and failures by host only', async () => {
    const call = (path: string, body = json({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' })) => rawCall(t.gatewayUrl, 'POST', path, body, { 'content-type': 'application/json' });
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

    const text = await scrape(t.gatewayUrl);
    expect(value(text, 'rpcctl_gateway_requests_total{network="eth-main",status="200"}')).toBe(3);
    expect(value(text, 'rpcctl_gateway_rejections_total{network="eth-main",reason="invalid_request",transport="http"}')).toBe(1);
    expect(value(text, 'rpcctl_gateway_rejections_total{network="eth-main",reason="paused",transport="http"}')).toBe(1);
    expect(value(text, 'rpcctl_gateway_rejections_total{network="unknown",reason="not_found",transport="http"}')).toBe(1);
    const host = new URL(up.url).host;
    expect(value(text, `rpcctl_upstream_failures_total{network="eth-main",upstream="http://${host}",reason="http_5xx"}`)).toBe(1);
    expect(value(text, `rpcctl_upstream_request_duration_seconds_count{network="eth-main",upstream="http://${host}"}`)).toBeGreaterThanOrEqual(4);
    expect(text).not.toContain('PROVIDERKEY123');
    expect(text).not.toContain(uuid);
    expect(value(text, 'rpcctl_usage_flush_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(value(text, 'rpcctl_webhook_outbox_depth')).toBe(0);
    expect(text).toContain('rpcctl_store_query_duration_seconds_bucket');
    expect(text).toContain('rpcctl_process_cpu_seconds_total');
  });

  it('payment orders by status, counted in the store at scrape time, every status present', async () => {
    const before = await scrape(t.baseUrl);
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
    const text = await scrape(t.gatewayUrl);
    expect(value(text, 'rpcctl_payment_orders{status="pending"}')).toBe(2);
    expect(value(text, 'rpcctl_payment_orders{status="failed"}')).toBe(1);
    expect(value(text, 'rpcctl_payment_orders{status="paid"}')).toBe(0);
    expect(text).toContain('# TYPE rpcctl_payment_orders gauge');
    // Low cardinality: one series per status, never an order or an account.
    expect(text.split('\n').filter((l) => l.startsWith('rpcctl_payment_orders{'))).toHaveLength(7);
  });

  it('metrics.enabled: false, or a client outside metrics.allowed_ips, gets 404 on both listeners', async () => {
    for (const metrics of [{ enabled: false }, { allowed_ips: ['10.9.9.9'] }]) {
      const off = await startOff({ metrics });
      try {
        expect((await rawCall(off.baseUrl, 'GET', '/metrics')).status).toBe(404);
        expect((await rawCall(off.gatewayUrl, 'GET', '/metrics')).status).toBe(404);
      } finally {
        await off.stop();
      }
    }
    const allowed = await startOff({ metrics: { allowed_ips: ['127.0.0.1'] } });
    try {
      expect((await rawCall(allowed.gatewayUrl, 'GET', '/metrics')).status).toBe(200);
    } finally {
      await allowed.stop();
    }
  });
});

import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { ConfigInput } from '../src/config/index.js';
import { signatureHeaders } from '../src/client/signing.js';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { rawCall, testConfig } from './helpers/service.js';

/**
 * OpenTelemetry traces from a real `rpcctl serve`: an OTLP/HTTP receiver here takes the JSON
 * exports (no collector can be installed), an upstream in front of a fake EVM node records the
 * headers the gateway sends it, a webhook receiver records the deliveries'. One run with
 * tracing on at sampling 1.0; one at sampling 0 (nothing recorded, traceparents still sent);
 * one with nothing configured (and the OTel SDK's own environment variables pointing at the
 * receiver), which must export nothing.
 */
const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const traceImports = new URL('./helpers/trace-imports.mjs', import.meta.url).pathname;
const MASTER_KEY = randomBytes(32).toString('hex');
const COLLECTOR_TOKEN = `otlp-${randomBytes(12).toString('hex')}`;
const WATCHED = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const SENDER = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
/** The client's own trace: the gateway's span must be its child. */
const CLIENT_TRACE = randomBytes(16).toString('hex');
const CLIENT_SPAN = randomBytes(8).toString('hex');
/** The trace a WebSocket client sends on its upgrade request: each call on the socket is its child. */
const WS_TRACE = randomBytes(16).toString('hex');
const WS_SPAN = randomBytes(8).toString('hex');

interface OtlpValue { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number }
interface OtlpSpan { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes: Array<{ key: string; value: OtlpValue }>; status?: { code?: number } }
interface Export { headers: IncomingHttpHeaders; resources: Array<{ attributes: Record<string, unknown>; spans: OtlpSpan[] }> }

const SPAN_KIND = { internal: 1, server: 2, client: 3 };

/** A loopback OTLP/HTTP traces receiver (JSON encoding): every export kept with its headers. */
async function startCollector(): Promise<{ url: string; exports: Export[]; spans(): Array<OtlpSpan & { resource: Record<string, unknown> }>; close(): Promise<void> }> {
  const exports: Export[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: OtlpValue }> }; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
      };
      exports.push({
        headers: req.headers,
        resources: body.resourceSpans.map((r) => ({ attributes: attrs(r.resource.attributes), spans: r.scopeSpans.flatMap((s) => s.spans) })),
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports,
    spans: () => exports.flatMap((e) => e.resources.flatMap((r) => r.spans.map((s) => ({ ...s, resource: r.attributes })))),
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

function attrs(list: Array<{ key: string; value: OtlpValue }>): Record<string, unknown> {
  return Object.fromEntries(list.map(({ key, value }) => [key, value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.boolValue ?? value.doubleValue)]));
}

/** The fake node behind a relay that records each call's method and traceparent. */
async function startRecordingUpstream(target: string): Promise<{ url: string; seen: Array<{ method: string; traceparent: string | undefined }>; close(): Promise<void> }> {
  const t = new URL(target);
  const seen: Array<{ method: string; traceparent: string | undefined }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      try {
        const call = JSON.parse(body.toString('utf8')) as { method?: string } | Array<{ method?: string }>;
        seen.push({ method: Array.isArray(call) ? 'batch' : String(call.method), traceparent: req.headers.traceparent as string | undefined });
      } catch { /* not JSON: not recorded */ }
      const up = httpRequest({ host: t.hostname, port: t.port, path: '/', method: 'POST', headers: { 'content-type': 'application/json' } }, (r) => {
        res.writeHead(r.statusCode ?? 502, { 'content-type': 'application/json' });
        r.pipe(res);
      });
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

async function waitFor(what: string, check: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Running { proc: ResultPromise; api: string; gateway: string; out(): string; rpcctl(args: string[]): Promise<Record<string, any>> }

/** `rpcctl serve` on its own data dir with `config`; resolves once both listeners are named. */
async function serve(config: ConfigInput, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<Running> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-tracing-'));
  const configFile = join(dataDir, 'rpcctl.json');
  writeFileSync(configFile, JSON.stringify(config));
  const fullEnv = { NO_COLOR: '1', RPCCTL_MASTER_KEY: MASTER_KEY, ...env };
  const proc = execa(process.execPath, [...nodeArgs, bin, 'serve', '--config', configFile, '--data-dir', dataDir], { reject: false, all: true, env: fullEnv });
  let out = '';
  const [api, gateway] = await new Promise<[string, string]>((resolve, reject) => {
    proc.all!.on('data', (d: Buffer) => {
      out += d.toString();
      const a = /\bapi\s+(http:\/\/\S+)/.exec(out)?.[1];
      const g = /\bgateway\s+(http:\/\/\S+)/.exec(out)?.[1];
      if (a && g) resolve([a, g]);
    });
    proc.once('exit', () => reject(new Error(`serve exited early:\n${out}`)));
  });
  const rpcctl = async (args: string[]) => {
    const r = await execa(process.execPath, [bin, ...args, '--data-dir', dataDir, '--config', configFile, '--json'], { reject: false, env: fullEnv });
    expect(r.exitCode, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as Record<string, any>;
  };
  return { proc, api, gateway, out: () => out, rpcctl };
}

/** An account with an API key, and a signed call with it. */
async function signedCaller(s: Running): Promise<(method: string, path: string, body?: string) => Promise<{ status: number; body: any }>> {
  const { user_id } = await s.rpcctl(['admin', 'accounts', 'create', '--plan', 'pro']);
  const key = await s.rpcctl(['admin', 'keys', 'create', '--account', String(user_id)]);
  await s.rpcctl(['admin', 'webhook-secret', '--account', String(user_id)]);
  return (method, path, body = '') => {
    const headers = signatureHeaders({ apiKey: key.api_key, secret: key.secret, method, path, body });
    return rawCall(s.api, method, path, body, { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) });
  };
}

function network(upstream: string): NonNullable<ConfigInput['networks']> {
  return [{ slug: 'fake', name: 'Fake EVM', family: 'evm', environments: [{ slug: 'local', upstreams: [upstream], confirmations: 1 }] }];
}

const rpcBody = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_blockNumber', params: [] });

/** A JSON-RPC WebSocket client: every message it receives, parsed, in order. */
async function openSocket(url: string, headers: Record<string, string>): Promise<{ ws: WebSocket; received: any[] }> {
  const ws = new WebSocket(url, { headers });
  const received: any[] = [];
  ws.on('message', (data) => received.push(JSON.parse(String(data))));
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  return { ws, received };
}

describe('traces over OTLP/HTTP (sampling 1.0)', () => {
  let chain: FakeEvm;
  let upstream: Awaited<ReturnType<typeof startRecordingUpstream>>;
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let hooks: Receiver;
  let s: Running;
  let gatewayAnswer: { status: number; body: any };
  let minedHeight = 0;
  let endpointId = 0;
  let endpointUuid = '';
  let socketAnswers: any[] = [];

  beforeAll(async () => {
    chain = await startFakeEvmChain();
    [upstream, collector, hooks] = await Promise.all([startRecordingUpstream(chain.url), startCollector(), startReceiver()]);
    s = await serve(testConfig({
      webhooks: { allow_private_urls: true, timeout_ms: 2000 },
      networks: network(upstream.url),
      telemetry: { service_name: 'rpcctl-trace-test', sampling_ratio: 1, otlp: { endpoint: collector.url, headers_env: { 'x-collector-token': 'TEST_OTLP_TOKEN' } } },
    }), { TEST_OTLP_TOKEN: COLLECTOR_TOKEN });
    try {
      const call = await signedCaller(s);
      expect((await call('PUT', '/v1/address-watch/webhook', JSON.stringify({ url: hooks.url, enabled: true, events: { block: false } }))).status).toBe(200);
      expect((await call('POST', '/v1/address-watch/addresses', JSON.stringify({ network_slug: 'fake', address: WATCHED }))).status).toBe(200);
      const endpoint = (await call('POST', '/v1/endpoints', JSON.stringify({ name: 'traced', network_slug: 'fake', env_slug: 'local' }))).body.endpoint;
      endpointId = endpoint.id;
      endpointUuid = endpoint.uuid;

      gatewayAnswer = await rawCall(s.gateway, 'POST', `/${endpoint.uuid}`, rpcBody, {
        'content-type': 'application/json', traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
      });
      // Over WebSocket: a call, a batch and a subscription, each answered before the next.
      const socket = await openSocket(`${s.gateway.replace(/^http/, 'ws')}/${endpoint.uuid}`, { traceparent: `00-${WS_TRACE}-${WS_SPAN}-01` });
      socketAnswers = socket.received;
      const answered = (what: string, check: (m: any) => boolean) => waitFor(what, () => socket.received.some(check));
      socket.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }));
      await answered('the WebSocket call answered', (m) => m.id === 1);
      socket.ws.send(JSON.stringify([{ jsonrpc: '2.0', id: 2, method: 'eth_blockNumber', params: [] }, { jsonrpc: '2.0', id: 3, method: 'web3_clientVersion', params: [] }]));
      await answered('the WebSocket batch answered', (m) => Array.isArray(m));
      socket.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'eth_subscribe', params: ['newHeads'] }));
      await answered('the subscription made', (m) => m.id === 4);

      const { height } = chain.mine([{ from: SENDER, to: WATCHED, wei: 10n ** 18n }]);
      minedHeight = height;
      await hooks.waitFor((all) => all.some((r) => JSON.parse(r.body).type === 'payment'), 30_000);
      await waitFor('a newHeads notification', () => socket.received.some((m) => m.method === 'eth_subscription'), 30_000)
        .catch((err: Error) => { throw new Error(`${err.message}; received ${JSON.stringify(socket.received).slice(0, 2000)}`); });
      socket.ws.close();
      // Each thread exports within a second of a span's end (the batch's delay).
      await waitFor('the gateway call, its attempt, the delivery and the block exported', () => {
        const names = collector.spans().map((sp) => sp.name);
        return names.includes('eth_blockNumber') && names.includes('upstream eth_blockNumber') && names.includes('webhook delivery')
          && names.includes('eth_chainId') && names.includes('batch eth_blockNumber') && names.includes('eth_subscribe')
          && collector.spans().some((sp) => sp.name === 'scan block' && attrs(sp.attributes)['rpcctl.block.height'] === minedHeight);
      });
    } finally {
      s.proc.kill('SIGTERM');
      await s.proc;
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all([chain?.close(), upstream?.close(), collector?.close(), hooks?.close()]);
  });

  it('makes the gateway call a child of the client\'s traceparent, with its network, method, endpoint, upstream, attempts, cache and status', () => {
    expect(gatewayAnswer.status).toBe(200);
    const call = collector.spans().find((sp) => sp.name === 'eth_blockNumber' && sp.traceId === CLIENT_TRACE);
    expect(call, JSON.stringify(collector.spans().map((sp) => sp.name))).toBeDefined();
    expect(call!.parentSpanId).toBe(CLIENT_SPAN);
    expect(call!.kind).toBe(SPAN_KIND.server);
    expect(attrs(call!.attributes)).toMatchObject({
      'rpc.system': 'jsonrpc', 'rpc.method': 'eth_blockNumber', 'rpcctl.network': 'fake', 'rpcctl.environment': 'local',
      'rpcctl.endpoint.id': endpointId, 'rpcctl.upstream': upstream.url, 'rpcctl.attempts': 1, 'rpcctl.cache_hit': false,
      'http.response.status_code': 200,
    });
    expect(call!.resource['service.name']).toBe('rpcctl-trace-test');
    expect(String(call!.resource['rpcctl.thread'])).toMatch(/^gateway-\d+$/);
  });

  it('makes each upstream attempt a child span and sends the node its traceparent', () => {
    const call = collector.spans().find((sp) => sp.name === 'eth_blockNumber' && sp.traceId === CLIENT_TRACE)!;
    const attempt = collector.spans().find((sp) => sp.name === 'upstream eth_blockNumber' && sp.traceId === CLIENT_TRACE);
    expect(attempt).toBeDefined();
    expect(attempt!.parentSpanId).toBe(call.spanId);
    expect(attempt!.kind).toBe(SPAN_KIND.client);
    expect(attrs(attempt!.attributes)).toMatchObject({ 'rpcctl.upstream': upstream.url, 'http.response.status_code': 200 });
    // The node saw the trace, with the attempt as its parent.
    const sent = upstream.seen.filter((c) => c.traceparent?.includes(CLIENT_TRACE));
    expect(sent).toEqual([{ method: 'eth_blockNumber', traceparent: `00-${CLIENT_TRACE}-${attempt!.spanId}-01` }]);
  });

  it('makes each WebSocket call a child of the traceparent sent on the upgrade request, with the same attributes, and its attempt a child whose traceparent the node gets', () => {
    expect(socketAnswers.find((m) => m.id === 1)).toMatchObject({ result: '0x1e240' });
    const call = collector.spans().find((sp) => sp.name === 'eth_chainId' && sp.traceId === WS_TRACE);
    expect(call, JSON.stringify(collector.spans().map((sp) => sp.name))).toBeDefined();
    expect(call!.parentSpanId).toBe(WS_SPAN);
    expect(call!.kind).toBe(SPAN_KIND.server);
    expect(String(call!.resource['rpcctl.thread'])).toMatch(/^gateway-\d+$/);
    const callAttrs = attrs(call!.attributes);
    expect(callAttrs).toMatchObject({
      'rpc.system': 'jsonrpc', 'rpc.method': 'eth_chainId', 'rpcctl.transport': 'ws', 'rpcctl.network': 'fake', 'rpcctl.environment': 'local',
      'rpcctl.endpoint.id': endpointId, 'rpcctl.upstream': upstream.url, 'rpcctl.attempts': 1, 'rpcctl.cache_hit': false,
    });
    expect(callAttrs).not.toHaveProperty('rpc.jsonrpc.error_code');
    const attempt = collector.spans().find((sp) => sp.name === 'upstream eth_chainId' && sp.traceId === WS_TRACE);
    expect(attempt!.parentSpanId).toBe(call!.spanId);
    expect(attempt!.kind).toBe(SPAN_KIND.client);
    expect(upstream.seen).toContainEqual({ method: 'eth_chainId', traceparent: `00-${WS_TRACE}-${attempt!.spanId}-01` });
  });

  it('makes a WebSocket batch one span with its size, its upstream attempt a child', () => {
    expect(socketAnswers.find((m) => Array.isArray(m))).toHaveLength(2);
    const batch = collector.spans().find((sp) => sp.name === 'batch eth_blockNumber' && sp.traceId === WS_TRACE);
    expect(batch).toBeDefined();
    expect(batch!.parentSpanId).toBe(WS_SPAN);
    expect(attrs(batch!.attributes)).toMatchObject({ 'rpc.method': 'eth_blockNumber', 'rpcctl.batch_size': 2, 'rpcctl.transport': 'ws', 'rpcctl.attempts': 1, 'rpcctl.upstream': upstream.url });
    const attempt = collector.spans().find((sp) => sp.name === 'upstream batch' && sp.traceId === WS_TRACE);
    expect(attempt!.parentSpanId).toBe(batch!.spanId);
    expect(upstream.seen).toContainEqual({ method: 'batch', traceparent: `00-${WS_TRACE}-${attempt!.spanId}-01` });
  });

  it('makes an eth_subscribe one span, and neither its notifications nor its feed\'s polls any', () => {
    expect(socketAnswers.some((m) => m.method === 'eth_subscription')).toBe(true);
    const subscribe = collector.spans().find((sp) => sp.name === 'eth_subscribe' && sp.traceId === WS_TRACE);
    expect(subscribe!.parentSpanId).toBe(WS_SPAN);
    expect(attrs(subscribe!.attributes)).toMatchObject({ 'rpc.method': 'eth_subscribe', 'rpcctl.attempts': 0 });
    // The whole socket's trace: the three messages and the two upstream attempts, nothing from the feed.
    expect(collector.spans().filter((sp) => sp.traceId === WS_TRACE).map((sp) => sp.name).sort())
      .toEqual(['batch eth_blockNumber', 'eth_chainId', 'eth_subscribe', 'upstream batch', 'upstream eth_chainId']);
    // The feed's polls over HTTP start no trace of their own either: every gateway span is in a client's trace.
    const gatewaySpans = collector.spans().filter((sp) => String(sp.resource['rpcctl.thread']).startsWith('gateway-'));
    expect(gatewaySpans.filter((sp) => sp.traceId !== WS_TRACE && sp.traceId !== CLIENT_TRACE).map((sp) => sp.name)).toEqual([]);
  });

  it('never puts the endpoint\'s UUID in a span', () => {
    expect(endpointUuid).toMatch(/^[0-9a-f-]{36}$/);
    for (const e of collector.exports) expect(JSON.stringify(e.resources)).not.toContain(endpointUuid);
  });

  it('makes a span of each Public API route, named by its template', () => {
    const routes = collector.spans().filter((sp) => sp.kind === SPAN_KIND.server && sp.resource['rpcctl.thread'] === 'main').map((sp) => ({ name: sp.name, ...attrs(sp.attributes) }));
    expect(routes).toContainEqual(expect.objectContaining({ name: 'PUT /v1/address-watch/webhook', 'http.route': '/v1/address-watch/webhook', 'http.response.status_code': 200 }));
    expect(routes).toContainEqual(expect.objectContaining({ name: 'POST /v1/endpoints', 'http.response.status_code': 200 }));
  });

  it('makes a span of each webhook delivery and sends its traceparent with it', () => {
    const delivered = hooks.received.find((r) => JSON.parse(r.body).type === 'payment')!;
    const delivery = collector.spans().find((sp) => sp.name === 'webhook delivery' && attrs(sp.attributes)['rpcctl.webhook.id'] === delivered.headers['x-webhook-id']);
    expect(delivery).toBeDefined();
    expect(delivered.headers.traceparent).toBe(`00-${delivery!.traceId}-${delivery!.spanId}-01`);
    expect(attrs(delivery!.attributes)).toMatchObject({ 'http.response.status_code': 200, 'server.address': `127.0.0.1:${hooks.port}` });
  });

  it('makes a span of each scanned block', () => {
    const block = collector.spans().find((sp) => sp.name === 'scan block' && attrs(sp.attributes)['rpcctl.block.height'] === minedHeight);
    expect(attrs(block!.attributes)).toMatchObject({ 'rpcctl.network': 'fake', 'rpcctl.environment': 'local', 'rpcctl.block.hits': 1, 'rpcctl.block.recorded': true, 'rpcctl.deliveries': 1 });
    expect(block!.kind).toBe(SPAN_KIND.internal);
  });

  it('sends the configured headers with each export and never prints their values', () => {
    expect(collector.exports.length).toBeGreaterThan(0);
    for (const e of collector.exports) expect(e.headers['x-collector-token']).toBe(COLLECTOR_TOKEN);
    expect(s.out()).not.toContain(COLLECTOR_TOKEN);
  });
});

describe('traces at sampling 0', () => {
  it('records nothing and still sends the node each call\'s trace, marked not sampled (HTTP, with and without a client traceparent, and WebSocket)', async () => {
    const chain = await startFakeEvmChain();
    const [upstream, collector] = await Promise.all([startRecordingUpstream(chain.url), startCollector()]);
    const unsampled = randomBytes(16).toString('hex');
    try {
      const s = await serve(testConfig({ networks: network(upstream.url), telemetry: { sampling_ratio: 0, otlp: { endpoint: collector.url } } }));
      try {
        const call = await signedCaller(s);
        const endpoint = (await call('POST', '/v1/endpoints', JSON.stringify({ name: 'unsampled', network_slug: 'fake', env_slug: 'local' }))).body.endpoint;
        const send = async (method: string, traceparent?: string) => {
          const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] });
          const answer = await rawCall(s.gateway, 'POST', `/${endpoint.uuid}`, body, { 'content-type': 'application/json', ...(traceparent ? { traceparent } : {}) });
          expect(answer.status).toBe(200);
        };
        await send('eth_blockNumber', `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`);
        await send('eth_chainId', `00-${unsampled}-${CLIENT_SPAN}-00`);
        await send('web3_clientVersion');
        const socket = await openSocket(`${s.gateway.replace(/^http/, 'ws')}/${endpoint.uuid}`, { traceparent: `00-${WS_TRACE}-${WS_SPAN}-01` });
        socket.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'net_version', params: [] }));
        await waitFor('the WebSocket call answered', () => socket.received.some((m) => m.id === 1));
        socket.ws.close();
      } finally {
        // A stop exports whatever is left: after it, nothing more can come.
        s.proc.kill('SIGTERM');
        await s.proc;
      }
      const sent = (trace: string) => upstream.seen.filter((c) => c.traceparent?.includes(trace));
      // The client's trace goes on with our span as the parent; the flags say ours: not sampled.
      const ours = (trace: string) => expect.stringMatching(new RegExp(`^00-${trace}-(?!${CLIENT_SPAN}|${WS_SPAN}|0{16})[0-9a-f]{16}-00$`));
      expect(sent(CLIENT_TRACE)).toEqual([{ method: 'eth_blockNumber', traceparent: ours(CLIENT_TRACE) }]);
      expect(sent(unsampled)).toEqual([{ method: 'eth_chainId', traceparent: ours(unsampled) }]);
      expect(sent(WS_TRACE)).toEqual([{ method: 'net_version', traceparent: ours(WS_TRACE) }]);
      // No client trace: a new one, not sampled either.
      expect(upstream.seen.filter((c) => c.method === 'web3_clientVersion')).toEqual([
        { method: 'web3_clientVersion', traceparent: expect.stringMatching(/^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-00$/) },
      ]);
      expect(collector.spans()).toEqual([]);
    } finally {
      await Promise.all([chain.close(), upstream.close(), collector.close()]);
    }
  }, 120_000);
});

describe('traces off by default', () => {
  it('exports nothing, loads no OpenTelemetry code and sends no traceparent upstream (HTTP or WebSocket), even with the OTel SDK\'s own variables set', async () => {
    const chain = await startFakeEvmChain();
    const [upstream, collector] = await Promise.all([startRecordingUpstream(chain.url), startCollector()]);
    const loaded = join(mkdtempSync(join(tmpdir(), 'rpcctl-tracing-imports-')), 'loaded.txt');
    try {
      const s = await serve(testConfig({ networks: network(upstream.url) }), {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces`, OTEL_TRACES_SAMPLER: 'always_on',
        RPCCTL_TRACE_IMPORTS: loaded,
      }, ['--import', traceImports]);
      try {
        const call = await signedCaller(s);
        const endpoint = (await call('POST', '/v1/endpoints', JSON.stringify({ name: 'untraced', network_slug: 'fake', env_slug: 'local' }))).body.endpoint;
        const answer = await rawCall(s.gateway, 'POST', `/${endpoint.uuid}`, rpcBody, { 'content-type': 'application/json', traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` });
        expect(answer.status).toBe(200);
        const socket = await openSocket(`${s.gateway.replace(/^http/, 'ws')}/${endpoint.uuid}`, { traceparent: `00-${WS_TRACE}-${WS_SPAN}-01` });
        socket.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }));
        await waitFor('the WebSocket call answered', () => socket.received.some((m) => m.id === 1));
        socket.ws.close();
      } finally {
        // A stop exports whatever is left: after it, nothing more can come.
        s.proc.kill('SIGTERM');
        await s.proc;
      }
      expect(upstream.seen.some((c) => c.method === 'eth_blockNumber') && upstream.seen.some((c) => c.method === 'eth_chainId')).toBe(true);
      expect(upstream.seen.filter((c) => c.traceparent !== undefined)).toEqual([]);
      expect(collector.exports).toEqual([]);
      // The main thread's modules (a gateway worker loads a subset of the same tree). The API
      // package alone may be there: the redis client loads it for its own optional
      // instrumentation (a no-op: nothing registers a global provider).
      const modules = readFileSync(loaded, 'utf8').split('\n');
      expect(modules.some((m) => m.includes('/dist/serve/service.js'))).toBe(true);
      expect(modules.filter((m) => /@opentelemetry\/(?!api\/)/.test(m) || m.includes('/telemetry/otel.js'))).toEqual([]);
    } finally {
      await Promise.all([chain.close(), upstream.close(), collector.close()]);
    }
  }, 120_000);

  it('refuses to start when a header\'s environment variable is missing, naming it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-tracing-'));
    const configFile = join(dataDir, 'rpcctl.json');
    writeFileSync(configFile, JSON.stringify(testConfig({ telemetry: { otlp: { endpoint: 'http://127.0.0.1:1', headers_env: { authorization: 'NO_SUCH_OTLP_VAR' } } } })));
    const r = await execa(process.execPath, [bin, 'serve', '--config', configFile, '--data-dir', dataDir], { reject: false, env: { NO_COLOR: '1', RPCCTL_MASTER_KEY: MASTER_KEY } });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain('NO_SUCH_OTLP_VAR');
  }, 60_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { request } from 'undici';
import { signatureHeaders } from '../src/client/signing.js';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { rawHttp } from './helpers/raw-http.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

// Property: whatever arrives (methods, paths, headers, bodies, signed or not), both listeners
// answer with a status below 500, within a bound, and stay up. Seeded, so a failure replays.
let t: TestService;
let eth: FakeUpstream;
let horizon: FakeUpstream;
let m: Merchant;
let evmUuid: string;
let xlmUuid: string;
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const BOUND_MS = 5000;

beforeAll(async () => {
  [eth, horizon] = await Promise.all([new FakeUpstream().start(), new FakeUpstream().start()]);
  horizon.respond = (_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{}'); return true; };
  t = await startTestService({
    api: { body_timeout_ms: 300, max_body_bytes: 8192 },
    gateway: { body_timeout_ms: 300, max_body_bytes: 8192, probe_interval_ms: 60_000, upstream_timeout_ms: 1000 },
    networks: [
      { id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [eth.url] }] },
      { id: 7, slug: 'stellar', name: 'Stellar', family: 'stellar', environments: [{ id: 11, slug: 'mainnet', upstreams: [`${horizon.url}/key`] }] },
    ],
  });
  m = await t.merchant();
  evmUuid = (await m.call('POST', '/v1/endpoints', '{"name":"e","network_environment_id":1}')).body.endpoint.uuid;
  xlmUuid = (await m.call('POST', '/v1/endpoints', '{"name":"x","network_environment_id":11}')).body.endpoint.uuid;
});
afterAll(async () => {
  await t.stop();
  await Promise.all([eth.stop(), horizon.stop()]);
});

const method = fc.oneof(
  { weight: 9, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS') },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Z]{1,10}$/) },
);
const segment = fc.oneof(
  fc.constantFrom('', '.', '..', '%2e%2e', '%2f', '%5c', '..;', '%252e', '%', '%zz', '%00', '%ff', 'ledgers', 'transactions', 'usage', 'status', '1', '0', '-1', '99999999999999999999'),
  fc.string({ maxLength: 12 }).map((s) => encodeURIComponent(s)),
  fc.string({ unit: 'grapheme-ascii', maxLength: 8 }).map((s) => s.replace(/[\s#]/g, '')),
);
const suffix = fc.array(segment, { maxLength: 5 }).map((segs) => segs.join('/'));
const query = fc.option(fc.string({ maxLength: 20 }).map((s) => `?${encodeURIComponent(s)}=${s.length}`), { nil: '' });
const headerValue = fc.oneof(
  { weight: 9, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 40 }) },
  // Now and then a byte the parser must refuse.
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 10 }).map((s) => s.replace(/[\r\n]/g, '')) },
);
const headers = fc.array(fc.tuple(fc.oneof(
  fc.constantFrom('content-type', 'x-api-key', 'x-timestamp', 'x-signature', 'x-forwarded-for', 'accept', 'origin'),
  fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/),
), headerValue), { maxLength: 6 });
const body = fc.oneof(
  fc.constant(''),
  fc.json({ maxDepth: 3 }),
  fc.constantFrom('{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}', '[{"jsonrpc":"2.0","id":1,"method":"eth_call"},1,null]', '[]', '{"name":"\\ud800"}', '{"status":"paused"}'),
  fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString('latin1')),
);

interface Case { method: string; path: string; headers: Array<[string, string]>; body: string; sign: boolean; lie: number }

function build(c: Case): Buffer {
  const bytes = Buffer.from(c.body, 'latin1');
  const lines = [`${c.method} ${c.path} HTTP/1.1`, 'host: 127.0.0.1', 'connection: close'];
  const names = new Set(c.headers.map(([n]) => n));
  if (c.sign) {
    const signed = signatureHeaders({ apiKey: m.apiKey, secret: m.secret, method: c.method, path: c.path.split('?')[0]!, body: c.body });
    for (const [k, v] of Object.entries(signed)) if (!names.has(k)) lines.push(`${k}: ${v}`);
  }
  for (const [n, v] of c.headers) if (n !== 'transfer-encoding' && n !== 'content-length') lines.push(`${n}: ${v}`);
  // Sometimes a Content-Length that does not match the body: the reader must time out or cut off, not hang.
  if (c.method !== 'GET' || bytes.length > 0) lines.push(`content-length: ${Math.max(0, bytes.length + c.lie)}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), bytes]);
}

async function property(base: () => string, prefixes: () => string[]) {
  await fc.assert(fc.asyncProperty(
    method, fc.nat({ max: 100 }), suffix, query, headers, body, fc.boolean(), fc.constantFrom(0, 0, 0, -1, 5),
    async (meth, pick, rest, q, hs, b, sign, lie) => {
      const list = prefixes();
      // Half the time exactly a known route, so signed requests get to validation and handlers.
      const path = `${list[pick % list.length]}${pick % 2 === 0 ? '' : rest}${q}`;
      const started = Date.now();
      const answer = await rawHttp(base(), build({ method: meth, path, headers: hs, body: b, sign, lie }), BOUND_MS);
      expect(answer.status, `${meth} ${path}`).toBeLessThan(500);
      expect(Date.now() - started).toBeLessThan(BOUND_MS);
    },
  ), { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED ?? 9), endOnFailure: true });
  // Still up.
  expect((await request(`${base()}/health`)).statusCode).toBeLessThan(500);
}

describe('fuzz: random requests get an answer below 500 in time', () => {
  it('gateway', async () => {
    await property(() => t.gatewayUrl, () => [`/${evmUuid}`, `/${evmUuid}/`, `/${xlmUuid}/`, `/${xlmUuid}`, '/', '/health', `/${evmUuid.slice(0, 30)}`]);
  }, 180_000);
  it('public API', async () => {
    await property(() => t.baseUrl, () => [
      '/v1/endpoints', '/v1/endpoints/', '/v1/account', '/v1/account/usage', '/v1/endpoints/usage', '/v1/endpoints/1', '/v1/endpoints/1/status',
      '/v1/endpoints/1/allowed-ips', '/v1/address-watch/addresses', '/v1/address-watch/webhook', '/v1/address-watch/webhook/test',
      '/v1/address-watch/events', '/v1/address-watch/deliveries', '/v1/', '/', '/v1/openapi.json',
    ]);
  }, 180_000);
});

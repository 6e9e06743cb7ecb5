import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { connect, type Socket } from 'node:net';
import { request } from 'undici';
import { setLogin } from '../src/cabinet/index.js';
import { signatureHeaders } from '../src/client/signing.js';
import { FakeEvm } from './helpers/fake-evm.js';
import { rawHttp } from './helpers/raw-http.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

// Property: whatever arrives (methods, paths, headers, bodies, signed or not), both listeners
// answer with a status below 500, within a bound, and stay up. Seeded, so a failure replays.
let t: TestService;
let eth: FakeEvm;
let horizon: FakeEvm;
let m: Merchant;
let evmUuid: string;
let xlmUuid: string;
let sessionCookie: string;
const PASSWORD = 'a long enough password';
const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const BOUND_MS = 5000;
const MAX_BODY = 8192;

beforeAll(async () => {
  [eth, horizon] = await Promise.all([new FakeEvm().start(), new FakeEvm().start()]);
  horizon.respond = (_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{}'); return true; };
  t = await startTestService({
    api: { body_timeout_ms: 300, max_body_bytes: MAX_BODY },
    gateway: { body_timeout_ms: 300, max_body_bytes: MAX_BODY, probe_interval_ms: 60_000, upstream_timeout_ms: 1000 },
    networks: [
      { id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [eth.url] }] },
      { id: 7, slug: 'stellar', name: 'Stellar', family: 'stellar', environments: [{ id: 11, slug: 'mainnet', upstreams: [`${horizon.url}/key`] }] },
    ],
  }, { cabinet: { signIn: { perIpPerMinute: 100_000, perEmailPerMinute: 100_000 } } });
  m = await t.merchant();
  evmUuid = (await m.call('POST', '/v1/endpoints', '{"name":"e","network_environment_id":1}')).body.endpoint.uuid;
  xlmUuid = (await m.call('POST', '/v1/endpoints', '{"name":"x","network_environment_id":11}')).body.endpoint.uuid;
  await setLogin(t.store, m.userId, { email: 'fuzz@example.com', password: PASSWORD });
  const signIn = await request(`${t.baseUrl}/login`, {
    method: 'POST', body: new URLSearchParams({ email: 'fuzz@example.com', password: PASSWORD }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  await signIn.body.dump();
  sessionCookie = String(signIn.headers['set-cookie']).split(';')[0]!;
  expect((await m.call('PUT', '/v1/payments/settings', JSON.stringify({ xpubs: { evm: XPUB } }))).status).toBe(200);
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

// Issue 21: hostile input the properties above did not reach. Each property also holds the
// answer to what it must be, not only to "below 500".

const SEED = Number(process.env.FUZZ_SEED ?? 9);

/** JSON nested `depth` levels, arrays or objects, around a value. */
const deepJson = fc.record({
  depth: fc.oneof(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1000, max: 200_000 })),
  kind: fc.constantFrom('array', 'object', 'mixed'),
}).map(({ depth, kind }) => {
  const opens: string[] = [];
  const closes: string[] = [];
  for (let i = 0; i < depth; i++) {
    const array = kind === 'array' || (kind === 'mixed' && i % 2 === 0);
    opens.push(array ? '[' : '{"a":');
    closes.push(array ? ']' : '}');
  }
  return { depth, text: `${opens.join('')}1${closes.reverse().join('')}` };
});

describe('fuzz: deep nesting is a 400 naming the limit, never a 500', () => {
  it('API JSON routes and the gateway', async () => {
    const routes = [['POST', '/v1/endpoints'], ['POST', '/v1/payments'], ['PUT', '/v1/address-watch/webhook'], ['PATCH', '/v1/endpoints/1']] as const;
    await fc.assert(fc.asyncProperty(deepJson, fc.nat(), fc.boolean(), async ({ depth, text }, pick, wrapped) => {
      const [meth, path] = routes[pick % routes.length]!;
      // Wrapping adds a level: the limit is on the body's whole depth. Over max_body_bytes, size is refused first.
      const tooDeep = depth + (wrapped ? 1 : 0) > 128;
      const body = wrapped ? `{"name":${text}}` : text;
      const api = await m.call(meth, path, body);
      if (body.length > MAX_BODY) expect(api.status).toBe(413);
      else if (tooDeep) expect([api.status, api.body.error]).toEqual([400, expect.stringMatching(/nested deeper than 128 levels/)]);
      else expect(api.status, `${meth} ${path} depth ${depth}`).toBeLessThan(500);
      const rpc = wrapped ? `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":${text}}` : text;
      const gw = await request(`${t.gatewayUrl}/${evmUuid}`, { method: 'POST', body: rpc, headers: { 'content-type': 'application/json' } });
      const answer = await gw.body.text();
      expect(gw.statusCode, `gateway depth ${depth}`).toBeLessThan(500);
      if (tooDeep && rpc.length <= MAX_BODY) {
        expect(gw.statusCode).toBe(400);
        expect(answer).toMatch(/nested deeper than 128 levels/);
      }
    }), { numRuns: Math.ceil(RUNS / 3), seed: SEED, endOnFailure: true });
  }, 180_000);
});

/** Text a browser might turn into another host: slashes, backslashes, controls, schemes, look-alikes. */
const nextValue = fc.oneof(
  // The shapes that have worked against sign-in pages: a slash, something a browser drops or reads as a slash, a host.
  fc.tuple(fc.constantFrom('/', '\\', ' /', '\t/'), fc.constantFrom('\t', '\n', '\r', '\x0b', '/', '\\', '%09', '%2F', '\t\n'), fc.constantFrom('/evil.example', 'evil.example', '/x'))
    .map((parts) => parts.join('')),
  fc.array(fc.constantFrom('/', '//', '\\', '\t', '\n', '\r', '\x0b', '\x00', '\x7f', ' ', '.', '..', '%2F', '%5C', '%09', '@', ':', '?', '#',
    'evil.example', 'http:', 'https:', 'javascript:', '\uff0f', '\u3002', '\u2028', 'é', 'x'), { maxLength: 8 }).map((parts) => parts.join('')),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ maxLength: 30 }).map((s) => `/${s}`),
);

/** Where a browser goes with this Location, seen from the cabinet's own origin. */
function sameOrigin(location: string): boolean {
  return new URL(location, 'http://cabinet.example').origin === 'http://cabinet.example';
}

describe('fuzz: the cabinet\'s next never leaves the site and never breaks the answer', () => {
  it('signed in, GET /login?next=...', async () => {
    await fc.assert(fc.asyncProperty(nextValue, async (next) => {
      const res = await request(`${t.baseUrl}/login?next=${encodeURIComponent(next)}`, { headers: { cookie: sessionCookie } });
      await res.body.dump();
      expect(res.statusCode, JSON.stringify(next)).toBe(303);
      const location = String(res.headers.location);
      expect(location, JSON.stringify(next)).toMatch(/^\/[\x21-\x7e]*$/);
      expect(sameOrigin(location), `${JSON.stringify(next)} -> ${location}`).toBe(true);
    }), { numRuns: RUNS, seed: SEED, endOnFailure: true });
  }, 180_000);

  it('the sign-in POST', async () => {
    // Every run checks a password (scrypt): fewer runs.
    await fc.assert(fc.asyncProperty(nextValue, async (next) => {
      const res = await request(`${t.baseUrl}/login`, {
        method: 'POST', body: new URLSearchParams({ email: 'fuzz@example.com', password: PASSWORD, next }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' }, headersTimeout: BOUND_MS,
      });
      await res.body.dump();
      expect(res.statusCode, JSON.stringify(next)).toBe(303);
      expect(sameOrigin(String(res.headers.location)), JSON.stringify(next)).toBe(true);
    }), { numRuns: Math.ceil(RUNS / 6), seed: SEED, endOnFailure: true });
  }, 180_000);
});

const metadataKey = fc.oneof({ weight: 8, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) }, { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype') });
const metadata = fc.dictionary(metadataKey, fc.oneof(
  fc.jsonValue({ maxDepth: 3, stringUnit: 'grapheme' }),
  fc.dictionary(metadataKey, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  // Around the limit in UTF-8 but not in UTF-16: 1 to 4 bytes a character.
  fc.tuple(fc.constantFrom('a', 'é', '€', '😀'), fc.integer({ min: 500, max: 4200 })).map(([c, n]) => c.repeat(Math.floor(n / Buffer.byteLength(c)))),
), { maxKeys: 5 });

function hasProtoKey(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasProtoKey);
  if (v === null || typeof v !== 'object') return false;
  return Object.hasOwn(v, '__proto__') || Object.values(v).some(hasProtoKey);
}

describe('fuzz: payment metadata is kept exactly, or refused naming why', () => {
  it('POST /v1/payments', async () => {
    let n = 0;
    await fc.assert(fc.asyncProperty(metadata, async (meta) => {
      // As the wire carries it: a __proto__ key made by fc.dictionary is an own property, as JSON.parse makes it.
      const json = JSON.stringify(meta);
      const body = `{"order_id":"fuzz-${n++}","network_slug":"eth","amount":"1","metadata":${json}}`;
      const res = await m.call('POST', '/v1/payments', body);
      if (Buffer.byteLength(body) > MAX_BODY) {
        expect(res.status).toBe(413);
        return;
      }
      const sent = JSON.parse(json) as unknown;
      const bytes = Buffer.byteLength(json);
      if (bytes > 4096 || hasProtoKey(sent)) {
        expect(res.status, json.slice(0, 200)).toBe(400);
        expect(res.body.error).toMatch(bytes > 4096 ? /metadata: must be at most 4096 bytes of JSON \(UTF-8\)/ : /metadata: the key "__proto__" is not allowed/);
        return;
      }
      expect(res.status, `${json.slice(0, 200)} ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.payment.metadata).toEqual(sent);
      // The order holds a watched-address slot: give it back.
      expect((await m.call('POST', `/v1/payments/${res.body.payment.payment_id}/cancel`, '')).status).toBe(200);
    }), { numRuns: RUNS, seed: SEED, endOnFailure: true });
  }, 180_000);
});

/** A client frame as RFC 6455 has it (masked), with whatever header bits the case asks for. */
function frame(opcode: number, payload: Buffer, opts: { fin?: boolean; rsv?: number; masked?: boolean; lie?: number } = {}): Buffer {
  const masked = opts.masked ?? true;
  const len = payload.length + (opts.lie ?? 0);
  const head = [((opts.fin ?? true) ? 0x80 : 0) | ((opts.rsv ?? 0) << 4) | opcode];
  const ext: number[] = [];
  if (len < 126) head.push((masked ? 0x80 : 0) | len);
  else if (len < 65536) { head.push((masked ? 0x80 : 0) | 126); ext.push(len >> 8, len & 0xff); }
  else { head.push((masked ? 0x80 : 0) | 127); const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(len)); ext.push(...b); }
  const key = masked ? Buffer.from([0x12, 0x34, 0x56, 0x78]) : Buffer.alloc(0);
  const body = masked ? Buffer.from(payload.map((byte, i) => byte ^ key[i % 4]!)) : payload;
  return Buffer.concat([Buffer.from(head), Buffer.from(ext), key, body]);
}

interface WsOutcome { texts: string[]; closeCode: number | undefined; ended: boolean }

/** Opens a raw WebSocket, sends `bytes`, and collects what comes back until close or `quietMs`. */
function rawWs(path: string, bytes: Buffer, quietMs: number): Promise<WsOutcome> {
  const { hostname, port } = new URL(t.gatewayUrl);
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(port), hostname);
    let buf = Buffer.alloc(0);
    let upgraded = false;
    const out: WsOutcome = { texts: [], closeCode: undefined, ended: false };
    let timer: NodeJS.Timeout | undefined;
    const finish = () => { clearTimeout(timer); socket.destroy(); resolve(out); };
    const quiet = () => { clearTimeout(timer); timer = setTimeout(finish, quietMs); };
    socket.on('error', () => {});
    socket.on('close', () => { out.ended = true; if (!upgraded) reject(new Error(`no upgrade: ${buf.toString('latin1').slice(0, 200)}`)); else finish(); });
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!upgraded) {
        const split = buf.indexOf('\r\n\r\n');
        if (split === -1) return;
        const head = buf.subarray(0, split).toString('latin1');
        if (!head.startsWith('HTTP/1.1 101')) return reject(new Error(`no upgrade: ${head}`));
        upgraded = true;
        buf = buf.subarray(split + 4);
        socket.write(bytes);
        quiet();
      }
      // Server frames are unmasked: opcode, length, payload.
      for (;;) {
        if (buf.length < 2) break;
        let len = buf[1]! & 0x7f;
        let at = 2;
        if (len === 126) { if (buf.length < 4) break; len = buf.readUInt16BE(2); at = 4; }
        else if (len === 127) { if (buf.length < 10) break; len = Number(buf.readBigUInt64BE(2)); at = 10; }
        if (buf.length < at + len) break;
        const opcode = buf[0]! & 0x0f;
        const payload = buf.subarray(at, at + len);
        if (opcode === 1) out.texts.push(payload.toString('utf8'));
        if (opcode === 8) { out.closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005; return finish(); }
        buf = buf.subarray(at + len);
      }
      if (upgraded) quiet();
    });
    socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n`);
  });
}

const textPayload = fc.oneof(
  fc.json({ maxDepth: 3 }).map((s) => Buffer.from(s)),
  fc.constantFrom('{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}', '[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},1]', '[]', '{', 'null', '{"id":{"a":1}}')
    .map((s) => Buffer.from(s)),
  deepJson.map(({ text }) => Buffer.from(`{"jsonrpc":"2.0","id":7,"method":"eth_call","params":${text}}`)),
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
);
const wsFrames = fc.array(fc.oneof(
  { weight: 6, arbitrary: textPayload.map((p) => frame(1, p)) },
  { weight: 1, arbitrary: textPayload.map((p) => frame(2, p)) },
  // Against the protocol: reserved opcodes and bits, unmasked, fragmented or long control frames, a length that lies.
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 7 }), fc.boolean(), fc.boolean(), fc.uint8Array({ maxLength: 130 }), fc.constantFrom(0, 0, 3, -1))
    .map(([op, rsv, fin, masked, p, lie]) => frame(op, Buffer.from(p), { rsv, fin, masked, lie: Math.max(-p.length, lie) })) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => Buffer.from(b)) },
), { minLength: 1, maxLength: 4 }).map((frames) => Buffer.concat(frames));

describe('fuzz: WebSocket frames to the gateway', () => {
  it('the gateway answers JSON-RPC or closes with a protocol code; never an internal error, never down', async () => {
    await fc.assert(fc.asyncProperty(wsFrames, async (bytes) => {
      const out = await rawWs(`/${evmUuid}`, bytes, 300);
      const hex = bytes.subarray(0, 60).toString('hex');
      for (const text of out.texts) {
        const answer = JSON.parse(text) as unknown;
        const list = Array.isArray(answer) ? answer : [answer];
        for (const a of list) expect(a, hex).toHaveProperty('jsonrpc', '2.0');
        if (/nested deeper/.test(text)) expect(text).toMatch(/"code":-32600/);
      }
      // A protocol code (1002 protocol error, 1007 invalid UTF-8, 1009 too big...) or the client's own close echoed: never 1011.
      expect(out.closeCode, `${hex} closed ${out.closeCode}`).not.toBe(1011);
    }), { numRuns: Math.ceil(RUNS / 2), seed: SEED, endOnFailure: true });
    // Still serving, over both transports.
    expect((await request(`${t.gatewayUrl}/health`)).statusCode).toBeLessThan(500);
    const ok = await rawWs(`/${evmUuid}`, frame(1, Buffer.from('{"jsonrpc":"2.0","id":9,"method":"eth_blockNumber"}')), 2000);
    expect(JSON.parse(ok.texts[0]!)).toMatchObject({ id: 9, result: expect.any(String) });
  }, 180_000);
});

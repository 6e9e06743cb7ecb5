import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { WebSocket } from 'ws';
import { setLogin } from '../src/cabinet/index.js';
import { jsonDeeperThan } from '../src/util/json-depth.js';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';
import { rawHttp } from './helpers/raw-http.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

// Issue 21, "Hostile input": each case below answered wrongly on the main of that day (an open
// redirect, a hung sign-in, 500s, metadata over its limit accepted). Real HTTP on loopback.

const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
const PASSWORD = 'a long enough password';
let chain: FakeEvm;
let t: TestService;
let m: Merchant;
let endpointUuid: string;

beforeAll(async () => {
  chain = await startFakeEvmChain();
  chain.mine();
  t = await startTestService({
    networks: [{ slug: 'fake', name: 'Fake', family: 'evm', environments: [{ slug: 'local', upstreams: [chain.url] }] }],
  }, { cabinet: { signIn: { perIpPerMinute: 1000, perEmailPerMinute: 1000 } } });
  m = await t.merchant({ plan: 'pro' });
  await setLogin(t.store, m.userId, { email: 'hostile@example.com', password: PASSWORD });
  expect((await m.call('PUT', '/v1/payments/settings', JSON.stringify({ xpubs: { evm: XPUB } }))).status).toBe(200);
  endpointUuid = (await m.call('POST', '/v1/endpoints', JSON.stringify({ name: 'e', network_slug: 'fake', env_slug: 'local' }))).body.endpoint.uuid;
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await chain?.close();
});

/** A raw request line, so `next` reaches the server byte for byte as an attacker sends it. */
async function raw(path: string, headers: string[] = [], body = ''): Promise<{ status: number; head: string; location?: string }> {
  const lines = [`${body ? 'POST' : 'GET'} ${path} HTTP/1.1`, 'host: 127.0.0.1', 'connection: close', ...headers];
  if (body) lines.push('content-type: application/x-www-form-urlencoded', `content-length: ${Buffer.byteLength(body)}`);
  const answer = await rawHttp(t.baseUrl, `${lines.join('\r\n')}\r\n\r\n${body}`, 10_000);
  const location = /^location: (.*)$/im.exec(answer.head)?.[1];
  return { status: answer.status, head: answer.head, location };
}

let cookie: string | undefined;
async function signedIn(): Promise<string> {
  if (cookie) return cookie;
  const res = await raw('/login', [], new URLSearchParams({ email: 'hostile@example.com', password: PASSWORD }).toString());
  expect(res.status).toBe(303);
  cookie = /^set-cookie: ([^;]+)/im.exec(res.head)![1]!;
  return cookie;
}

/** Where a browser would go, resolving the Location as browsers do (tab, CR, LF stripped; \ as /). */
function browserTarget(location: string): string {
  return new URL(location, 'http://cabinet.example').origin;
}

// Each decodes to text a browser turns into another host, or that is not a legal header value.
const HOSTILE_NEXT = [
  '%2F%09%2Fevil.example', '/%09/evil.example', '/%0d/evil.example', '/%0a/evil.example', '%2F%5C%2Fevil.example', '/%5Cevil.example',
  '%09//evil.example', '%20//evil.example', '//evil.example', '/..//evil.example', '/.//evil.example', '/%0b/x', '/%0a/x', '/%00x', '/%7Fx',
  'https://evil.example', 'javascript:alert(1)', '%2F%2F%E2%80%8Bevil.example', '/%C3%A9t%C3%A9',
];

describe('cabinet: next never leaves the site and never breaks the answer', () => {
  it('signed in, GET /login?next=... redirects only to a same-origin path', async () => {
    const c = await signedIn();
    for (const next of HOSTILE_NEXT) {
      const res = await raw(`/login?next=${next}`, [`cookie: ${c}`]);
      expect(res.status, next).toBe(303);
      expect(browserTarget(res.location!), `${next} -> ${res.location}`).toBe('http://cabinet.example');
      expect(res.location!.startsWith('/') && !res.location!.startsWith('//'), res.location).toBe(true);
    }
  });

  it('the sign-in POST answers with a same-origin redirect whatever next holds (VT, CR, LF included)', async () => {
    for (const next of [...HOSTILE_NEXT.map(decodeURIComponent), '/\x0b/x', '/\r\n/x', '/a\u2028b', '/ok?x=1#f']) {
      const form = new URLSearchParams({ email: 'hostile@example.com', password: PASSWORD, next }).toString();
      const res = await raw('/login', [], form);
      expect(res.status, JSON.stringify(next)).toBe(303);
      expect(browserTarget(res.location!), JSON.stringify(next)).toBe('http://cabinet.example');
    }
  });

  it('a plain same-origin next survives, query and fragment included', async () => {
    const c = await signedIn();
    expect((await raw(`/login?next=${encodeURIComponent('/endpoints?days=7#top')}`, [`cookie: ${c}`])).location).toBe('/endpoints?days=7#top');
    expect((await raw(`/login?next=${encodeURIComponent('/watch/é')}`, [`cookie: ${c}`])).location).toBe('/watch/%C3%A9');
  });

  it('the signed-out page renders a hostile next inert (a hidden field holding "/")', async () => {
    const res = await request(`${t.baseUrl}/login?next=%2F%09%2Fevil.example`);
    const text = await res.body.text();
    expect(res.statusCode).toBe(200);
    expect(text).toContain('name="next" value="/"');
  });
});

/** `[[[...]]]` nested `depth` levels deep inside a JSON object. */
const nested = (depth: number) => `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`;

describe('deeply nested JSON bodies get a 400, not a 500', () => {
  it('every JSON route of the API', async () => {
    for (const [method, path] of [['POST', '/v1/endpoints'], ['PATCH', '/v1/endpoints/1'], ['POST', '/v1/payments'], ['PUT', '/v1/address-watch/webhook']] as const) {
      const res = await m.call(method, path, nested(100_000));
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body.error, path).toMatch(/nested deeper than \d+ levels/);
    }
    // Deep, but inside a string: just text, not nesting.
    const inString = await m.call('POST', '/v1/endpoints', JSON.stringify({ name: '['.repeat(5000) }));
    expect(inString.status).toBe(400);
    expect(JSON.stringify(inString.body)).not.toMatch(/nested/);
  });

  it('the gateway: single calls, batches and WebSocket messages', async () => {
    for (const body of [
      `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
      `[{"jsonrpc":"2.0","id":1,"method":"eth_call","params":${'['.repeat(100_000)}${']'.repeat(100_000)}},{"jsonrpc":"2.0","id":2}]`,
      `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
    ]) {
      const res = await request(`${t.gatewayUrl}/${endpointUuid}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      const answer = await res.body.json() as { error?: { code: number; message: string } };
      expect(res.statusCode).toBe(400);
      expect(answer.error).toMatchObject({ code: -32600, message: expect.stringMatching(/nested deeper than \d+ levels/) });
    }
    // Over WebSocket: an error message on the socket, which stays open (it closed 1011 "internal error").
    const ws = new WebSocket(`${t.gatewayUrl.replace('http', 'ws')}/${endpointUuid}`);
    const got: string[] = [];
    let closed: number | undefined;
    ws.on('message', (d) => got.push(d.toString()));
    ws.on('close', (code) => { closed = code; });
    await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
    ws.send(`{"jsonrpc":"2.0","id":5,"method":"eth_call","params":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    ws.send('{"jsonrpc":"2.0","id":6,"method":"eth_blockNumber"}');
    for (let i = 0; i < 200 && got.length < 2 && closed === undefined; i++) await new Promise((r) => setTimeout(r, 25));
    ws.close();
    expect(closed).toBeUndefined();
    expect(JSON.parse(got[0]!)).toMatchObject({ error: { code: -32600, message: expect.stringMatching(/nested deeper than 128 levels/) } });
    expect(JSON.parse(got[1]!), got[1]).toMatchObject({ id: 6, result: expect.any(String) });
    // The gateway is still serving.
    const ok = await request(`${t.gatewayUrl}/${endpointUuid}`, { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}' });
    expect(ok.statusCode).toBe(200);
    await ok.body.dump();
  });
});

describe('the depth scan', () => {
  it('counts brackets outside strings only, bytes and strings alike', () => {
    for (const form of [(x: string) => x, (x: string) => Buffer.from(x)]) {
      expect(jsonDeeperThan(form(`${'['.repeat(128)}${']'.repeat(128)}`))).toBe(false);
      expect(jsonDeeperThan(form(`${'['.repeat(129)}${']'.repeat(129)}`))).toBe(true);
      expect(jsonDeeperThan(form(`${'{"a":'.repeat(129)}1${'}'.repeat(129)}`))).toBe(true);
      // Text, escaped quotes included, is not nesting.
      expect(jsonDeeperThan(form(`{"a":"${'['.repeat(500)}\\"${'{'.repeat(500)}"}`))).toBe(false);
      expect(jsonDeeperThan(form(`["\\\\",${'['.repeat(200)}`))).toBe(true);
      // Siblings do not add up: only open levels count.
      expect(jsonDeeperThan(form(`[${'[[]],'.repeat(500)}1]`))).toBe(false);
    }
  });
});

describe('payment metadata', () => {
  const create = (orderId: string, metadata: unknown) => m.call('POST', '/v1/payments', JSON.stringify({ order_id: orderId, network_slug: 'fake', amount: '1', metadata }));

  it('the 4 KiB limit counts UTF-8 bytes of the JSON, not UTF-16 units', async () => {
    // 2,000 euro signs: 2,000 UTF-16 units, 6,000 bytes of UTF-8.
    const over = await create('meta-over', { note: '€'.repeat(2000) });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatch(/metadata: must be at most 4096 bytes of JSON \(UTF-8\), got 6\d{3}/);
    const fits = await create('meta-fits', { note: '€'.repeat(1300) });
    expect(fits.status, JSON.stringify(fits.body)).toBe(200);
    expect(fits.body.payment.metadata).toEqual({ note: '€'.repeat(1300) });
  });

  it('a __proto__ key is refused by name, at any depth, instead of dropped', async () => {
    for (const body of ['{"__proto__":{"x":1},"cart":1}', '{"cart":{"items":[{"__proto__":1}]}}']) {
      const res = await m.call('POST', '/v1/payments', `{"order_id":"proto-${body.length}","network_slug":"fake","amount":"1","metadata":${body}}`);
      expect(res.status, body).toBe(400);
      expect(res.body.error).toMatch(/metadata.*"__proto__"/);
    }
    // Keys that only look special are data like any other.
    const fine = await create('proto-fine', { constructor: 1, prototype: 2, toString: 3 });
    expect(fine.status).toBe(200);
    expect(fine.body.payment.metadata).toEqual({ constructor: 1, prototype: 2, toString: 3 });
  });
});

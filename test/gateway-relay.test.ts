import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { FakeEvm } from './helpers/fake-evm.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

// The relay of upstream answers (src/gateway/relay.ts): small ones gathered and sent whole,
// large ones streamed. Either way the client gets the upstream's bytes, and the failures a
// stream can have (upstream cut mid-body, client gone mid-body) end cleanly.

const SMALL = 1000;
/** Well past the relay's buffering limit, so the answer is streamed. */
const LARGE = 5 * 1024 * 1024 + 7;

let t: TestService;
let eth: FakeEvm;
let horizon: FakeEvm;
let m: Merchant;
let rpcUuid: string;
let rpcId: number;
let restUuid: string;

beforeAll(async () => {
  [eth, horizon] = await Promise.all([new FakeEvm().start(), new FakeEvm().start()]);
  t = await startTestService({
    // A long upstream timeout: a cancelled upstream body below is the client's doing, not a timeout's.
    gateway: { upstream_timeout_ms: 20_000, probe_interval_ms: 3_600_000 },
    networks: [
      { id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [eth.url] }], credits: { default: 20, methods: {} } },
      { id: 7, slug: 'stellar', name: 'Stellar', family: 'stellar', environments: [{ id: 11, slug: 'mainnet', upstreams: [horizon.url] }], credits: { default: 20, methods: {} } },
    ],
    plans: [{ id: 1, slug: 'big', name: 'Big', included_credits: 1e9, rps_limit: 10_000, endpoints_limit: 100, network_limit: null }],
  });
  m = await t.merchant({ plan: 'big' });
  const a = await m.call('POST', '/v1/endpoints', JSON.stringify({ name: 'rpc', network_environment_id: 1 }));
  const b = await m.call('POST', '/v1/endpoints', JSON.stringify({ name: 'rest', network_environment_id: 11 }));
  rpcUuid = a.body.endpoint.uuid;
  rpcId = a.body.endpoint.id;
  restUuid = b.body.endpoint.uuid;
});
afterAll(async () => {
  await t.stop();
  await Promise.all([eth.stop(), horizon.stop()]);
});
beforeEach(() => {
  eth.respond = undefined;
  horizon.respond = undefined;
});

const CALL = '{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x52908400098527886E0F7030069857D2E4169EE7","latest"]}';

async function rpcRaw(body = CALL) {
  const res = await request(`${t.gatewayUrl}/${rpcUuid}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  return { status: res.statusCode, headers: res.headers, bytes: Buffer.from(await res.body.arrayBuffer()) };
}

/** Writes `bytes` in pieces of `piece`, as a node streaming a large answer would, honouring backpressure. */
function writeInPieces(res: ServerResponse, bytes: Buffer, piece: number): void {
  let at = 0;
  const more = () => {
    while (at < bytes.length) {
      const ok = res.write(bytes.subarray(at, at + piece));
      at += piece;
      if (!ok) return void res.once('drain', more);
    }
    res.end();
  };
  more();
}

/** Every byte value, in an order no encoder would normalise. */
function oddBytes(n: number): Buffer {
  const b = randomBytes(n);
  for (let i = 0; i < Math.min(256, n); i++) b[i] = i;
  return b;
}

async function requests(): Promise<number> {
  await t.service.gateway.meter.flush();
  const r = await m.call('GET', `/v1/endpoints/${rpcId}/usage?days=7`);
  return r.body.usage.total_requests as number;
}

/** Resolves once the upstream's answer `res` closes; `finished`: whether it was sent whole. */
function closed(res: ServerResponse): Promise<{ finished: boolean }> {
  return new Promise((resolve) => res.once('close', () => resolve({ finished: res.writableFinished })));
}

describe('relay: byte-for-byte answers', () => {
  for (const [name, size, declared] of [
    ['small, with Content-Length', SMALL, true], ['small, chunked', SMALL, false],
    ['large, with Content-Length', LARGE, true], ['large, chunked', LARGE, false],
  ] as const) {
    it(`passes on a ${name} answer unchanged and meters it once`, async () => {
      const bytes = oddBytes(size);
      eth.respond = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json; charset=x-odd', ...(declared ? { 'content-length': bytes.length } : {}) });
        writeInPieces(res, bytes, 16 * 1024 + 3);
        return true;
      };
      const before = await requests();
      const r = await rpcRaw();
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/json; charset=x-odd');
      expect(r.headers['access-control-allow-origin']).toBe('*');
      expect(r.bytes.length).toBe(bytes.length);
      expect(r.bytes.equals(bytes)).toBe(true);
      expect(await requests()).toBe(before + 1);
    });
  }

  it('passes on many concurrent answers of mixed sizes, each to its own caller', async () => {
    const bodies = new Map<string, Buffer>();
    eth.respond = (req, res) => {
      const id = JSON.parse(req.body).id as string;
      res.writeHead(200, { 'content-type': 'application/json' });
      writeInPieces(res, bodies.get(id)!, 64 * 1024);
      return true;
    };
    for (let i = 0; i < 24; i++) bodies.set(`c${i}`, oddBytes(i % 3 === 0 ? 300_000 + i : 50 + i * 997));
    const answers = await Promise.all([...bodies.keys()].map((id) => rpcRaw(JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_call', params: [] }))));
    [...bodies.values()].forEach((b, i) => expect(answers[i]!.bytes.equals(b)).toBe(true));
  });

  it('passes a gzip body on as bytes, and an answer without a content type without one, as before', async () => {
    const gz = gzipSync(Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x1"}'));
    eth.respond = (_req, res) => { res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-upstream': 'secret-ish' }); res.end(gz); return true; };
    const r = await rpcRaw();
    expect(r.bytes.equals(gz)).toBe(true);
    // Only the content type is passed on (the gateway asks for JSON and no encoding; nodes' own headers stay behind).
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.headers['x-upstream']).toBeUndefined();

    eth.respond = (_req, res) => { res.writeHead(200); res.end('plain'); return true; };
    const bare = await rpcRaw();
    expect(bare.bytes.toString()).toBe('plain');
    expect(bare.headers['content-type']).toBeUndefined();
  });

  it('passes a content type with bytes over 0x7f on as the same bytes', async () => {
    eth.respond = (_req, res) => {
      // Written by hand (Node would not write these bytes), on a connection then closed: the server's own response object never ends.
      res.socket!.end(Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: application/json; x='), Buffer.from([0xc3, 0xbf, 0x80]), Buffer.from('\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}')]));
      return true;
    };
    const { once } = await import('node:events');
    const { connect } = await import('node:net');
    const u = new URL(t.gatewayUrl);
    const socket = connect(Number(u.port), u.hostname);
    await once(socket, 'connect');
    socket.write(`POST /${rpcUuid} HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\ncontent-length: ${CALL.length}\r\nconnection: close\r\n\r\n${CALL}`);
    const chunks: Buffer[] = [];
    for await (const c of socket) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    expect(raw.includes(Buffer.concat([Buffer.from('application/json; x='), Buffer.from([0xc3, 0xbf, 0x80]), Buffer.from('\r\n')]))).toBe(true);
    expect(raw.subarray(raw.indexOf('\r\n\r\n') + 4).toString()).toBe('{}');
  });

  it('REST-style routes: a body passes unchanged, HEAD and 204 carry no body', async () => {
    const json = oddBytes(200_000);
    horizon.respond = (req, res) => {
      if (req.url.startsWith('/accounts/none')) { res.writeHead(204); res.end(); return true; }
      res.writeHead(200, { 'content-type': 'application/hal+json', 'content-length': json.length });
      res.end(req.method === 'HEAD' ? undefined : json);
      return true;
    };
    const get = await request(`${t.gatewayUrl}/${restUuid}/accounts/GABC`);
    expect(get.statusCode).toBe(200);
    expect(get.headers['content-type']).toBe('application/hal+json');
    expect(Buffer.from(await get.body.arrayBuffer()).equals(json)).toBe(true);
    const head = await request(`${t.gatewayUrl}/${restUuid}/accounts/GABC`, { method: 'HEAD' });
    expect(head.statusCode).toBe(200);
    expect((await head.body.arrayBuffer()).byteLength).toBe(0);
    const none = await request(`${t.gatewayUrl}/${restUuid}/accounts/none`);
    expect(none.statusCode).toBe(204);
    expect(none.headers['content-length']).toBeUndefined();
    expect((await none.body.arrayBuffer()).byteLength).toBe(0);
  });
});

describe('relay: failures mid-body', () => {
  for (const [name, size, cutAt] of [['small', SMALL, 300], ['large', LARGE, 2 * 1024 * 1024]] as const) {
    it(`an upstream cut mid-body (${name}) never passes part of it for whole`, async () => {
      const bytes = oddBytes(size);
      eth.respond = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
        res.write(bytes.subarray(0, cutAt), () => setTimeout(() => res.socket?.destroy(), 20));
        return true;
      };
      if (name === 'small') {
        // A JSON-RPC answer this small is judged whole before it is handed on (docs/gateway.md,
        // "Errors the nodes answer"): cut, it is a failed try, and with no other upstream, -32010.
        const r = await rpcRaw();
        expect(r.status).toBe(502);
        expect(JSON.parse(r.bytes.toString()).error.code).toBe(-32010);
      } else {
        // The head has gone out (streamed): the answer fails to read.
        await expect(rpcRaw()).rejects.toThrow();
      }
      eth.respond = undefined;
      expect((await rpcRaw()).status).toBe(200);
    });
  }

  for (const [name, sent] of [['small, while it is gathered', 300], ['large, while it is streamed', 1024 * 1024]] as const) {
    it(`a client gone mid-body (${name}) cancels the upstream's body, and the gateway goes on`, async () => {
      let upstreamClosed: Promise<{ finished: boolean }> | undefined;
      let sentFirst!: () => void;
      const firstSent = new Promise<void>((r) => { sentFirst = r; });
      eth.respond = (_req, res) => {
        upstreamClosed = closed(res);
        // Announces far more than it sends, then stalls: only a cancelled body ends this answer soon.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': 50 * 1024 * 1024 });
        res.write(oddBytes(sent), () => sentFirst());
        return true;
      };
      const ac = new AbortController();
      const call = request(`${t.gatewayUrl}/${rpcUuid}`, { method: 'POST', body: CALL, headers: { 'content-type': 'application/json' }, signal: ac.signal });
      if (sent > 64 * 1024) {
        // Streamed: the client sees the head and the first bytes, then goes away.
        const res = await call;
        expect(res.statusCode).toBe(200);
        for await (const chunk of res.body) { expect((chunk as Buffer).length).toBeGreaterThan(0); break; }
      } else {
        await firstSent;
        ac.abort();
        await call.catch(() => {});
      }
      const started = performance.now();
      const { finished } = await upstreamClosed!;
      expect(finished).toBe(false);
      // Well before the 20 s upstream timeout: the abort reached the upstream.
      expect(performance.now() - started).toBeLessThan(5000);
      eth.respond = undefined;
      expect((await rpcRaw()).status).toBe(200);
    });
  }

  it('many clients gone mid-body leave no connection open on the gateway or towards the upstream', async () => {
    const open = new Set<ServerResponse>();
    eth.respond = (_req, res) => {
      open.add(res);
      res.once('close', () => open.delete(res));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(oddBytes(256 * 1024));
      return true;
    };
    const server = (t.service.gateway as { server?: import('node:http').Server }).server;
    const count = () => new Promise<number>((r) => server!.getConnections((_e, n) => r(n)));
    const baseline = server ? await count() : 0;
    await Promise.all(Array.from({ length: 20 }, async () => {
      const res = await request(`${t.gatewayUrl}/${rpcUuid}`, { method: 'POST', body: CALL, headers: { 'content-type': 'application/json' } });
      for await (const _ of res.body) break;
    }));
    const deadline = Date.now() + 5000;
    while (open.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(open.size).toBe(0);
    if (server) {
      // The 20 clients' connections are gone; only the earlier tests' idle keep-alive ones may stay.
      let connections = Infinity;
      for (let i = 0; i < 100 && connections > baseline; i++) {
        connections = await count();
        if (connections > baseline) await new Promise((r) => setTimeout(r, 20));
      }
      expect(connections).toBeLessThanOrEqual(baseline);
    }
    eth.respond = undefined;
    expect((await rpcRaw()).status).toBe(200);
  });
});

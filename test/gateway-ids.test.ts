import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evmCachePlan } from '../src/chains/evm/gateway.js';
import { request } from 'undici';
import { WebSocket } from 'ws';
import { FakeEvm } from './helpers/fake-evm.js';
import { startTestService, type TestService } from './helpers/service.js';
import { parseJson } from '../src/gateway/jsonrpc.js';
import { planCache } from '../src/gateway/cache.js';

// Issue 21: `12345678901234567890` came back `12345678901234567000`. Every id a client sends
// comes back as the same bytes, whoever answers: the node, the cache, or the gateway itself.
const IDS = [
  '12345678901234567890', '-12345678901234567890', '9007199254740993', '1.0', '1e2', '1E+2', '-0', '0.5', '-1.5e-7',
  '0', '7', '-3', '"abc"', '"12345678901234567890"', 'null',
];

/** A node that echoes each id as the bytes it was sent, as geth does (a raw message). */
const rawJson = JSON as unknown as { rawJSON(t: string): unknown };
function echoRaw(text: string): unknown {
  return (JSON.parse as (t: string, r: (k: string, v: unknown, c: { source?: string }) => unknown) => unknown)(
    text, (k, v, c) => (k === 'id' && typeof v === 'number' ? rawJson.rawJSON(c.source!) : v),
  );
}

let upstream: FakeEvm;
let t: TestService;
let url: string;

beforeAll(async () => {
  upstream = await new FakeEvm().start();
  upstream.respond = (seen, res) => {
    const payload = echoRaw(seen.body) as Record<string, unknown> | Array<Record<string, unknown>>;
    const one = (c: Record<string, unknown>) => ({ jsonrpc: '2.0', id: c.id ?? null, result: c.method === 'eth_chainId' ? '0x1' : '0x1234' });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(Array.isArray(payload) ? payload.map(one) : one(payload)));
    return true;
  };
  t = await startTestService({
    networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'main', upstreams: [upstream.url] }] }],
  });
  const m = await t.merchant();
  const e = (await m.call('POST', '/v1/endpoints', '{"name":"ids","network_environment_id":1}')).body.endpoint;
  url = `${t.gatewayUrl}/${e.uuid}`;
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await upstream?.stop();
});

async function post(to: string, body: string): Promise<{ status: number; text: string }> {
  const r = await request(to, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: r.statusCode, text: await r.body.text() };
}

/** The text of every `"id"` value in an answer, in order (answers are written without spaces). */
function idTexts(text: string): string[] {
  return [...text.matchAll(/"id":("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|null)/g)].map((m) => m[1]!);
}

// Spaces around the id too: the gateway finds the id's text wherever the client put it.
const call = (id: string, method = 'eth_blockNumber') => `{"jsonrpc":"2.0","id": ${id} ,"method":"${method}","params":[]}`;

describe('JSON-RPC ids come back byte for byte', () => {
  it('over HTTP, single calls answered by the node', async () => {
    for (const id of IDS) {
      const r = await post(url, call(id));
      expect(r.status, id).toBe(200);
      expect(idTexts(r.text), id).toEqual([id]);
    }
  });

  it('over HTTP, single calls answered from the cache', async () => {
    await post(url, call('1', 'eth_chainId'));
    const key = planCache(1, evmCachePlan, 'eth_chainId', [], undefined)!.key;
    for (let i = 0; !(await t.service.gateway.cache!.everywhere(key)); i++) {
      if (i > 300) throw new Error('the answer never reached every worker');
      await new Promise((r) => setTimeout(r, 20));
    }
    const asked = upstream.seen.length;
    for (const id of IDS) {
      const r = await post(url, call(id, 'eth_chainId'));
      expect(idTexts(r.text), id).toEqual([id]);
    }
    expect(upstream.seen.length).toBe(asked);
  });

  it('over HTTP, batches: forwarded, answered from the cache in part, with elements the gateway refuses', async () => {
    const plain = await post(url, `[${IDS.map((id) => call(id)).join(',')}]`);
    expect(idTexts(plain.text).sort()).toEqual([...IDS].sort());
    const cached = await post(url, `[${IDS.map((id, i) => call(id, i % 2 ? 'eth_chainId' : 'eth_blockNumber')).join(',')}]`);
    expect(idTexts(cached.text).sort()).toEqual([...IDS].sort());
    // An element without a method is refused here; the rest go to the node and are merged.
    const mixed = await post(url, `[${IDS.map((id) => call(id)).join(',')},{"jsonrpc":"2.0","id":12345678901234567891}]`);
    expect(idTexts(mixed.text).sort()).toEqual([...IDS, '12345678901234567891'].sort());
  });

  it('over HTTP, errors the gateway answers itself', async () => {
    for (const id of IDS.filter((i) => i !== 'null')) {
      const invalid = await post(url, `{"jsonrpc":"2.0","id": ${id} }`);
      expect(invalid.status).toBe(400);
      expect(idTexts(invalid.text), id).toEqual([id]);
      const unknown = await post(`${t.gatewayUrl}/00000000-0000-4000-8000-000000000000`, call(id));
      expect(unknown.status).toBe(404);
      expect(idTexts(unknown.text), id).toEqual([id]);
    }
  });

  it('over HTTP, a batch over the RPS window: the elements refused here keep their ids', async () => {
    const free = await t.merchant({ plan: 'free' }); // 5 requests per second
    const e = (await free.call('POST', '/v1/endpoints', '{"name":"window","network_environment_id":1}')).body.endpoint;
    const r = await post(`${t.gatewayUrl}/${e.uuid}`, `[${IDS.map((id) => call(id)).join(',')}]`);
    expect(idTexts(r.text).sort()).toEqual([...IDS].sort());
    expect(r.text).toContain('rps limit exceeded');
  });

  it('over WebSocket: single calls, cached calls, batches and refusals', async () => {
    const ws = new WebSocket(url.replace('http', 'ws'));
    await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
    const got: string[] = [];
    ws.on('message', (d) => got.push(d.toString()));
    const next = async () => {
      for (let i = 0; i < 300 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      return got.shift()!;
    };
    try {
      for (const id of IDS) {
        ws.send(call(id));
        expect(idTexts(await next()), id).toEqual([id]);
        ws.send(call(id, 'eth_chainId'));
        expect(idTexts(await next()), id).toEqual([id]);
        if (id !== 'null') {
          ws.send(`{"jsonrpc":"2.0","id": ${id} }`);
          expect(idTexts(await next()), id).toEqual([id]);
        }
      }
      ws.send(`[${IDS.map((id, i) => call(id, i % 2 ? 'eth_chainId' : 'eth_blockNumber')).join(',')},{"id":-0}]`);
      expect(idTexts(await next()).sort()).toEqual([...IDS, '-0'].sort());
    } finally {
      ws.close();
    }
  });
});

describe('parseJson', () => {
  it('keeps the plain parse for ids written as JavaScript writes them back', () => {
    const v = parseJson('{"id":42,"params":[{"id":7}]}') as { id: unknown; params: Array<{ id: unknown }> };
    expect(v.id).toBe(42);
    expect(v.params[0]!.id).toBe(7);
  });

  it('finds an id behind an escaped key', () => {
    expect(JSON.stringify(parseJson('{"\\u0069d":1.50}'))).toBe('{"id":1.50}');
  });
});

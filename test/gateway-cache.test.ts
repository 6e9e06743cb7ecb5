import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evmCachePlan, evmLogsQuery } from '../src/chains/evm/gateway.js';
import { request } from 'undici';
import { WebSocket } from 'ws';
import { encodeFunctionData, type Address, type Hex } from 'viem';
import { deployToken, erc20Abi, startAnvil, type Anvil } from './helpers/anvil.js';
import { startProxy, type LoopbackProxy } from './helpers/proxy.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';
import { firstChangedHeight, finalHeightOf, planCache, ResponseCache, type SharedCacheTier } from '../src/gateway/cache.js';
import { redactUrl } from '../src/gateway/health.js';
import { chunks } from '../src/gateway/logs.js';

// One anvil node behind a counting proxy, served by two environments: `eth` refuses
// eth_getLogs ranges over 10 blocks, `split` splits them into 7-block chunks.
// anvil's `finalized` block is head - 64.
let anvil: Anvil;
let proxy: LoopbackProxy;
let t: TestService;
let m: Merchant;
let url: string;
let splitUrl: string;
let endpointId: number;
let token: Address;
let txHash: Hex;
let snapshotId: Hex;

async function direct(method: string, params: unknown[]): Promise<any> {
  const r = await request(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await r.body.json()) as { result: unknown }).result;
}

async function rpc(to: string, body: unknown): Promise<{ status: number; body: any }> {
  const r = await request(to, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.statusCode, body: await r.body.json() };
}

/** How many times the node itself was asked `method` with exactly these params. */
function upstreamCalls(method: string, params: unknown[]): number {
  const key = `${method} ${JSON.stringify(params)}`;
  return proxy.calls.filter((c) => c === key).length;
}

async function until(cond: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`condition not met in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const hex = (n: number) => `0x${n.toString(16)}`;

/** Waits until every gateway worker holds the answer: a fill in one reaches the others a moment later. */
async function cachedEverywhere(envId: number, method: string, params: unknown[]): Promise<void> {
  const key = planCache(envId, evmCachePlan, method, params, t.service.gateway.chain.get(envId))!.key;
  await until(() => t.service.gateway.cache!.everywhere(key));
}

beforeAll(async () => {
  anvil = await startAnvil();
  const [owner, to] = anvil.accounts as [Address, Address];
  token = await deployToken(anvil, owner, 10n ** 24n);
  for (let i = 1; i <= 5; i++) {
    txHash = await anvil.wallet.sendTransaction({
      account: owner, chain: null, to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, BigInt(i)] }),
    });
    await anvil.public.waitForTransactionReceipt({ hash: txHash, pollingInterval: 50 });
  }
  await direct('anvil_mine', [hex(20 - Number(await direct('eth_blockNumber', [])))]);
  snapshotId = await direct('evm_snapshot', []);
  await direct('anvil_mine', [hex(80)]); // head 100, finalized 36
  proxy = await startProxy(anvil.url);
  const credits = { default: 20, methods: { eth_getLogs: 75, eth_getBlockByNumber: 25 }, logs_block_unit: 10 };
  t = await startTestService({
    networks: [
      { id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'anvil', upstreams: [proxy.url] }], credits,
        max_logs_block_range: 10, logs_over_range: 'refuse', max_logs_results: 3 },
      { id: 2, slug: 'split', name: 'Split', environments: [{ id: 2, slug: 'anvil', upstreams: [proxy.url] }], credits,
        max_logs_block_range: 7, logs_over_range: 'split' },
    ],
    gateway: { probe_interval_ms: 200 },
  });
  m = await t.merchant();
  const e = (await m.call('POST', '/v1/endpoints', '{"name":"cache","network_environment_id":1}')).body.endpoint;
  endpointId = e.id;
  url = `${t.gatewayUrl}/${e.uuid}`;
  const s = (await m.call('POST', '/v1/endpoints', '{"name":"split","network_environment_id":2}')).body.endpoint;
  splitUrl = `${t.gatewayUrl}/${s.uuid}`;
  await until(() => t.service.gateway.chain.get(1)?.finalized === 36 && t.service.gateway.chain.get(2)?.finalized === 36);
}, 90_000);

afterAll(async () => {
  await t?.stop();
  await proxy?.close();
  await anvil?.stop();
});

describe('finality-aware cache', () => {
  it('answers a final block from the cache, with each request\'s own id, and meters every call', async () => {
    await t.service.gateway.meter.flush();
    const before = (await m.call('GET', `/v1/endpoints/${endpointId}/usage?days=7`)).body.usage;
    const params = [hex(30), true];
    const a = await rpc(url, { jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params });
    await cachedEverywhere(1, 'eth_getBlockByNumber', params);
    const b = await rpc(url, { jsonrpc: '2.0', id: 'second', method: 'eth_getBlockByNumber', params });
    const c = await rpc(url, { jsonrpc: '2.0', id: { x: [1] }, method: 'eth_getBlockByNumber', params });
    expect(a.body.result).toEqual(await direct('eth_getBlockByNumber', params));
    expect(b.body).toEqual({ jsonrpc: '2.0', id: 'second', result: a.body.result });
    expect(c.body.id).toEqual({ x: [1] });
    expect(upstreamCalls('eth_getBlockByNumber', params)).toBe(1);
    await t.service.gateway.meter.flush();
    const after = (await m.call('GET', `/v1/endpoints/${endpointId}/usage?days=7`)).body.usage;
    const row = (u: any) => u.methods.find((x: { method: string }) => x.method === 'eth_getBlockByNumber') ?? { requests: 0, credits: 0 };
    expect(row(after).requests - row(before).requests).toBe(3);
    expect(row(after).credits - row(before).credits).toBe(75);
  });

  it('never caches latest, blocks above the finalized height, or a null for an unknown hash', async () => {
    for (const params of [['latest', true], [hex(80), true], ['safe', true]]) {
      await rpc(url, { jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params });
      await rpc(url, { jsonrpc: '2.0', id: 2, method: 'eth_getBlockByNumber', params });
      expect(upstreamCalls('eth_getBlockByNumber', params)).toBe(2);
    }
    const unknown = [`0x${'ab'.repeat(32)}`];
    const r = await rpc(url, { jsonrpc: '2.0', id: 3, method: 'eth_getTransactionReceipt', params: unknown });
    expect(r.body).toEqual({ jsonrpc: '2.0', id: 3, result: null });
    await rpc(url, { jsonrpc: '2.0', id: 4, method: 'eth_getTransactionReceipt', params: unknown });
    expect(upstreamCalls('eth_getTransactionReceipt', unknown)).toBe(2);
  });

  it('caches by-hash reads of final transactions and the chain id', async () => {
    for (const [method, params] of [['eth_getTransactionReceipt', [txHash]], ['eth_getTransactionByHash', [txHash]], ['eth_chainId', []]] as const) {
      const a = await rpc(url, { jsonrpc: '2.0', id: 1, method, params });
      await cachedEverywhere(1, method, [...params]);
      const b = await rpc(url, { jsonrpc: '2.0', id: 2, method, params });
      expect(a.body.result).not.toBeNull();
      expect(b.body).toEqual({ ...a.body, id: 2 });
      expect(upstreamCalls(method, [...params])).toBe(1);
    }
  });

  it('answers the final elements of a batch from the cache and sends only the rest upstream', async () => {
    const final = [hex(17), true];
    const batch = (n: number) => [
      { jsonrpc: '2.0', id: `a${n}`, method: 'eth_getBlockByNumber', params: final },
      { jsonrpc: '2.0', id: `b${n}`, method: 'eth_blockNumber', params: [] },
      { jsonrpc: '2.0', id: `c${n}`, method: 'eth_getTransactionReceipt', params: [txHash] },
    ];
    const count = (method: string, params: unknown[]) => proxy.calls.filter((c) => c === `batch> ${method} ${JSON.stringify(params)}`).length;
    const first = await rpc(url, batch(1));
    await cachedEverywhere(1, 'eth_getBlockByNumber', final);
    const second = await rpc(url, batch(2));
    const byId = (r: { body: Array<{ id: string }> }) => new Map(r.body.map((x) => [x.id, x as any]));
    const [f, s] = [byId(first), byId(second)];
    expect(s.get('a2').result).toEqual(await direct('eth_getBlockByNumber', final));
    expect(s.get('a2').result).toEqual(f.get('a1').result);
    expect(s.get('c2').result.transactionHash).toBe(txHash);
    expect(s.get('b2').result).toBe(hex(100));
    expect(count('eth_getBlockByNumber', final)).toBe(1);
    // Cached by the single-call test before: never sent in a batch.
    expect(count('eth_getTransactionReceipt', [txHash])).toBe(0);
    // A batch of hits only never reaches the node (only the probe's batches do).
    const batches = proxy.calls.length;
    const hits = await rpc(url, [batch(3)[0], batch(3)[2]]);
    expect(hits.body.map((x: { id: string }) => x.id).sort()).toEqual(['a3', 'c3']);
    expect(proxy.calls.slice(batches).filter((c) => !c.startsWith('batch> web3_clientVersion') && !c.startsWith('batch> eth_blockNumber')
      && !c.includes('"finalized"') && !c.startsWith('eth_getBlockByNumber ["0x1e",false]'))).toEqual([]);
  });
});

describe('cache and the RPS window together', () => {
  it('a batch over the window: hits answered here and counted in the window, the next elements admitted, the rest -32005 with their ids; hits metered', async () => {
    const free = await t.merchant({ plan: 'free' }); // 5 requests per second
    const e = (await free.call('POST', '/v1/endpoints', '{"name":"window","network_environment_id":1}')).body.endpoint;
    const windowUrl = `${t.gatewayUrl}/${e.uuid}`;
    // With full transactions: the probe's reorg check asks the highest cached block as
    // [height, false], and that background call must not count as this batch's.
    const final = [hex(33), true];
    // Warmed through another endpoint: the cache is the environment's.
    const block = (await rpc(url, { jsonrpc: '2.0', id: 0, method: 'eth_getBlockByNumber', params: final })).body.result;
    expect(block.number).toBe(hex(33));
    await cachedEverywhere(1, 'eth_getBlockByNumber', final);
    const hits = ['h1', 'h2', 'h3'].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_getBlockByNumber', params: final }));
    const heads = ['n1', 'n2', 'n3', 'n4'].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_blockNumber', params: [] }));
    const upstreamBefore = upstreamCalls('eth_getBlockByNumber', final);
    // The endpoint's first request: its window is whole, whatever the second.
    const r = await rpc(windowUrl, [...hits, ...heads]);
    expect(r.status).toBe(200);
    const byId = new Map((r.body as Array<{ id: string }>).map((x) => [x.id, x as any]));
    expect([...byId.keys()].sort()).toEqual(['h1', 'h2', 'h3', 'n1', 'n2', 'n3', 'n4']);
    for (const id of ['h1', 'h2', 'h3']) expect(byId.get(id).result).toEqual(block);
    // Three hits took three of the five places: two eth_blockNumber went upstream, two did not.
    for (const id of ['n1', 'n2']) expect(byId.get(id).result).toBe(hex(100));
    for (const id of ['n3', 'n4']) expect(byId.get(id)).toEqual({ jsonrpc: '2.0', id, error: { code: -32005, message: 'rps limit exceeded' } });
    expect(upstreamCalls('eth_getBlockByNumber', final)).toBe(upstreamBefore);
    expect(proxy.calls.filter((c) => c === `batch> eth_getBlockByNumber ${JSON.stringify(final)}`)).toEqual([]);

    await t.service.gateway.meter.flush();
    const usage = (await free.call('GET', `/v1/endpoints/${e.id}/usage?days=7`)).body.usage;
    const row = (method: string) => usage.methods.find((x: { method: string }) => x.method === method) ?? { requests: 0, credits: 0 };
    expect(row('eth_getBlockByNumber')).toMatchObject({ requests: 3, credits: 75 });
    expect(row('eth_blockNumber').requests).toBe(2);
  });
});

describe('over a WebSocket', () => {
  it('the same cache and getLogs guards as over HTTP: hits answered here, over-range refused', async () => {
    const ws = new WebSocket(url.replace(/^http/, 'ws'));
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    const pending = new Map<unknown, (v: any) => void>();
    ws.on('message', (data) => {
      const v = JSON.parse(String(data));
      const key = Array.isArray(v) ? 'batch' : v.id;
      pending.get(key)?.(v);
    });
    const send = (msg: any) => new Promise<any>((resolve) => {
      pending.set(Array.isArray(msg) ? 'batch' : msg.id, resolve);
      ws.send(JSON.stringify(msg));
    });
    try {
      const final = [hex(34), false];
      const block = (await send({ jsonrpc: '2.0', id: 'w1', method: 'eth_getBlockByNumber', params: final })).result;
      expect(block.number).toBe(hex(34));
      const before = upstreamCalls('eth_getBlockByNumber', final);
      expect(await send({ jsonrpc: '2.0', id: 'w2', method: 'eth_getBlockByNumber', params: final })).toEqual({ jsonrpc: '2.0', id: 'w2', result: block });
      expect(upstreamCalls('eth_getBlockByNumber', final)).toBe(before);

      const range = [{ fromBlock: hex(0), toBlock: hex(40), address: token }];
      const refused = await send({ jsonrpc: '2.0', id: 'w3', method: 'eth_getLogs', params: range });
      expect(refused.id).toBe('w3');
      expect(refused.error.code).toBe(-32602);
      expect(refused.error.message).toContain('the limit is 10 (max_logs_block_range)');
      const inBatch = await send([
        { jsonrpc: '2.0', id: 'b1', method: 'eth_getLogs', params: range },
        { jsonrpc: '2.0', id: 'b2', method: 'eth_getBlockByNumber', params: final },
      ]);
      const byId = new Map((inBatch as Array<{ id: string }>).map((x) => [x.id, x as any]));
      expect(byId.get('b1').error.code).toBe(-32602);
      expect(byId.get('b2').result).toEqual(block);
    } finally {
      ws.close();
    }
  });
});

describe('eth_getLogs guards', () => {
  const filter = (from: number, to: number) => ({ fromBlock: hex(from), toBlock: hex(to), address: token });

  it('refuses a range over max_logs_block_range with an error naming the limit, unmetered', async () => {
    const r = await rpc(url, { jsonrpc: '2.0', id: 9, method: 'eth_getLogs', params: [filter(0, 40)] });
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(9);
    expect(r.body.error.code).toBe(-32602);
    expect(r.body.error.message).toContain('41 blocks, the limit is 10 (max_logs_block_range)');
    // `latest` counts from the known head.
    const l = await rpc(url, { jsonrpc: '2.0', id: 10, method: 'eth_getLogs', params: [{ fromBlock: '0x0', address: token }] });
    expect(l.body.error.code).toBe(-32602);
    // Without an id (a notification) too: the node would still do the work.
    const n = await rpc(url, { jsonrpc: '2.0', method: 'eth_getLogs', params: [filter(0, 40)] });
    expect(n.body).toMatchObject({ id: null, error: { code: -32602 } });
    // Nor through a filter over the same range.
    const f = await rpc(splitUrl, { jsonrpc: '2.0', id: 11, method: 'eth_newFilter', params: [filter(0, 40)] });
    expect(f.body).toMatchObject({ id: 11, error: { code: -32602, message: expect.stringContaining('the limit is 7') } });
    const ok = await rpc(splitUrl, { jsonrpc: '2.0', id: 12, method: 'eth_newFilter', params: [filter(0, 5)] });
    expect(ok.body.result).toMatch(/^0x/);
  });

  it('refuses an over-range element of a batch and answers the others', async () => {
    const r = await rpc(url, [
      { jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [filter(0, 40)] },
      { jsonrpc: '2.0', id: 2, method: 'eth_chainId', params: [] },
    ]);
    expect(r.status).toBe(200);
    const byId = new Map((r.body as Array<{ id: number }>).map((x) => [x.id, x]));
    expect((byId.get(1) as any).error.code).toBe(-32602);
    expect((byId.get(2) as any).result).toBe('0x7a69');
  });

  it('a batch of nothing but over-range queries is answered 200 with each refusal, as a single one is', async () => {
    const r = await rpc(url, [
      { jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [filter(0, 40)] },
      { jsonrpc: '2.0', id: 2, method: 'eth_getLogs', params: [filter(0, 50)] },
    ]);
    expect(r.status).toBe(200);
    expect((r.body as Array<{ id: number; error: { code: number } }>).map((x) => [x.id, x.error.code]).sort()).toEqual([[1, -32602], [2, -32602]]);
  });

  it('caps the number of logs one answer may carry', async () => {
    const r = await rpc(url, { jsonrpc: '2.0', id: 5, method: 'eth_getLogs', params: [filter(0, 9)] });
    expect(r.body.error.code).toBe(-32012);
    expect(r.body.error.message).toContain('more than 3 logs');
  });

  it('splits an over-range query into chunks and merges them in order, equal to a direct call', async () => {
    const params = [filter(0, 40)];
    const expected = await direct('eth_getLogs', params);
    expect(expected.length).toBe(6);
    const r = await rpc(splitUrl, { jsonrpc: '2.0', id: 'logs', method: 'eth_getLogs', params });
    expect(r.body).toEqual({ jsonrpc: '2.0', id: 'logs', result: expected });
    // 41 blocks in chunks of 7, each sent upstream as its own call.
    for (const [a, b] of chunks(0, 40, 7)) expect(upstreamCalls('eth_getLogs', [filter(a, b)])).toBe(1);
    expect(upstreamCalls('eth_getLogs', params)).toBe(0);
  });

  it('prices a range by the blocks it covers', async () => {
    const id = (await m.call('POST', '/v1/endpoints', '{"name":"price","network_environment_id":2}')).body.endpoint;
    await rpc(`${t.gatewayUrl}/${id.uuid}`, { jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [filter(0, 40)] });
    await rpc(`${t.gatewayUrl}/${id.uuid}`, { jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [filter(3, 3)] });
    await t.service.gateway.meter.flush();
    const usage = (await m.call('GET', `/v1/endpoints/${id.id}/usage?days=7`)).body.usage;
    expect(usage.methods.find((x: { method: string }) => x.method === 'eth_getLogs')).toMatchObject({ requests: 2, credits: 75 * 5 + 75 });
  });
});

describe('cache and getLogs rules', () => {
  const view = { head: 100, finalized: 36 };
  it('plans only what cannot change', () => {
    expect(planCache(1, evmCachePlan, 'eth_getBlockByNumber', ['latest', false], view)).toBeUndefined();
    expect(planCache(1, evmCachePlan, 'eth_getBlockByNumber', ['0x25', false], view)).toBeUndefined();
    expect(planCache(1, evmCachePlan, 'eth_getBlockByNumber', ['0x24', false], view)?.height).toBe(36);
    expect(planCache(1, evmCachePlan, 'eth_call', [{ to: '0x0' }, 'latest'], view)).toBeUndefined();
    expect(planCache(1, evmCachePlan, 'eth_call', [{ to: '0x0' }, '0x10'], view)?.height).toBe(16);
    expect(planCache(1, evmCachePlan, 'eth_getBalance', ['0x0'], view)).toBeUndefined();
    expect(planCache(1, evmCachePlan, 'eth_blockNumber', [], view)).toBeUndefined();
    expect(planCache(1, evmCachePlan, 'eth_chainId', [], undefined)).toBeDefined();
    expect(planCache(1, evmCachePlan, 'eth_getTransactionReceipt', ['0xab'], undefined)).toBeUndefined();
    const tx = planCache(1, evmCachePlan, 'eth_getTransactionReceipt', ['0xab'], view)!;
    expect(finalHeightOf(tx, null, view)).toBeUndefined();
    expect(finalHeightOf(tx, { blockNumber: '0x25', blockHash: '0xAA' }, view)).toBeUndefined();
    expect(finalHeightOf(tx, { blockNumber: '0x24', blockHash: '0xAA' }, view)).toEqual({ height: 36, hash: '0xaa' });
    expect(finalHeightOf(tx, { blockNumber: null }, view)).toBeUndefined();
  });
  it('finds where a reorg starts by bisecting the heights cached answers rely on', async () => {
    const anchors = [50, 40, 30, 20, 10, 5].map((h) => [h, `0x${h}`] as const);
    const asked: number[] = [];
    const chainChangedAbove = (h: number) => async (i: number) => { asked.push(anchors[i]![0]); return anchors[i]![0] <= h; };
    expect(await firstChangedHeight(anchors, chainChangedAbove(50))).toBeUndefined();
    expect(asked).toEqual([50]);
    expect(await firstChangedHeight(anchors, chainChangedAbove(25))).toBe(21);
    expect(await firstChangedHeight(anchors, chainChangedAbove(5))).toBe(6);
    expect(await firstChangedHeight(anchors, chainChangedAbove(1))).toBe(0);
    expect(await firstChangedHeight([], chainChangedAbove(1))).toBeUndefined();
  });

  it('drops what a reorg covers and keeps what is below it; bounded by bytes', () => {
    const cache = new ResponseCache(10_000);
    cache.set('a', '"block 10"', 1, 10, '0xa');
    cache.set('b', '"call at 20"', 1, 20, undefined);
    cache.set('c', '"other env"', 2, 20, '0xc');
    cache.set('d', '"chain id"', 1, undefined, undefined);
    expect(cache.dropFrom(1, 15)).toBe(1);
    expect([cache.get('a'), cache.get('b'), cache.get('c'), cache.get('d')]).toEqual(['"block 10"', undefined, '"other env"', '"chain id"']);
    // Two answers disagreeing on the block at one height: what relied on the old one goes.
    cache.set('e', '"tx in 10"', 1, 10, '0xb');
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('e')).toBe('"tx in 10"');
    for (let i = 0; i < 200; i++) cache.set(`k${i}`, `"${'x'.repeat(100)}"`, 1, 30, undefined);
    expect(cache.snapshot().bytes).toBeLessThanOrEqual(10_000);
    // The hash of block 10 went with the last answer relying on it.
    expect(cache.anchors(1)).toEqual([]);
    expect(cache.get('k199')).toBeDefined();
    expect(cache.get('k0')).toBeUndefined();
    // Evicted entries leave the height index too: a drop counts only what is there.
    const present = Array.from({ length: 200 }, (_, i) => cache.get(`k${i}`)).filter((v) => v !== undefined).length;
    expect(present).toBeLessThan(200);
    expect(cache.dropFrom(1, 30)).toBe(present);
  });

  it('shares answers and reorg drops between instances through a shared tier', async () => {
    // An in-process stand-in with the shared tier's contract (the Redis tier: gateway-cache-redis.test.ts).
    const store = new Map<string, { text: string; envId: number; height: number | undefined }>();
    const listeners: Array<(envId: number, height: number) => void> = [];
    const tier = (): SharedCacheTier => {
      let own: ((envId: number, height: number) => void) | undefined;
      return {
        get: async (k) => store.get(k),
        set: async (k, text, envId, height) => { store.set(k, { text, envId, height }); },
        dropFrom: async (envId, height) => {
          for (const [k, e] of store) if (e.envId === envId && e.height !== undefined && e.height >= height) store.delete(k);
          for (const l of listeners) if (l !== own) l(envId, height);
        },
        onDrop: (l) => { own = l; listeners.push(l); },
      };
    };
    const a = new ResponseCache(10_000, tier());
    const b = new ResponseCache(10_000, tier());
    a.set('block', '"20"', 1, 20, '0x20');
    await new Promise((r) => setImmediate(r));
    expect(b.get('block')).toBeUndefined();
    expect(await b.getShared('block')).toBe('"20"');
    expect(b.get('block')).toBe('"20"');
    // A reorg seen by one instance empties the others' memory too.
    a.dropFrom(1, 10);
    await new Promise((r) => setImmediate(r));
    expect(b.get('block')).toBeUndefined();
    expect(await b.getShared('block')).toBeUndefined();
  });

  it('resolves getLogs ranges and chunks them in order', () => {
    expect(evmLogsQuery.range([{ fromBlock: '0x0' }], view)).toEqual({ from: 0, to: 100 });
    expect(evmLogsQuery.range([{ fromBlock: 'earliest', toBlock: 'finalized' }], view)).toEqual({ from: 0, to: 36 });
    expect(evmLogsQuery.range([{ blockHash: '0xab' }], view)).toBeUndefined();
    expect(evmLogsQuery.range([{ fromBlock: '0x0' }], undefined)).toBeUndefined();
    expect(chunks(0, 40, 7)).toEqual([[0, 6], [7, 13], [14, 20], [21, 27], [28, 34], [35, 40]]);
  });
  it('shows upstream URLs without their secret parts', () => {
    expect(redactUrl('https://user:pw@eth.example.com/v3/0123456789abcdef0123456789abcdef?key=secret')).toBe('https://***@eth.example.com/v3/***?key=***');
    expect(redactUrl('http://127.0.0.1:8545')).toBe('http://127.0.0.1:8545');
    expect(redactUrl('https://node.example/rpc')).toBe('https://node.example/rpc');
  });
});

// Last: these rewind the chain under the other tests.
describe('reorgs drop what they cover', () => {
  it('a changed hash under cached answers (seen by the probe) drops them, and only them', async () => {
    // Probe rounds by hand from here: each step is seen exactly as the test makes it.
    await t.service.gateway.probe.stop();
    const params = [hex(25), true];
    const old = (await rpc(url, { jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params })).body.result;
    const tx = (await rpc(url, { jsonrpc: '2.0', id: 1, method: 'eth_getTransactionReceipt', params: [txHash] })).body.result;
    const calls = upstreamCalls('eth_getBlockByNumber', params);
    await rpc(url, { jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params });
    expect(upstreamCalls('eth_getBlockByNumber', params)).toBe(calls);
    const dropped = t.service.gateway.cache!.snapshot().dropped;

    // Back to block 20 and 80 other blocks on top (2 s apart instead of 1): same height, same finalized height.
    expect(await direct('evm_revert', [snapshotId])).toBe(true);
    snapshotId = await direct('evm_snapshot', []);
    await direct('anvil_mine', [hex(80), hex(2)]);
    const replaced = await direct('eth_getBlockByNumber', params);
    expect(replaced.hash).not.toBe(old.hash);
    await t.service.gateway.probe.probeAll();
    expect(t.service.gateway.chain.get(1)).toEqual({ head: 100, finalized: 36 });

    const now = await rpc(url, { jsonrpc: '2.0', id: 2, method: 'eth_getBlockByNumber', params });
    expect(now.body).toEqual({ jsonrpc: '2.0', id: 2, result: replaced });
    expect(t.service.gateway.cache!.snapshot().dropped).toBeGreaterThan(dropped);
    // The transaction's block (below the fork) still matches: its receipt is still a hit.
    const receiptCalls = upstreamCalls('eth_getTransactionReceipt', [txHash]);
    expect((await rpc(url, { jsonrpc: '2.0', id: 3, method: 'eth_getTransactionReceipt', params: [txHash] })).body.result).toEqual(tx);
    expect(upstreamCalls('eth_getTransactionReceipt', [txHash])).toBe(receiptCalls);
  });

  it('a finalized height going back drops everything above it', async () => {
    const params = [hex(25), true];
    await rpc(url, { jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params });
    expect(await direct('evm_revert', [snapshotId])).toBe(true);
    await t.service.gateway.probe.probeAll();
    expect(t.service.gateway.chain.get(1)!.finalized).toBeLessThan(25);
    // Block 25 is gone from the chain and from the cache.
    expect((await rpc(url, { jsonrpc: '2.0', id: 4, method: 'eth_getBlockByNumber', params })).body).toEqual({ jsonrpc: '2.0', id: 4, result: null });
  });
});

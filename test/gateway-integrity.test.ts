import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { WebSocket } from 'ws';
import type { Address } from 'viem';
import { deployToken, startAnvil, type Anvil } from './helpers/anvil.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

/**
 * A fault-injecting upstream in front of anvil: counts client calls by method, can lie (a wrong
 * result for the methods in `lie`), reformat (upper-case hex, keys in another order: the same
 * answer), delay or hang. Batches (the probe's) always pass through unchanged.
 */
interface FaultyUpstream {
  url: string;
  calls: Map<string, number>;
  lie: Set<string>;
  /** Methods answered with a node's own error (`header not found`), HTTP 200. */
  nodeError: Set<string>;
  reformat: boolean;
  delayMs: number;
  hang: boolean;
  close(): Promise<void>;
}

function wrong(v: unknown): unknown {
  if (Array.isArray(v)) return []; // a pruned node's empty result
  if (typeof v === 'string' && /^0x[0-9a-f]+$/i.test(v)) return `0x${(BigInt(v) + 1n).toString(16)}`;
  if (typeof v === 'object' && v !== null) return { ...v, status: (v as { status?: string }).status === '0x1' ? '0x0' : '0x1' };
  return '0x1';
}

function reformatted(v: unknown): unknown {
  if (typeof v === 'string') return /^0x[0-9a-f]+$/i.test(v) ? `0x${v.slice(2).toUpperCase()}` : v;
  if (Array.isArray(v)) return v.map(reformatted);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reformatted(x)]));
  return v;
}

async function startFaulty(target: string): Promise<FaultyUpstream> {
  const t = new URL(target);
  const state: Omit<FaultyUpstream, 'url' | 'close'> = { calls: new Map(), lie: new Set(), nodeError: new Set(), reformat: false, delayMs: 0, hang: false };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const call = JSON.parse(body.toString()) as { method?: string; id?: unknown } | unknown[];
      const method = Array.isArray(call) ? undefined : call.method;
      // By method, and by method and id: the probe's own single calls have ids of their own.
      for (const k of method && !Array.isArray(call) ? [method, `${method}#${JSON.stringify(call.id)}`] : []) state.calls.set(k, (state.calls.get(k) ?? 0) + 1);
      if (method && state.hang) return;
      if (method && state.nodeError.has(method) && !Array.isArray(call)) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32000, message: 'header not found' } }));
        return;
      }
      setTimeout(() => {
        const up = httpRequest({ host: t.hostname, port: t.port, path: t.pathname, method: 'POST', headers: { 'content-type': 'application/json' } }, (ur) => {
          const parts: Buffer[] = [];
          ur.on('data', (c: Buffer) => parts.push(c));
          ur.on('end', () => {
            let text = Buffer.concat(parts).toString();
            if (method && (state.lie.has(method) || state.reformat)) {
              const a = JSON.parse(text) as { result?: unknown };
              if ('result' in a) a.result = state.lie.has(method) ? wrong(a.result) : reformatted(a.result);
              text = JSON.stringify(a);
            }
            res.writeHead(ur.statusCode ?? 502, { 'content-type': 'application/json' }).end(text);
          });
        });
        up.on('error', () => res.destroy());
        up.end(body);
      }, method ? state.delayMs : 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  });
}

let anvil: Anvil;
let a: FaultyUpstream;
let b: FaultyUpstream;
let liar: FaultyUpstream;
let hung1: FaultyUpstream;
let hung2: FaultyUpstream;
let t: TestService;
let m: Merchant;
const urls: Record<string, string> = {};
const ids: Record<string, number> = {};
/** A provider key in the liar's URL path on network `maj`: no log line may show it. */
const PATH_KEY = 'k3yInThePath0123456789abcdef';
const logLines: string[] = [];
let who: Address;
let txHash: string;
let token: Address;

const credits = { default: 20, methods: { eth_getBalance: 7, eth_getTransactionReceipt: 11 } };
const majority = { methods: ['eth_getBalance', 'eth_getTransactionReceipt', 'eth_getLogs'], k: 3, m: 2 };
const atFixedBlock = { methods: ['eth_getBlockByNumber', 'eth_call'], k: 3, m: 2, when: 'fixed_block' as const };

async function rpc(name: string, method: string, params: unknown[], id: unknown = 1): Promise<{ status: number; body: any; ms: number }> {
  const t0 = performance.now();
  const r = await request(urls[name]!, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) });
  return { status: r.statusCode, body: await r.body.json(), ms: performance.now() - t0 };
}

async function direct(method: string, params: unknown[]): Promise<unknown> {
  const r = await request(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await r.body.json()) as { result: unknown }).result;
}

const asked = (u: FaultyUpstream, method: string, id?: unknown) => u.calls.get(id === undefined ? method : `${method}#${JSON.stringify(id)}`) ?? 0;

async function metric(name: string, labels: string): Promise<number> {
  const text = await (await request(`${t.metricsUrl}/metrics`)).body.text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

async function until(cond: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`condition not met in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function usage(name: string, method: string): Promise<{ requests: number; credits: number }> {
  await t.service.gateway.meter.flush();
  const u = (await m.call('GET', `/v1/endpoints/${ids[name]}/usage?days=7`)).body.usage;
  const row = u.methods.find((x: { method: string }) => x.method === method) ?? { requests: 0, credits: 0 };
  return { requests: row.requests, credits: row.credits };
}

beforeAll(async () => {
  anvil = await startAnvil();
  const [from, to] = anvil.accounts as [Address, Address];
  who = to;
  txHash = await anvil.wallet.sendTransaction({ account: from, chain: null, to, value: 1n });
  await anvil.public.waitForTransactionReceipt({ hash: txHash as `0x${string}`, pollingInterval: 50 });
  token = await deployToken(anvil, from, 10n ** 24n); // its mint is a log
  await direct('anvil_mine', [`0x${(100 - Number(await direct('eth_blockNumber', []))).toString(16)}`]); // head 100, finalized 36
  [a, b, liar, hung1, hung2] = await Promise.all([1, 2, 3, 4, 5].map(() => startFaulty(anvil.url))) as [FaultyUpstream, FaultyUpstream, FaultyUpstream, FaultyUpstream, FaultyUpstream];
  hung1.hang = true;
  hung2.hang = true;
  const env = (id: number, upstreams: string[]) => [{ id, slug: 'anvil', upstreams }];
  t = await startTestService({
    networks: [
      { id: 1, slug: 'maj', name: 'Majority', environments: env(1, [a.url, b.url, `${liar.url}/${PATH_KEY}`]), credits, integrity: [majority, atFixedBlock] },
      { id: 2, slug: 'strict', name: 'Strict', environments: env(2, [a.url, b.url, liar.url]), credits, integrity: [{ ...majority, on_disagreement: 'error' }] },
      { id: 3, slug: 'pair', name: 'Pair', environments: env(3, [a.url, liar.url]), credits, integrity: [{ ...majority, k: 2 }] },
      { id: 4, slug: 'off', name: 'Off', environments: env(4, [a.url, b.url, liar.url]), credits },
      { id: 5, slug: 'slow', name: 'Slow', environments: env(5, [a.url, b.url, hung1.url]), credits, integrity: [{ ...majority, timeout_ms: 5000 }] },
      { id: 6, slug: 'stuck', name: 'Stuck', environments: env(6, [a.url, hung1.url, hung2.url]), credits, integrity: [{ ...majority, timeout_ms: 300 }] },
      { id: 7, slug: 'rare', name: 'Rare', environments: env(7, [a.url, b.url, liar.url]), credits, integrity: [majority] },
    ],
    // One worker: demotion is each worker's own (docs/gateway.md).
    gateway: { probe_interval_ms: 200, workers: 1 },
  }, { log: (line) => logLines.push(line) });
  m = await t.merchant({ plan: 'pro' });
  for (const [name, envId] of [['maj', 1], ['strict', 2], ['pair', 3], ['off', 4], ['slow', 5], ['stuck', 6], ['rare', 7]] as const) {
    const e = (await m.call('POST', '/v1/endpoints', JSON.stringify({ name, network_environment_id: envId }))).body.endpoint;
    urls[name] = `${t.gatewayUrl}/${e.uuid}`;
    ids[name] = e.id;
  }
  await until(() => t.service.gateway.chain.get(1)?.finalized === 36);
}, 90_000);

afterAll(async () => {
  await t?.stop();
  await Promise.all([a, b, liar, hung1, hung2].map((u) => u?.close()));
  await anvil?.stop();
});

describe('integrity policy', () => {
  it('is off by default: a listed method on a network without a policy asks one upstream', async () => {
    const before = [a, b, liar].map((u) => asked(u, 'eth_getBalance'));
    const r = await rpc('off', 'eth_getBalance', [who, 'latest']);
    expect(r.body.result).toBe(await direct('eth_getBalance', [who, 'latest']));
    expect([a, b, liar].map((u, i) => asked(u, 'eth_getBalance') - before[i]!).reduce((x, y) => x + y)).toBe(1);
  });

  it('asks k upstreams, answers what they agree on (in any key order or hex case), and bills the client once', async () => {
    b.reformat = true;
    const before = [a, b, liar].map((u) => asked(u, 'eth_getTransactionReceipt'));
    const billed = await usage('maj', 'eth_getTransactionReceipt');
    const r = await rpc('maj', 'eth_getTransactionReceipt', [txHash], 'agree');
    b.reformat = false;
    expect(r.status).toBe(200);
    expect(r.body.id).toBe('agree');
    expect(r.body.result.transactionHash.toLowerCase()).toBe(txHash);
    expect([a, b, liar].map((u, i) => asked(u, 'eth_getTransactionReceipt') - before[i]!)).toEqual([1, 1, 1]);
    const after = await usage('maj', 'eth_getTransactionReceipt');
    expect({ requests: after.requests - billed.requests, credits: after.credits - billed.credits }).toEqual({ requests: 1, credits: 11 });
    // The reformatted answer agreed: nobody disagreed.
    await until(async () => (await metric('rpcctl_integrity_checks_total', 'network="maj",env="anvil",outcome="agreed"')) >= 1);
    expect(await metric('rpcctl_upstream_disagreements_total', `network="maj",env="anvil",upstream="${b.url}"`)).toBe(0);
  });

  it('applies a fixed_block policy to a fixed block only, and caches the agreed final answer', async () => {
    await rpc('maj', 'eth_getBlockByNumber', ['latest', false], 'latest');
    expect([a, b, liar].map((u) => asked(u, 'eth_getBlockByNumber', 'latest')).reduce((x, y) => x + y)).toBe(1);

    const first = await rpc('maj', 'eth_getBlockByNumber', ['0x1e', false], 'first');
    expect(first.body.result).toEqual(await direct('eth_getBlockByNumber', ['0x1e', false]));
    expect([a, b, liar].map((u) => asked(u, 'eth_getBlockByNumber', 'first'))).toEqual([1, 1, 1]);
    const second = await rpc('maj', 'eth_getBlockByNumber', ['0x1e', false], 'second');
    expect(second.body).toEqual({ jsonrpc: '2.0', id: 'second', result: first.body.result });
    // From the cache: no upstream asked.
    expect([a, b, liar].map((u) => asked(u, 'eth_getBlockByNumber', 'second'))).toEqual([0, 0, 0]);

    const call = await rpc('maj', 'eth_call', [{ to: who, data: '0x' }, 'finalized']);
    expect(call.body.result).toBe('0x');
  });

  it('on_disagreement error: one differing answer among three is answered -32013, not billed', async () => {
    liar.lie.add('eth_getBalance');
    try {
      const billed = await usage('strict', 'eth_getBalance');
      const r = await rpc('strict', 'eth_getBalance', [who, 'latest'], 'strict');
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ jsonrpc: '2.0', id: 'strict', error: { code: -32013, message: 'upstream answers disagree' } });
      expect(await usage('strict', 'eth_getBalance')).toEqual(billed);
      await until(async () => (await metric('rpcctl_upstream_disagreements_total', `network="strict",env="anvil",upstream="${liar.url}"`)) === 1);
    } finally {
      liar.lie.clear();
    }
  });

  it('a node\'s own error (header not found) is no answer: the others agree, and it counts as that node\'s failure', async () => {
    liar.nodeError.add('eth_getBalance');
    try {
      const failures = () => (t.service.gateway.upstreams.snapshot().get(2) ?? []).find((u) => u.url === liar.url)?.consecutive_failures ?? 0;
      const r = await rpc('strict', 'eth_getBalance', [who, 'latest'], 'node-error');
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ jsonrpc: '2.0', id: 'node-error', result: await anvil.public.getBalance({ address: who }).then((v) => `0x${v.toString(16)}`) });
      await until(async () => failures() > 0);
    } finally {
      liar.nodeError.clear();
    }
  });

  it('checks the batch elements under a policy one by one and answers the rest as one batch, billing each once', async () => {
    const before = [a, b, liar].map((u) => [asked(u, 'eth_getBalance', 'b1'), asked(u, 'eth_chainId', 'b2')]);
    const billed = [await usage('strict', 'eth_getBalance'), await usage('strict', 'eth_chainId')];
    const batch = async () => {
      const r = await request(urls.strict!, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([
        { jsonrpc: '2.0', id: 'b1', method: 'eth_getBalance', params: [who, 'latest'] },
        { jsonrpc: '2.0', id: 'b2', method: 'eth_chainId', params: [] },
        { jsonrpc: '2.0', id: 'b3' },
      ]) });
      const list = await r.body.json() as Array<{ id: string; result?: unknown; error?: { code: number } }>;
      return Object.fromEntries(list.map((x) => [x.id, x]));
    };
    const ok = await batch();
    expect(ok.b1!.result).toBe(await direct('eth_getBalance', [who, 'latest']));
    expect(ok.b2!.result).toBe('0x7a69');
    expect(ok.b3!.error!.code).toBe(-32600);
    // The checked element went to all three, the other to one.
    expect([a, b, liar].map((u, i) => asked(u, 'eth_getBalance', 'b1') - before[i]![0]!)).toEqual([1, 1, 1]);
    expect([a, b, liar].map((u, i) => asked(u, 'eth_chainId', 'b2') - before[i]![1]!).reduce((x, y) => x + y)).toBeLessThanOrEqual(1);
    liar.lie.add('eth_getBalance');
    try {
      const split = await batch();
      expect(split.b1!.error).toEqual({ code: -32013, message: 'upstream answers disagree' });
      expect(split.b2!.result).toBe('0x7a69');
    } finally {
      liar.lie.clear();
    }
    // Billed: the agreed balance once, the chain id twice; the disagreement not at all.
    expect(await usage('strict', 'eth_getBalance')).toEqual({ requests: billed[0]!.requests + 1, credits: billed[0]!.credits + 7 });
    expect(await usage('strict', 'eth_chainId')).toEqual({ requests: billed[1]!.requests + 2, credits: billed[1]!.credits + 40 });
  });

  it('applies over a WebSocket too: a single call and a batch element', async () => {
    const ws = new WebSocket(urls.strict!.replace(/^http/, 'ws'));
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    const send = (msg: unknown) => new Promise<any>((resolve) => {
      ws.once('message', (data) => resolve(JSON.parse(String(data))));
      ws.send(JSON.stringify(msg));
    });
    liar.lie.add('eth_getBalance');
    try {
      expect(await send({ jsonrpc: '2.0', id: 'ws1', method: 'eth_getBalance', params: [who, 'latest'] }))
        .toEqual({ jsonrpc: '2.0', id: 'ws1', error: { code: -32013, message: 'upstream answers disagree' } });
      const list = await send([{ jsonrpc: '2.0', id: 'ws2', method: 'eth_getBalance', params: [who, 'latest'] }, { jsonrpc: '2.0', id: 'ws3', method: 'eth_chainId', params: [] }]) as any[];
      expect(list.find((x) => x.id === 'ws2').error.code).toBe(-32013);
      expect(list.find((x) => x.id === 'ws3').result).toBe('0x7a69');
      expect([a, b, liar].map((u) => asked(u, 'eth_getBalance', 'ws1'))).toEqual([1, 1, 1]);
    } finally {
      liar.lie.clear();
      ws.close();
    }
  });

  it('eth_getLogs under a policy: a pruned node\'s empty answer is outvoted', async () => {
    liar.lie.add('eth_getLogs');
    try {
      const params = [{ fromBlock: '0x0', toBlock: '0x10', address: token }];
      const truth = await direct('eth_getLogs', params) as unknown[];
      expect(truth.length).toBeGreaterThan(0);
      const r = await rpc('maj', 'eth_getLogs', params, 'logs');
      expect(r.body).toEqual({ jsonrpc: '2.0', id: 'logs', result: truth });
      expect([a, b, liar].map((u) => asked(u, 'eth_getLogs', 'logs'))).toEqual([1, 1, 1]);
    } finally {
      liar.lie.clear();
    }
  });

  it('majority: two upstreams that disagree with m = 2 are answered -32013', async () => {
    liar.lie.add('eth_getBalance');
    try {
      const r = await rpc('pair', 'eth_getBalance', [who, 'latest'], 7);
      expect(r.body).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32013, message: 'upstream answers disagree' } });
      await until(async () => (await metric('rpcctl_integrity_checks_total', 'network="pair",env="anvil",outcome="disagreed"')) === 1);
    } finally {
      liar.lie.clear();
    }
  });

  it('one liar among three: the majority answers the truth, the liar is counted, and demoted after repeated lies', async () => {
    liar.lie.add('eth_getBalance');
    // The liar answers first: the answer waits for two that agree.
    a.delayMs = 30;
    b.delayMs = 30;
    const liarLabel = `network="maj",env="anvil",upstream="${liar.url}"`;
    try {
      const truth = await direct('eth_getBalance', [who, 'latest']);
      const lies = await metric('rpcctl_upstream_disagreements_total', liarLabel);
      for (let i = 1; i <= 3; i++) {
        const r = await rpc('maj', 'eth_getBalance', [who, 'latest'], i);
        expect(r.body).toEqual({ jsonrpc: '2.0', id: i, result: truth });
        await until(async () => (await metric('rpcctl_upstream_disagreements_total', liarLabel)) === lies + i);
      }
      expect(await metric('rpcctl_upstream_disagreements_total', `network="maj",env="anvil",upstream="${a.url}"`)).toBe(0);
      expect(await metric('rpcctl_upstream_demotions_total', liarLabel)).toBe(1);
      // Logged as warnings (`part: warn:`) naming the upstream by scheme://host:port only.
      const integrityLines = logLines.filter((l) => l.includes('integrity: maj/anvil'));
      expect(integrityLines.some((l) => l.startsWith(`gateway: warn: integrity: maj/anvil: upstream ${liar.url} demoted`))).toBe(true);
      expect(integrityLines.some((l) => l.includes(`upstream ${liar.url} answered `))).toBe(true);
      expect(logLines.filter((l) => l.includes(PATH_KEY))).toEqual([]);
      // Demoted: though the fastest, it gets none of the ordinary calls while the others are up.
      for (let i = 0; i < 5; i++) expect((await rpc('maj', 'eth_blockNumber', [], 'sel')).body.result).toMatch(/^0x/);
      expect(asked(liar, 'eth_blockNumber', 'sel')).toBe(0);
      // The other network's selection is its own: the fastest, the liar serves there.
      a.delayMs = 100;
      b.delayMs = 100;
      await until(async () => {
        await rpc('off', 'eth_blockNumber', [], 'other');
        return asked(liar, 'eth_blockNumber', 'other') > 0;
      });
    } finally {
      liar.lie.clear();
      a.delayMs = 0;
      b.delayMs = 0;
    }
  });

  it('does not demote an upstream whose disagreements are under 10 % of its answers in the minute', async () => {
    const label = `network="rare",env="anvil",upstream="${liar.url}"`;
    for (let i = 0; i < 30; i++) await rpc('rare', 'eth_getBalance', [who, 'latest'], i);
    liar.lie.add('eth_getBalance');
    try {
      for (let i = 1; i <= 3; i++) {
        await rpc('rare', 'eth_getBalance', [who, 'latest'], `lie${i}`);
        await until(async () => (await metric('rpcctl_upstream_disagreements_total', label)) === i);
      }
      expect(await metric('rpcctl_upstream_demotions_total', label)).toBe(0);
    } finally {
      liar.lie.clear();
    }
  });

  it('answers from m fast agreeing upstreams without waiting for a hung one', async () => {
    const r = await rpc('slow', 'eth_getBalance', [who, 'latest'], 's');
    expect(r.body).toEqual({ jsonrpc: '2.0', id: 's', result: await direct('eth_getBalance', [who, 'latest']) });
    // Well inside the policy's 5 s timeout.
    expect(r.ms).toBeLessThan(2500);
    expect(asked(hung1, 'eth_getBalance')).toBeGreaterThanOrEqual(1);
  });

  it('fewer than m answers within the policy timeout: the upstream timeout error, not billed', async () => {
    const billed = await usage('stuck', 'eth_getBalance');
    const r = await rpc('stuck', 'eth_getBalance', [who, 'latest'], 'late');
    expect(r.status).toBe(504);
    expect(r.body.error).toEqual({ code: -32011, message: 'upstream timed out' });
    expect(await usage('stuck', 'eth_getBalance')).toEqual(billed);
    await until(async () => (await metric('rpcctl_integrity_checks_total', 'network="stuck",env="anvil",outcome="insufficient"')) === 1);
  });
});

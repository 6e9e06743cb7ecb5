import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { startProxy, type LoopbackProxy } from './helpers/proxy.js';
import { startTestService, type TestService } from './helpers/service.js';
import { cli } from './helpers/cli.js';
import { Registry } from 'prom-client';
import { registerUpstreamMetrics } from '../src/gateway/index.js';
import { UpstreamDirectory } from '../src/gateway/upstreams/index.js';

// Three nodes behind one environment, each behind a counting loopback proxy:
//   lag  — 40 blocks behind the others (over max_lag_blocks)
//   slow — up to date, answers after 300 ms
//   fast — up to date; killed mid-test, then restarted on its port
let fast: Anvil;
let lagging: Anvil;
let slowNode: Anvil;
let pFast: LoopbackProxy;
let pLag: LoopbackProxy;
let pSlow: LoopbackProxy;
let t: TestService;
let url: string;

const HEAD = 50;
const HEAD_AFTER_TX = HEAD + 1;

async function mine(a: Anvil, n: number) {
  await request(a.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: [`0x${n.toString(16)}`] }) }).then((r) => r.body.text());
}

async function blockNumber(): Promise<{ status: number; value: number | undefined }> {
  const r = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' });
  const body = await r.body.json() as { result?: string };
  return { status: r.statusCode, value: body.result ? Number.parseInt(body.result, 16) : undefined };
}

/** Client calls a node got (the probe's batches not counted). */
const served = (p: LoopbackProxy) => p.calls.filter((c) => c === 'eth_blockNumber []').length;

function snapshot() {
  return t.service.gateway.upstreams.snapshot().get(1) ?? [];
}

async function until(cond: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`condition not met in ${ms} ms: ${JSON.stringify(snapshot())}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  [fast, lagging, slowNode] = await Promise.all([startAnvil(), startAnvil(), startAnvil()]);
  await Promise.all([mine(fast, HEAD), mine(slowNode, HEAD), mine(lagging, HEAD - 40)]);
  [pFast, pLag, pSlow] = await Promise.all([startProxy(fast.url), startProxy(lagging.url), startProxy(slowNode.url, 300)]);
  t = await startTestService({
    // Config order puts the worst first: selection, not order, must pick.
    networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'anvil', upstreams: [pLag.url, pSlow.url, pFast.url] }] }],
    gateway: { probe_interval_ms: 200, max_lag_blocks: 5 },
  });
  const m = await t.merchant();
  const e = (await m.call('POST', '/v1/endpoints', '{"name":"multi","network_environment_id":1}')).body.endpoint;
  url = `${t.gatewayUrl}/${e.uuid}`;
  // Every upstream probed at least twice: heads and latencies known.
  await until(() => snapshot().length === 3 && snapshot().every((u) => u.latency_ms !== null && u.head !== null) && snapshot()[0]!.status === 'lagging');
  await new Promise((r) => setTimeout(r, 500));
}, 90_000);

afterAll(async () => {
  await t?.stop();
  await Promise.all([pFast, pLag, pSlow].map((p) => p?.close()));
  await Promise.all([fast, lagging, slowNode].map((a) => a?.stop()));
});

describe('upstream selection by health, latency and lag', () => {
  it('sees the lagging node as lagging and shows URLs without secrets', () => {
    const s = snapshot();
    expect(s.map((u) => u.status)).toEqual(['lagging', 'healthy', 'healthy']);
    expect(s[0]).toMatchObject({ head: HEAD - 40, lag: 40 });
    expect(s[2]).toMatchObject({ head: HEAD, lag: 0 });
    expect(s[1]!.latency_ms!).toBeGreaterThan(s[2]!.latency_ms!);
  });

  it('exposes the same state as Prometheus gauges', async () => {
    const registry = new Registry();
    const g = t.service.gateway;
    registerUpstreamMetrics(registry, { upstreams: g.upstreams, cache: g.cache, chain: g.chain, catalog: t.store.catalog });
    const text = await registry.metrics();
    expect(text).toContain(`rpcctl_upstream_lag_blocks{network="eth",env="anvil",upstream="${pLag.url}"} 40`);
    expect(text).toContain(`rpcctl_upstream_up{network="eth",env="anvil",upstream="${pFast.url}"} 1`);
    expect(text).toContain(`rpcctl_chain_head{network="eth",env="anvil"} ${HEAD}`);
    expect(text).toMatch(/rpcctl_cache_entries \d+/);
    expect(text).toMatch(/rpcctl_cache_hits_total \d+/);
    expect(text).toContain(`rpcctl_upstream_latency_ewma_seconds{network="eth",env="anvil",upstream="${pFast.url}"} 0.`);
  });

  it('sends head reads to the fast up-to-date node, not the lagging or the slow one', async () => {
    const before = { fast: served(pFast), lag: served(pLag), slow: served(pSlow) };
    const results = [];
    for (let i = 0; i < 20; i++) results.push(await blockNumber());
    expect(results.every((r) => r.status === 200 && r.value === HEAD)).toBe(true);
    expect(served(pFast) - before.fast).toBe(20);
    // Only the probe's batches reach the others.
    expect(served(pLag) - before.lag).toBe(0);
    expect(served(pSlow) - before.slow).toBe(0);
  });

  it('asks a node further ahead when a lagging node answers null for a by-hash read', async () => {
    // A transaction only the up-to-date nodes' chain has (the slow node mines a block to keep level).
    const hash = await fast.wallet.sendTransaction({ account: fast.accounts[0]!, chain: null, to: fast.accounts[1]!, value: 1n });
    await fast.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    await mine(slowNode, 1);
    // Make the lagging node the fastest by far, so by-hash reads (which may use it) go there first.
    pFast.delayMs = 100;
    await until(() => snapshot()[0]!.latency_ms! * 5 < snapshot()[2]!.latency_ms!);
    const lagBefore = pLag.calls.filter((c) => c.includes(hash)).length;
    for (let i = 0; i < 3; i++) {
      const r = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_getTransactionReceipt', params: [hash] }) });
      const body = await r.body.json() as { id: number; result: { transactionHash: string } | null };
      expect(body.id).toBe(i);
      expect(body.result?.transactionHash).toBe(hash);
    }
    // The lagging node was asked first (and said null); the answer came from further ahead.
    expect(pLag.calls.filter((c) => c.includes(hash)).length - lagBefore).toBe(3);
    pFast.delayMs = 0;
    await until(() => snapshot()[2]!.latency_ms! < snapshot()[1]!.latency_ms! / 3);
  });

  it('keeps answering when the fast node is killed mid-test, and uses it again once it is back', async () => {
    const port = Number(new URL(fast.url).port);
    const results: Array<{ status: number; value: number | undefined }> = [];
    for (let i = 0; i < 30; i++) {
      if (i === 10) await fast.stop();
      results.push(await blockNumber());
    }
    // Every call answered with the up-to-date head: the slow node took over, never the lagging one.
    expect(results.filter((r) => r.status !== 200 || r.value !== HEAD_AFTER_TX)).toEqual([]);
    // The workers push their view of the upstreams every 50 ms.
    await until(() => snapshot()[2]!.status === 'down');

    fast = await startAnvil({ port });
    await mine(fast, HEAD_AFTER_TX);
    // The probe reaches it again; calls go back to it without any operator action.
    await until(async () => {
      const before = served(pFast);
      for (let i = 0; i < 3; i++) expect(await blockNumber()).toEqual({ status: 200, value: HEAD_AFTER_TX });
      return served(pFast) - before === 3 && snapshot()[2]!.status === 'healthy';
    });
    const before = served(pFast);
    for (let i = 0; i < 5; i++) expect(await blockNumber()).toEqual({ status: 200, value: HEAD_AFTER_TX });
    expect(served(pFast) - before).toBe(5);
  }, 60_000);

  it('rpcctl admin upstreams shows each upstream\'s state from the serving process', async () => {
    await until(() => snapshot()[2]!.status === 'healthy');
    await new Promise((r) => setTimeout(r, 400)); // a probe round writes the state file
    const r = await cli(['admin', 'upstreams', '--json', '--data-dir', t.dataDir]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const state = JSON.parse(r.stdout) as { environments: Array<{ network: string; environment: string; head: number; upstreams: Array<{ url: string; status: string }> }> };
    const env = state.environments.find((e) => e.network === 'eth' && e.environment === 'anvil')!;
    expect(env.head).toBe(HEAD_AFTER_TX);
    expect(env.upstreams.map((u) => [u.url, u.status])).toEqual([[pLag.url, 'lagging'], [pSlow.url, 'healthy'], [pFast.url, 'healthy']]);
    const table = await cli(['admin', 'upstreams', '--data-dir', t.dataDir]);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(pFast.url);
    expect(table.stdout).toMatch(/lagging/);
  });
});

describe('lag tolerance per network', () => {
  it('a network\'s max_lag_blocks overrides the gateway\'s', async () => {
    const dir = new UpstreamDirectory({ timeoutMs: 1000, maxLagBlocks: 5, hedgeQuantile: undefined }, (envId) => (envId === 2 ? { maxLagBlocks: 50 } : undefined));
    expect(dir.for(1, ['http://127.0.0.1:1']).maxLagBlocks).toBe(5);
    expect(dir.for(2, ['http://127.0.0.1:1']).maxLagBlocks).toBe(50);
    await dir.close();
  });
});

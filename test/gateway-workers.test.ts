import { mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { parseConfig } from '../src/config/index.js';
import { Store, usageReport, createAccount } from '../src/store/index.js';
import { SharedWindows } from '../src/gateway/rps-shared.js';
import { FakeEvm } from './helpers/fake-evm.js';
import { dropTestSchema, startTestService, storeUrlOf, type TestService } from './helpers/service.js';

// The gateway's listeners run in worker threads (gateway.workers): these check what must hold
// across them — one RPS window per endpoint, usage counted once, changes from other processes
// reaching every worker, a large registry, a worker that dies.

const bin = resolve(import.meta.dirname, '..', 'bin', 'rpcctl.js');
const WORKERS = 3;
let up: FakeEvm;

const networks = () => [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [up.url] }] }];
const plans = [
  { id: 1, slug: 'one', name: 'One', included_credits: 1000, rps_limit: 1, endpoints_limit: 10, network_limit: null },
  { id: 2, slug: 'ten', name: 'Ten', included_credits: 1000, rps_limit: 10, endpoints_limit: 10, network_limit: null },
  { id: 3, slug: 'big', name: 'Big', included_credits: 1000, rps_limit: 100_000, endpoints_limit: 10, network_limit: null },
];
const serviceConfig = (extra: Record<string, unknown> = {}) => ({
  networks: networks(), plans, gateway: { workers: WORKERS, probe_interval_ms: 60_000, registry_reload_ms: 200, ...extra },
});

/** One call on a connection of its own, so the kernel spreads the calls over the workers. */
function call(url: string, id: number): Promise<number> {
  return new Promise((ok, fail) => {
    const req = httpRequest(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', connection: 'close' } }, (res) => {
      res.resume();
      res.on('end', () => ok(res.statusCode!));
    });
    req.on('error', fail);
    req.end(JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_blockNumber' }));
  });
}

async function burst(url: string, n: number): Promise<number[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => call(url, i)));
}

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  up = await new FakeEvm().start();
});
afterAll(async () => {
  await up.stop();
});

describe('RPS windows across workers', () => {
  it('threads taking from one shared window admit exactly the limit, never more', async () => {
    // The same buffer the gateway workers count in, hammered by real threads at once.
    const windows = new SharedWindows(4);
    windows.ensure(8);
    const now = Date.now();
    const script = `
      const { workerData, parentPort } = require('node:worker_threads');
      const words = new BigUint64Array(workerData.buffer);
      const second = BigInt(Math.floor(workerData.now / 1000));
      let taken = 0;
      for (let i = 0; i < 20000; i++) {
        for (;;) {
          const w = Atomics.load(words, 3);
          const count = (w >> 32n) >= second ? Number(w & 0xffffffffn) : 0;
          if (count >= 5000) break;
          if (Atomics.compareExchange(words, 3, w, (second << 32n) | BigInt(count + 1)) === w) { taken++; break; }
        }
      }
      parentPort.postMessage(taken);`;
    // The threads run the same compare-and-swap as SharedWindows.take; the main thread takes too.
    const threads = Array.from({ length: 3 }, () => new Worker(script, { eval: true, workerData: { buffer: windows.buffer, now } }));
    let mine = 0;
    for (let i = 0; i < 20000; i++) mine += windows.take(3, 5000, 1, now);
    const theirs = await Promise.all(threads.map((w) => new Promise<number>((ok) => w.once('message', ok))));
    expect(mine + theirs.reduce((a, b) => a + b, 0)).toBe(5000);
    // Another slot and the next second are untouched by it.
    expect(windows.take(4, 5000, 7, now)).toBe(7);
    expect(windows.take(3, 5000, 2, now + 1000)).toBe(2);
  });

  it('many connections spread over the workers: each second admits at most the limit, exactly the limit when oversubscribed', async () => {
    const t = await startTestService(serviceConfig());
    try {
      const m = await t.merchant({ plan: 'ten' });
      const e = (await m.call('POST', '/v1/endpoints', '{"name":"r","network_environment_id":1}')).body.endpoint;
      const url = `${t.gatewayUrl}/${e.uuid}`;
      let exact = 0;
      for (let round = 0; round < 3; round++) {
        await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
        const first = Math.floor(Date.now() / 1000);
        const statuses = await burst(url, 60);
        const seconds = Math.floor(Date.now() / 1000) - first + 1;
        const ok = statuses.filter((s) => s === 200).length;
        expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
        expect(ok).toBeLessThanOrEqual(10 * seconds);
        expect(ok).toBeGreaterThanOrEqual(10);
        if (seconds === 1) {
          expect(ok).toBe(10);
          exact++;
        }
      }
      // A loaded machine may stretch a burst over a second edge; not every round.
      if (exact === 0) console.log('gateway-workers: no burst fitted in one second; only the upper bound was checked');
    } finally {
      await t.stop();
    }
  });
});

describe('metering across workers', () => {
  it('N calls over many connections are counted exactly N times after a flush, and after a graceful stop', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-workers-'));
    const t = await startTestService(serviceConfig(), { dataDir, keepDataDir: true });
    const m = await t.merchant({ plan: 'big' });
    const e = (await m.call('POST', '/v1/endpoints', '{"name":"u","network_environment_id":1}')).body.endpoint;
    const url = `${t.gatewayUrl}/${e.uuid}`;
    try {
      const first = await burst(url, 150);
      expect(first.every((s) => s === 200)).toBe(true);
      await t.service.gateway.meter.flush();
      const usage = (await m.call('GET', `/v1/endpoints/${e.id}/usage?days=7`)).body.usage as { total_requests: number };
      expect(usage.total_requests).toBe(150);
      // Counted in the workers and not yet pushed when the stop begins: still written.
      const second = await burst(url, 90);
      expect(second.every((s) => s === 200)).toBe(true);
    } finally {
      await t.stop();
    }
    const store = await Store.open({ dataDir, config: parseConfig({ networks: networks(), plans }), syncCatalog: 'if-empty', url: storeUrlOf(dataDir) });
    const usage = await usageReport(store, { kind: 'endpoint', accountId: m.userId, endpointId: e.id }, 7);
    await store.close();
    await dropTestSchema(dataDir);
    expect(usage.total_requests).toBe(240);
  });
});

describe('changes from another process', () => {
  it('a plan change by `rpcctl admin` in another process reaches every worker within the version check', async () => {
    const t = await startTestService(serviceConfig());
    try {
      const m = await t.merchant({ plan: 'one' });
      const e = (await m.call('POST', '/v1/endpoints', '{"name":"a","network_environment_id":1}')).body.endpoint;
      const url = `${t.gatewayUrl}/${e.uuid}`;
      await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
      const before = await burst(url, 12);
      expect(before.filter((s) => s === 200).length).toBeLessThanOrEqual(2);

      const database = storeUrlOf(t.dataDir);
      const r = await execa(process.execPath, [bin, 'admin', 'accounts', 'set-plan', String(m.userId), '--plan', 'big', '--json', '--data-dir', t.dataDir,
        ...(database ? ['--database', database] : [])], { reject: false, env: { NO_COLOR: '1', RPCCTL_MASTER_KEY: '', RPCCTL_DATABASE_URL: '' } });
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
      // Every connection, whichever worker it lands on, sees the new limit.
      await until('the new plan in every worker', async () => (await burst(url, 24)).every((s) => s === 200), 5000);
      expect(t.service.gateway.registry.get(e.uuid)!.rpsLimit).toBe(100_000);
    } finally {
      await t.stop();
    }
  }, 30_000);
});

describe('a large registry', () => {
  it('starts with 100k endpoints, holds them all and serves any of them', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-100k-'));
    // First start: the schema and the catalog; then the rows, written in bulk as another process would.
    await (await startTestService(serviceConfig(), { dataDir, keepDataDir: true })).stop();
    const store = await Store.open({ dataDir, config: parseConfig({ networks: networks(), plans }), syncCatalog: 'if-empty', url: storeUrlOf(dataDir) });
    const account = await createAccount(store, { planId: 3 });
    const now = new Date().toISOString();
    const uuids: string[] = [];
    for (let i = 0; i < 100_000; i += 2000) {
      const rows = Array.from({ length: 2000 }, (_, j) => {
        const uuid = randomUUID();
        uuids.push(uuid);
        return { uuid, account_id: account.id, name: `e${i + j}`, status: 'active', network_environment_id: 1, allowed_ips: '[]', created_at: now, updated_at: now, version: null, block_height: null };
      });
      await store.db.insertInto('endpoints').values(rows).execute();
    }
    await store.close();

    const t = await startTestService(serviceConfig(), { dataDir });
    try {
      expect(t.service.gateway.registry.size).toBe(100_000);
      for (const uuid of [uuids[0]!, uuids[54_321]!, uuids[99_999]!]) {
        expect(await call(`${t.gatewayUrl}/${uuid}`, 1)).toBe(200);
      }
      expect(await call(`${t.gatewayUrl}/${randomUUID()}`, 1)).toBe(404);
    } finally {
      await t.stop();
    }
  }, 120_000);
});

describe('a worker that dies', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(serviceConfig());
  });
  afterAll(async () => {
    await t.stop();
  });

  it('is started again, and the gateway keeps serving on every connection', async () => {
    const m = await t.merchant({ plan: 'big' });
    const e = (await m.call('POST', '/v1/endpoints', '{"name":"k","network_environment_id":1}')).body.endpoint;
    const url = `${t.gatewayUrl}/${e.uuid}`;
    const workers = t.service.gateway.workers;
    const before = workers.threadIds;
    await workers.kill(1);
    await until('a new worker 1', () => workers.restarts === 1 && workers.threadIds[1] !== before[1]);
    // The new worker got the endpoints: no connection meets a 404, whichever worker takes it.
    await until('the restarted worker listening', async () => (await burst(url, 30)).every((s) => s === 200));
    expect(workers.threadIds[0]).toBe(before[0]);
    // A change made after the restart reaches the new worker too.
    const paused = await m.call('PATCH', `/v1/endpoints/${e.id}/status`, '{"status":"paused"}');
    expect(paused.status).toBe(200);
    expect((await burst(url, 30)).every((s) => s === 403)).toBe(true);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../src/client/index.js';
import { parseConfig } from '../src/config/index.js';
import { Store } from '../src/store/index.js';
import { FakeEvm } from './helpers/fake-evm.js';
import { testConfig } from './helpers/service.js';

const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const env = { NO_COLOR: '1', RPCCTL_MASTER_KEY: 'cd'.repeat(32) };
const FLUSH_MS = 100;

let ok: FakeEvm;
let hang: FakeEvm;
let dataDir: string;
let configFile: string;

interface Serve { proc: ResultPromise; apiUrl: string; gatewayUrl: string; output: () => string }

async function startServe(): Promise<Serve> {
  const proc = execa(process.execPath, [bin, 'serve', '--config', configFile, '--data-dir', dataDir], { reject: false, all: true, env, forceKillAfterDelay: false });
  let output = '';
  const urls = await new Promise<{ apiUrl: string; gatewayUrl: string }>((resolve, reject) => {
    proc.all!.on('data', (d: Buffer) => {
      output += d.toString();
      const api = /api\s+(http:\/\/\S+)/.exec(output);
      const gw = /gateway\s+(http:\/\/\S+)/.exec(output);
      if (api && gw) resolve({ apiUrl: api[1]!, gatewayUrl: gw[1]! });
    });
    void proc.then(() => reject(new Error(`serve exited early:\n${output}`)));
  });
  return { proc, ...urls, output: () => output };
}

const admin = async (args: string[]) => JSON.parse((await execa(process.execPath, [bin, 'admin', ...args, '--json', '--data-dir', dataDir], { env })).stdout);

let client: ApiClient;
let fast: { id: number; uuid: string };
let accountId: number;

beforeAll(async () => {
  [ok, hang] = await Promise.all([new FakeEvm().start(), new FakeEvm().start()]);
  hang.behaviour = 'hang';
  dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-crash-'));
  configFile = join(dataDir, 'rpcctl.json');
  const config = testConfig({
    gateway: { usage_flush_ms: FLUSH_MS, probe_interval_ms: 300, upstream_timeout_ms: 20_000 },
    networks: [
      { id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [ok.url] }, { id: 2, slug: 'slow', upstreams: [hang.url] }] },
    ],
    plans: [{ id: 1, slug: 'big', name: 'Big', included_credits: 10_000_000, rps_limit: 100_000, endpoints_limit: 10 }],
  });
  parseConfig(config);
  writeFileSync(configFile, JSON.stringify(config));
  const first = await startServe();
  accountId = (await admin(['accounts', 'create', '--plan', 'big'])).user_id;
  const key = await admin(['keys', 'create', '--account', String(accountId)]);
  client = new ApiClient({ baseUrl: first.apiUrl, apiKey: key.api_key, secret: key.secret });
  fast = (await client.createEndpoint({ name: 'fast', network_environment_id: 1 })).endpoint;
  await client.createEndpoint({ name: 'slow', network_environment_id: 2 });
  first.proc.kill('SIGKILL');
  await first.proc;
}, 60_000);
afterAll(async () => {
  await client?.close();
  await Promise.all([ok.stop(), hang.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
});

async function countedRequests(): Promise<number> {
  const store = await Store.open({ dataDir, config: parseConfig(JSON.parse((await import('node:fs')).readFileSync(configFile, 'utf8'))), syncCatalog: 'if-empty', env });
  try {
    const row = await store.db.selectFrom('usage_daily').select((eb) => eb.fn.sum<number>('requests').as('n')).where('endpoint_id', '=', fast.id).executeTakeFirst();
    return Number(row?.n ?? 0);
  } finally {
    await store.close();
  }
}

describe('rpcctl serve, killed and stopped', () => {
  it(`kill -9 under load loses at most the calls of the last flush interval (${FLUSH_MS} ms)`, async () => {
    const before = await countedRequests();
    const serve = await startServe();
    const agent = new Agent({ connections: 16 });
    const answeredAt: number[] = [];
    let running = true;
    const body = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}';
    const worker = async () => {
      while (running) {
        try {
          const r = await request(`${serve.gatewayUrl}/${fast.uuid}`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
          await r.body.text();
          if (r.statusCode === 200) answeredAt.push(Date.now());
        } catch {
          return; // the process is gone
        }
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    await new Promise((r) => setTimeout(r, 1500));
    const killedAt = Date.now();
    serve.proc.kill('SIGKILL');
    running = false;
    await Promise.all(workers);
    await serve.proc;
    await agent.close();

    const answered = answeredAt.length;
    const lost = answered - ((await countedRequests()) - before);
    // Calls answered in the last flush interval (plus the time one flush takes) may be lost; nothing older.
    const recent = answeredAt.filter((t) => t > killedAt - 5 * FLUSH_MS).length;
    console.log(`crash loss: ${Math.max(0, lost)} of ${answered} answered calls lost; ${recent} were answered in the last ${5 * FLUSH_MS} ms`);
    expect(answered).toBeGreaterThan(50);
    expect(lost).toBeLessThanOrEqual(recent);
  }, 60_000);

  it('SIGINT with a node probe in flight: exits at once instead of waiting out the upstream', async () => {
    const seen = hang.seen.length;
    const serve = await startServe();
    // The probe of the hanging environment is out.
    for (let i = 0; i < 100 && hang.seen.length === seen; i++) await new Promise((r) => setTimeout(r, 50));
    expect(hang.seen.length).toBeGreaterThan(seen);
    const t0 = Date.now();
    serve.proc.kill('SIGINT');
    const done = await serve.proc;
    expect(done.exitCode, serve.output()).toBe(0);
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(serve.output()).toContain('stopped');
  }, 60_000);
});

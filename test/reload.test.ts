import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PID_FILE, readReloadRecord, type ReloadRecord } from '../src/cli/serve/control.js';
import { signatureHeaders } from '../src/client/signing.js';
import type { ConfigInput } from '../src/config/index.js';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { rawCall, testConfig } from './helpers/service.js';
import { freshSchema, testDatabaseUrl, testRedisUrl, freshRedisPrefix, type TestSchema } from './helpers/shared-stores.js';

/**
 * Config reload under traffic, on a real `rpcctl serve` process: JSON-RPC calls over HTTP offered
 * at 1,000 a second by the clock (bench/open-load.js, in a process of its own) and 100 open
 * newHeads subscriptions while SIGHUP (every fifth through `rpcctl admin reload`) switches the
 * config 20 times between two versions that differ in upstreams, method routing, integrity,
 * plans, limits and log level. Not one call may fail and not one socket may close. The rate the
 * machine answered is printed, not asserted; `npm run bench:reload` measures it.
 */
const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const MASTER_KEY = randomBytes(32).toString('hex');
const RELOADS = 20;
const SOCKETS = 100;
/** Calls offered a second, by the clock (bench/open-load.js): what the machine answers is printed. */
const RATE = 1000;
const openLoad = new URL('../bench/open-load.js', import.meta.url).pathname;

let anvil: Anvil;
let dir: string;
let configFile: string;
let schema: TestSchema | undefined;
let serve: ResultPromise;
let stderr = '';
let apiUrl = '';
let gatewayUrl = '';
let metricsUrl = '';
const env = { NO_COLOR: '1', RPCCTL_MASTER_KEY: MASTER_KEY, RPCCTL_DATABASE_URL: '', RPCCTL_REDIS_URL: '', RPCCTL_LOG_LEVEL: '' };
const storeArgs: string[] = [];

/** Two configs a reload can switch between: everything that differs applies live. */
function version(v: 'a' | 'b', extra: ConfigInput = {}): ConfigInput {
  const b = v === 'b';
  const local = anvil.url;
  // The same node under another name: a changed upstream list.
  const other = anvil.url.replace('127.0.0.1', 'localhost');
  return testConfig({
    gateway: { port: 0, ws: { max_sockets_per_endpoint: 500, max_subscriptions_per_socket: b ? 20 : 10 }, max_lag_blocks: b ? 7 : 5, ...extra.gateway },
    limits: { api_rps_per_ip: b ? 100_001 : 100_000 },
    log: { level: b ? 'warn' : 'info' },
    plans: [{ id: 1, slug: 'pro', name: 'Pro', included_credits: 1_000_000_000, rps_limit: b ? 100_001 : 100_000, endpoints_limit: 10 }],
    networks: [{
      slug: 'anvil', name: 'Anvil', family: 'evm',
      environments: [{ slug: 'local', upstreams: b ? [local, other] : [local], ws_upstreams: [local.replace('http', 'ws')] }],
      ...(b ? {
        integrity: [{ methods: ['eth_chainId'], k: 2, m: 2 }],
        upstream_methods: { [other]: { deny: ['eth_getBalance'] } },
      } : {}),
    }],
    ...extra,
  });
}

function writeConfig(c: ConfigInput): void {
  // Written whole, then renamed: a reload never reads half a file.
  writeFileSync(`${configFile}.tmp`, JSON.stringify(c));
  renameSync(`${configFile}.tmp`, configFile);
}

/** The Redis key prefix the running config has (kept: it cannot change live). */
function keptPrefix(): ConfigInput {
  const p = /key_prefix":"([^"]+)/.exec(readFileSync(configFile, 'utf8'))?.[1];
  return p ? { redis: { key_prefix: p } } : {};
}

async function rpcctl(args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const r = await execa(process.execPath, [bin, ...args, '--data-dir', dir, '--config', configFile, ...storeArgs], { reject: false, env });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function metric(name: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(new RegExp(`^${name}\\{result="(\\w+)"\\} (\\d+)`, 'gm'))) out[m[1]!] = Number(m[2]);
  return out;
}

async function reloadByAdmin(): Promise<ReloadRecord> {
  const r = await rpcctl(['admin', 'reload', '--json']);
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as ReloadRecord;
}

/** SIGHUP to the serve.pid of the data dir, then its outcome from reload.json (what admin does). */
async function reloadBySignal(): Promise<ReloadRecord> {
  const pid = Number(readFileSync(join(dir, PID_FILE), 'utf8').trim());
  const before = readReloadRecord(dir);
  const seen = before?.pid === pid ? before.seq : 0;
  process.kill(pid, 'SIGHUP');
  const until = Date.now() + 60_000;
  for (;;) {
    const record = readReloadRecord(dir);
    if (record?.pid === pid && record.seq > seen) return record;
    expect(Date.now(), 'serve reports the reload').toBeLessThan(until);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface LoadStats {
  sent: number; skipped: number; ok: number; failed: number; failures: string[];
  okRate: number; p50: number; p99: number; maxInFlight: number; maxAnswerGapMs: number;
}

/** bench/open-load.js in a process of its own, on the pinned Node this one runs on. */
function startLoad() {
  const child = fork(openLoad, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map<string, { resolve: (m: any) => void; reject: (e: Error) => void }>();
  child.on('message', (m: { type: string }) => { waiting.get(m.type)?.resolve(m); waiting.delete(m.type); });
  child.once('exit', (code) => { for (const w of waiting.values()) w.reject(new Error(`the load generator exited with ${code}`)); });
  const ask = <T>(message: object, answer: string) => new Promise<T>((resolve, reject) => {
    if (!child.connected) return reject(new Error(`the load generator exited with ${child.exitCode}`));
    waiting.set(answer, { resolve, reject });
    child.send(message);
  });
  return {
    start: (o: object) => ask<void>({ type: 'start', ...o }, 'started'),
    snapshot: () => ask<{ sent: number; ok: number; failed: number; inFlight: number }>({ type: 'snapshot' }, 'snapshot'),
    stop: () => ask<LoadStats>({ type: 'stop' }, 'stats'),
  };
}

beforeAll(async () => {
  anvil = await startAnvil({ blockTime: 1 });
  dir = mkdtempSync(join(tmpdir(), 'rpcctl-reload-'));
  configFile = join(dir, 'rpcctl.json');
  if (testDatabaseUrl) {
    schema = await freshSchema();
    storeArgs.push('--database', schema.url);
    if (testRedisUrl) storeArgs.push('--redis', testRedisUrl);
  }
  writeConfig(version('a', testRedisUrl && testDatabaseUrl ? { redis: { key_prefix: freshRedisPrefix() } } : {}));
  serve = execa(process.execPath, [bin, 'serve', '--config', configFile, '--data-dir', dir, '--log-format', 'json', ...storeArgs], { reject: false, env });
  serve.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    serve.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const api = /api\s+(http:\/\/\S+)/.exec(out);
      const gw = /gateway\s+(http:\/\/\S+)/.exec(out);
      const m = /metrics\s+(http:\/\/\S+)\/metrics/.exec(out);
      if (api && gw && m) {
        [apiUrl, gatewayUrl, metricsUrl] = [api[1]!, gw[1]!, m[1]!];
        resolve();
      }
    });
    serve.once('exit', () => reject(new Error(`serve exited early:\n${out}\n${stderr}`)));
  });
}, 120_000);

afterAll(async () => {
  serve?.kill('SIGTERM');
  await serve?.catch(() => {});
  await anvil?.stop();
  await schema?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('config reload (SIGHUP, rpcctl admin reload)', () => {
  it('refuses a config that does not load or changes what needs a restart, naming why; the running config keeps serving', async () => {
    const prefix = keptPrefix();
    writeConfig(version('a', { ...prefix, gateway: { port: 1 } }));
    let r = await rpcctl(['admin', 'reload']);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toContain('changing gateway.port needs a restart');

    writeConfig({ ...version('a', prefix), metrics: { listen: '127.0.0.1:0', token: '${RELOAD_TEST_UNSET_TOKEN}' } } as ConfigInput);
    r = await rpcctl(['admin', 'reload']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('names the environment variable RELOAD_TEST_UNSET_TOKEN, which is not set');

    writeConfig({ ...version('a', prefix), plans: 'none' } as unknown as ConfigInput);
    r = await rpcctl(['admin', 'reload']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/not reloaded .*plans/);

    writeConfig(version('a', prefix));
    r = await rpcctl(['admin', 'reload', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, changed: [] });
    expect(await metric('rpcctl_config_reloads_total')).toEqual({ refused: 3, applied: 1 });
    expect(stderr).toMatch(/reload refused, the running config stays: .*changing gateway\.port needs a restart/);
    // Still serving.
    expect((await fetch(`${gatewayUrl}/ready`)).status).toBe(200);
  }, 120_000);

  it(`keeps every call and every subscription through ${RELOADS} reloads under load`, async () => {
    const prefix = keptPrefix();
    // An account, a key and an endpoint.
    const account = JSON.parse((await rpcctl(['admin', 'accounts', 'create', '--plan', 'pro', '--json'])).stdout) as { user_id: number };
    const key = JSON.parse((await rpcctl(['admin', 'keys', 'create', '--account', String(account.user_id), '--json'])).stdout) as { api_key: string; secret: string };
    const body = JSON.stringify({ name: 'reload', network_slug: 'anvil', env_slug: 'local' });
    const headers = signatureHeaders({ apiKey: key.api_key, secret: key.secret, method: 'POST', path: '/v1/endpoints', body });
    const created = await rawCall(apiUrl, 'POST', '/v1/endpoints', body, { ...headers, 'content-type': 'application/json' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const uuid = created.body.endpoint.uuid as string;

    // 100 sockets, one newHeads subscription each; any close is a dropped socket.
    const sockets: WebSocket[] = [];
    let dropped = 0;
    const notifications = new Map<WebSocket, number>();
    await Promise.all(Array.from({ length: SOCKETS }, async () => {
      const ws = new WebSocket(`${gatewayUrl.replace('http', 'ws')}/${uuid}`);
      sockets.push(ws);
      await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
      const subscribed = new Promise<void>((resolve) => ws.once('message', () => resolve()));
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
      await subscribed;
      ws.on('message', () => notifications.set(ws, (notifications.get(ws) ?? 0) + 1));
      ws.on('close', () => { dropped++; });
    }));

    // Calls offered at 1,000 a second by the clock until the reloads are done, from a process of
    // its own (this one holds the sockets and runs the reloads): a third from the gateway's cache
    // (eth_chainId, version a), the rest from the upstream it picks in the running config.
    const load = startLoad();
    const started = Date.now();
    await load.start({
      origin: new URL(gatewayUrl).origin, rate: RATE, connections: 256,
      calls: [
        { path: `/${uuid}`, method: 'eth_blockNumber', params: [] },
        { path: `/${uuid}`, method: 'eth_chainId', params: [] },
        { path: `/${uuid}`, method: 'eth_getBalance', params: [anvil.accounts[0], 'latest'] },
      ],
    });

    let applied = 0;
    /** Reloads with no call waiting when they began nor sent while they ran (none: all came under traffic). */
    const quiet: number[] = [];
    const reloadMs: number[] = [];
    let stats: LoadStats;
    try {
      for (let i = 0; i < RELOADS; i++) {
        writeConfig(version(i % 2 === 0 ? 'b' : 'a', prefix));
        const before = await load.snapshot();
        const t0 = Date.now();
        // Every fifth through `rpcctl admin reload`, the rest by SIGHUP as systemd sends it: a
        // CLI start is most of a reload's time on a busy machine, and the load runs meanwhile.
        const outcome = i % 5 === 4 ? await reloadByAdmin() : await reloadBySignal();
        reloadMs.push(Date.now() - t0);
        expect(outcome.ok, outcome.reason).toBe(true);
        expect(outcome.changed).toEqual(expect.arrayContaining(['networks', 'plans', 'limits.api_rps_per_ip', 'log.level', 'gateway.max_lag_blocks']));
        if (before.inFlight === 0 && (await load.snapshot()).sent === before.sent) quiet.push(i);
        applied++;
      }
    } finally {
      stats = await load.stop();
    }
    const seconds = (Date.now() - started) / 1000;
    const { sent, skipped, ok, failed, failures } = stats;
    // Subscriptions still deliver after the last reload: a new head reaches every socket.
    const before = new Map(notifications);
    const until = Date.now() + 30_000;
    while (sockets.some((ws) => (notifications.get(ws) ?? 0) <= (before.get(ws) ?? 0))) {
      expect(Date.now(), 'every socket gets a head after the reloads').toBeLessThan(until);
      await new Promise((r) => setTimeout(r, 100));
    }
    const open = sockets.filter((ws) => ws.readyState === WebSocket.OPEN).length;
    // The rate is printed, not asserted: on a shared machine it says how busy the machine was.
    console.log(`reload under load: ${applied} reloads in ${seconds.toFixed(1)} s; ${RATE}/s offered, ${sent} calls sent, ${ok} answered (${Math.round(stats.okRate)}/s), `
      + `${failed} failed, ${skipped} not sent (${stats.maxInFlight} already waiting), latency p50 ${stats.p50.toFixed(0)} ms p99 ${stats.p99.toFixed(0)} ms, `
      + `longest wait for any answer ${stats.maxAnswerGapMs.toFixed(0)} ms; `
      + `${SOCKETS} sockets, ${dropped} dropped, ${open} open; a reload took ${median(reloadMs)} ms (median), ${Math.max(...reloadMs)} ms at most`);
    expect(failures).toEqual([]);
    expect(failed).toBe(0);
    expect(ok).toBe(sent);
    expect(quiet, 'reloads with no call in flight').toEqual([]);
    expect(dropped).toBe(0);
    expect(open).toBe(SOCKETS);
    expect(applied).toBe(RELOADS);
    expect((await metric('rpcctl_config_reloads_total')).applied).toBe(1 + RELOADS);
    // The level followed the config: a reload to version b (warn) is not logged, one to a (info) is.
    expect(stderr.match(/config: reloaded|"msg":"reloaded/g)?.length).toBe(1 + RELOADS / 2);
    for (const ws of sockets) ws.close(1000);
  }, 300_000);
});

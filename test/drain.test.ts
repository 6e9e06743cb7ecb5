import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { Agent, request } from 'undici';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeaders } from '../src/client/signing.js';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { freePort } from './helpers/private-servers.js';
import { rawCall, testConfig } from './helpers/service.js';
import { freshRedisPrefix, freshSchema, testDatabaseUrl, testRedisUrl, type TestSchema } from './helpers/shared-stores.js';
import { itUnless } from './helpers/skips.js';

/**
 * Probes and drain on real `rpcctl serve` processes: `/live` apart from `/ready`; on SIGTERM
 * `/ready` turns 503 while calls are still served for `shutdown.drain_s`, then WebSockets close
 * with 1001 and usage is written. Then a rolling restart of two instances behind nginx (Debian's
 * package, run as a plain process on a config written here) under steady load: no call fails.
 * On PostgreSQL + Redis when RPCCTL_TEST_* are given; otherwise both instances share one SQLite
 * data dir (as `rpcctl admin` shares it with serve).
 */
const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const MASTER_KEY = randomBytes(32).toString('hex');
const DRAIN_S = 2;
const env = { NO_COLOR: '1', RPCCTL_MASTER_KEY: MASTER_KEY, RPCCTL_DATABASE_URL: '', RPCCTL_REDIS_URL: '', RPCCTL_LOG_LEVEL: '' };
const nginxBin = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));

let anvil: Anvil;
let dir: string;
let configFile: string;
let schema: TestSchema | undefined;
const storeArgs: string[] = [];
const cleanup: Array<() => Promise<unknown>> = [];

interface Instance {
  name: string;
  apiPort: number;
  gatewayPort: number;
  proc: ResultPromise;
  out: string;
  metrics: string;
}

async function startInstance(name: string, apiPort: number, gatewayPort: number): Promise<Instance> {
  const proc = execa(process.execPath, [bin, 'serve', '--config', configFile, '--data-dir', dir, '--port', String(apiPort), '--gateway-port', String(gatewayPort), ...storeArgs], {
    // execa's default SIGKILLs 5 s after a kill(): the drain (DRAIN_S) and the wait for calls in
    // flight (up to 5 s) may outlast that by design. A stop hung for 30 s is still cut, and the
    // test's check of the exit then says SIGKILL with the output, not a bare timeout.
    reject: false, all: true, env, forceKillAfterDelay: 30_000,
  });
  const inst: Instance = { name, apiPort, gatewayPort, proc, out: '', metrics: '' };
  await new Promise<void>((resolve, reject) => {
    proc.all!.on('data', (d: Buffer) => {
      inst.out += d.toString();
      const m = /metrics\s+(http:\/\/\S+)\/metrics/.exec(inst.out);
      if (m && /rpcctl serve is ready/.test(inst.out)) {
        inst.metrics = m[1]!;
        resolve();
      }
    });
    proc.once('exit', () => reject(new Error(`${name} exited early:\n${inst.out}`)));
  });
  return inst;
}

async function stopInstance(inst: Instance): Promise<void> {
  inst.proc.kill('SIGTERM');
  await inst.proc;
}

/** Calls the instance's gateway answered with 200, from its own metrics. */
async function servedCalls(inst: Instance): Promise<number> {
  const text = await request(`${inst.metrics}/metrics`).then((r) => r.body.text(), () => '');
  return text.split('\n').filter((l) => l.startsWith('rpcctl_gateway_requests_total{') && l.includes('status="200"'))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

const status = (url: string) => request(url).then(async (r) => { await r.body.dump(); return r.statusCode; }, () => 0);

async function rpcctl(args: string[]): Promise<Record<string, any>> {
  const r = await execa(process.execPath, [bin, ...args, '--data-dir', dir, '--config', configFile, ...storeArgs], { reject: false, env });
  expect(r.exitCode, String(r.stderr)).toBe(0);
  return JSON.parse(String(r.stdout)) as Record<string, any>;
}

/** An account, a key and an endpoint on the anvil network; a signed GET for reading usage. */
async function endpoint(apiUrl: string): Promise<{ uuid: string; get: (path: string) => Promise<any> }> {
  const { user_id } = await rpcctl(['admin', 'accounts', 'create', '--plan', 'pro', '--json']);
  const key = await rpcctl(['admin', 'keys', 'create', '--account', String(user_id), '--json']);
  const signed = (method: string, path: string, body = '') => {
    const headers = signatureHeaders({ apiKey: key.api_key, secret: key.secret, method, path, body });
    return rawCall(apiUrl, method, path, body, { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) });
  };
  const created = await signed('POST', '/v1/endpoints', JSON.stringify({ name: 'drain', network_slug: 'anvil', env_slug: 'local' }));
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return { uuid: created.body.endpoint.uuid, get: async (path) => (await signed('GET', path)).body };
}

const rpc = (i: number) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_blockNumber', params: [] });

beforeAll(async () => {
  anvil = await startAnvil({ blockTime: 1 });
  cleanup.push(() => anvil.stop());
  dir = mkdtempSync(join(tmpdir(), 'rpcctl-drain-'));
  cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
  configFile = join(dir, 'rpcctl.json');
  if (testDatabaseUrl) {
    schema = await freshSchema();
    cleanup.push(() => schema!.drop());
    storeArgs.push('--database', schema.url);
    if (testRedisUrl) storeArgs.push('--redis', testRedisUrl);
  }
  writeFileSync(configFile, JSON.stringify(testConfig({
    shutdown: { drain_s: DRAIN_S },
    ...(testRedisUrl && testDatabaseUrl ? { redis: { key_prefix: freshRedisPrefix() } } : {}),
    gateway: { ws: { max_sockets_per_endpoint: 500 } },
    plans: [{ id: 1, slug: 'pro', name: 'Pro', included_credits: 1_000_000_000, rps_limit: 100_000, endpoints_limit: 10 }],
    networks: [{ slug: 'anvil', name: 'Anvil', family: 'evm', environments: [{ slug: 'local', upstreams: [anvil.url], ws_upstreams: [anvil.url.replace('http', 'ws')] }] }],
  })));
}, 60_000);

afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => {});
}, 60_000);

describe('probes and drain', () => {
  it('SIGTERM: /ready 503 on every listener while calls are still served for shutdown.drain_s, /live 200; then sockets close with 1001 and usage is written', async () => {
    const [apiPort, gatewayPort] = [await freePort(), await freePort()];
    const a = await startInstance('A', apiPort, gatewayPort);
    const api = `http://127.0.0.1:${apiPort}`;
    const gw = `http://127.0.0.1:${gatewayPort}`;
    for (const base of [api, gw, a.metrics]) {
      expect(await status(`${base}/live`), `${base}/live`).toBe(200);
      expect(await status(`${base}/ready`), `${base}/ready`).toBe(200);
    }
    const ep = await endpoint(api);
    const before = (await ep.get('/v1/account')).usage.requests as number;
    const ws = new WebSocket(`ws://127.0.0.1:${gatewayPort}/${ep.uuid}`);
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));

    const sentAt = Date.now();
    a.proc.kill('SIGTERM');
    // /ready turns 503 first, everywhere; the gateway keeps answering calls meanwhile.
    const until = Date.now() + 10_000;
    while (await status(`${gw}/ready`) !== 503) {
      expect(Date.now()).toBeLessThan(until);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await status(`${api}/ready`)).toBe(503);
    expect(await status(`${a.metrics}/ready`)).toBe(503);
    expect(await status(`${gw}/live`)).toBe(200);
    let calls = 0;
    while (Date.now() - sentAt < (DRAIN_S * 1000) / 2) {
      const r = await request(`${gw}/${ep.uuid}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: rpc(calls) });
      expect(r.statusCode).toBe(200);
      expect(await r.body.json()).toHaveProperty('result');
      calls++;
    }
    expect(ws.readyState).toBe(WebSocket.OPEN);
    expect(await closed).toBe(1001);
    await a.proc;
    expect(a.out).toMatch(/draining for 2 s/);

    // Every call answered before the stop is billed: the last counts were written on the way out.
    const b = await startInstance('A again', apiPort, gatewayPort);
    cleanup.push(() => stopInstance(b));
    expect((await ep.get('/v1/account')).usage.requests).toBe(before + calls);
  }, 120_000);

  it('SIGHUP: a storm of 100 reloads the running service and keeps it up; during the drain it is ignored, not the end of the process', async () => {
    const [apiPort, gatewayPort] = [await freePort(), await freePort()];
    const a = await startInstance('A', apiPort, gatewayPort);
    const gw = `http://127.0.0.1:${gatewayPort}`;
    for (let i = 0; i < 100; i++) process.kill(a.proc.pid!, 'SIGHUP');
    const reloaded = Date.now() + 20_000;
    const record = () => { try { return JSON.parse(readFileSync(join(dir, 'reload.json'), 'utf8')) as { pid: number; ok: boolean }; } catch { return undefined; } };
    while (record()?.pid !== a.proc.pid) {
      expect(Date.now(), a.out).toBeLessThan(reloaded);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(record()?.ok, a.out).toBe(true);
    expect(await status(`${gw}/live`)).toBe(200);
    a.proc.kill('SIGTERM');
    const until = Date.now() + 10_000;
    while (await status(`${gw}/ready`) !== 503) {
      expect(Date.now()).toBeLessThan(until);
      await new Promise((r) => setTimeout(r, 20));
    }
    for (let i = 0; i < 5; i++) process.kill(a.proc.pid!, 'SIGHUP');
    const done = await a.proc;
    expect(done.signal, a.out).toBeUndefined();
    expect(done.exitCode, a.out).toBe(0);
    expect(a.out).toMatch(/draining for 2 s/);
  }, 120_000);

  const why = nginxBin ? undefined : 'nginx is not installed (Debian package nginx-light or nginx)';
  itUnless(why, 'a rolling restart of two instances behind nginx under steady load fails no call', async () => {
    const ports = { a: [await freePort(), await freePort()], b: [await freePort(), await freePort()], lb: await freePort() } as const;
    let a = await startInstance('A', ports.a[0]!, ports.a[1]!);
    let b = await startInstance('B', ports.b[0]!, ports.b[1]!);
    cleanup.push(() => stopInstance(a), () => stopInstance(b));
    const ep = await endpoint(`http://127.0.0.1:${ports.a[0]}`);
    // B learns of the endpoint from the store within gateway.registry_reload_ms.
    for (const port of [ports.a[1], ports.b[1]]) {
      const known = Date.now() + 20_000;
      while ((await request(`http://127.0.0.1:${port}/${ep.uuid}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: rpc(0) }).then(async (r) => { await r.body.dump(); return r.statusCode; })) !== 200) {
        expect(Date.now()).toBeLessThan(known);
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    // nginx as a plain process: passive health (max_fails), the next upstream on an error.
    const nginxDir = join(dir, 'nginx');
    mkdirSync(nginxDir, { recursive: true });
    writeFileSync(join(nginxDir, 'nginx.conf'), [
      'worker_processes 1;', `pid ${nginxDir}/nginx.pid;`, `error_log ${nginxDir}/error.log warn;`, 'daemon off;',
      ...(process.getuid?.() === 0 ? ['user root;'] : []),
      'events { worker_connections 1024; }',
      'http {',
      '  access_log off;',
      '  map $http_upgrade $connection_upgrade { default upgrade; "" close; }',
      `  client_body_temp_path ${nginxDir}/body; proxy_temp_path ${nginxDir}/proxy; fastcgi_temp_path ${nginxDir}/fastcgi; uwsgi_temp_path ${nginxDir}/uwsgi; scgi_temp_path ${nginxDir}/scgi;`,
      '  upstream gateway {',
      `    server 127.0.0.1:${ports.a[1]} max_fails=1 fail_timeout=2s;`,
      `    server 127.0.0.1:${ports.b[1]} max_fails=1 fail_timeout=2s;`,
      '  }',
      '  server {',
      `    listen 127.0.0.1:${ports.lb};`,
      '    location / {',
      '      proxy_pass http://gateway;',
      '      proxy_next_upstream error timeout http_502 http_503 non_idempotent;',
      '      proxy_next_upstream_tries 3;',
      '      proxy_set_header Host $host;',
      '      proxy_http_version 1.1;',
      '      proxy_set_header Upgrade $http_upgrade;',
      '      proxy_set_header Connection $connection_upgrade;',
      '      proxy_read_timeout 300s;',
      '    }',
      '  }',
      '}',
    ].join('\n'));
    const nginx = execa(nginxBin!, ['-p', nginxDir, '-c', join(nginxDir, 'nginx.conf')], { reject: false, all: true });
    cleanup.push(async () => { nginx.kill('SIGQUIT'); await nginx; });
    const lb = `http://127.0.0.1:${ports.lb}`;
    const lbUntil = Date.now() + 20_000;
    while (await status(`${lb}/live`) !== 200) {
      expect(Date.now(), `nginx did not answer: ${nginx.all}`).toBeLessThan(lbUntil);
      await new Promise((r) => setTimeout(r, 50));
    }

    // Steady load: 8 loops, each a call at a time through nginx, until the restarts are done.
    const agent = new Agent({ connections: 16 });
    let ok = 0;
    const failures: string[] = [];
    let running = true;
    const loop = async (n: number) => {
      for (let i = 0; running; i++) {
        try {
          const r = await request(`${lb}/${ep.uuid}`, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: rpc(n * 1e6 + i) });
          const text = await r.body.text();
          if (r.statusCode === 200 && text.includes('"result"')) ok++;
          else failures.push(`${r.statusCode} ${text.slice(0, 120)}`);
        } catch (err) {
          failures.push((err as Error).message);
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const loops = Array.from({ length: 8 }, (_, n) => loop(n));
    // Subscribers through nginx: a socket on an instance that stops is closed with 1001 ("going
    // away") and reconnects, as clients do; any other close is a dropped socket.
    const closes = new Map<number, number>();
    const sockets = new Set<WebSocket>();
    /** Reconnects that did not open (the upgrade reached an instance as it closed): tried again. */
    let refusedConnects = 0;
    const subscribe = (): void => {
      const ws = new WebSocket(`${lb.replace('http', 'ws')}/${ep.uuid}`);
      ws.once('open', () => {
        sockets.add(ws);
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
      });
      ws.once('close', (code) => {
        if (sockets.delete(ws)) closes.set(code, (closes.get(code) ?? 0) + 1);
        else refusedConnects++;
        if (running) setTimeout(subscribe, 50);
      });
      ws.on('error', () => {});
    };
    for (let i = 0; i < 20; i++) subscribe();
    const waitFor = async (what: () => boolean) => { while (!what()) await new Promise((r) => setTimeout(r, 20)); };
    await waitFor(() => ok >= 100);
    const restarted: string[] = [];
    for (const which of ['a', 'b'] as const) {
      const inst = which === 'a' ? a : b;
      const okBefore = ok;
      await stopInstance(inst);
      // The other instance alone takes the load, then this one comes back on the same ports.
      await waitFor(() => ok >= okBefore + 50);
      const next = await startInstance(inst.name, inst.apiPort, inst.gatewayPort);
      if (which === 'a') a = next;
      else b = next;
      restarted.push(inst.name);
      // As an operator's rolling restart does (Kubernetes waits for readiness): the next one
      // stops only once nginx sends calls to this one again. nginx retries a failed server only
      // after fail_timeout, and the draining one's 503 to a WebSocket upgrade marks that one
      // failed too: with both marked, nginx answers 502 itself.
      const servedAtStart = await servedCalls(next);
      while (await servedCalls(next) < servedAtStart + 20) await new Promise((r) => setTimeout(r, 50));
      const okAfter = ok;
      await waitFor(() => ok >= okAfter + 100);
    }
    await waitFor(() => sockets.size === 20);
    running = false;
    await Promise.all(loops);
    await agent.close();
    const goingAway = closes.get(1001) ?? 0;
    const dropped = [...closes].filter(([code]) => code !== 1001).reduce((n, [, k]) => n + k, 0);
    console.log(`rolling restart behind nginx: ${restarted.length} instances restarted, ${ok + failures.length} calls, ${failures.length} failed; `
      + `20 subscribers: ${goingAway} closes with 1001 (reconnected), ${dropped} dropped, ${refusedConnects} reconnects refused and tried again`);
    for (const ws of sockets) ws.close(1000);
    const nginxLog = existsSync(join(nginxDir, 'error.log')) ? readFileSync(join(nginxDir, 'error.log'), 'utf8').slice(-4000) : '';
    expect(failures.slice(0, 10), `nginx's error log:\n${nginxLog}`).toEqual([]);
    expect(Object.fromEntries([...closes].filter(([code]) => code !== 1001))).toEqual({});
    expect(goingAway).toBeGreaterThan(0);
    expect(ok).toBeGreaterThan(300);
  }, 300_000);
});

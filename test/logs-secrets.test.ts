import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { createWalletClient, http, parseEther, type Address } from 'viem';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeaders } from '../src/client/signing.js';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { rawCall, testConfig } from './helpers/service.js';
import { startWsProxy, type WsProxy } from './helpers/ws-proxy.js';

/**
 * A whole `rpcctl serve` run as a real process, logging JSON at trace level with gateway access
 * logs for every request, through the paths that handle secrets: admin-made keys, signed API
 * calls (good and bad), webhook signing and delivery, gateway calls over HTTP and WebSocket,
 * upstreams that fail. Then every line it wrote is searched for what must never be logged.
 */
const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const HTTP_PATH_SECRET = `httpkey${randomBytes(6).toString('hex')}`;
const WS_PATH_SECRET = `wskey${randomBytes(6).toString('hex')}`;
const DEAD_PATH_SECRET = `deadkey${randomBytes(6).toString('hex')}`;
const MASTER_KEY = randomBytes(32).toString('hex');
/** Given as a secret file (`metrics.token_file`), then changed on disk for a reload that is refused. */
const METRICS_TOKEN = `mtok${randomBytes(12).toString('hex')}`;
const METRICS_TOKEN_2 = `mtok${randomBytes(12).toString('hex')}`;

let anvil: Anvil;
let relay: Server;
let wsProxy: WsProxy;
let rx: Receiver;
let stderr = '';
/** What `rpcctl admin reload` printed: searched for secrets like the log. */
let adminOut = '';
const secrets: string[] = [HTTP_PATH_SECRET, WS_PATH_SECRET, DEAD_PATH_SECRET, MASTER_KEY, METRICS_TOKEN, METRICS_TOKEN_2];

/** Forwards any path to anvil's `/`: the upstream URL can carry a provider key in its path. */
async function startRelay(target: string): Promise<Server> {
  const t = new URL(target);
  const server = createServer((req, res) => {
    const up = httpRequest({ host: t.hostname, port: t.port, path: '/', method: req.method, headers: { 'content-type': 'application/json' } }, (r) => {
      res.writeHead(r.statusCode ?? 502, { 'content-type': 'application/json' });
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return server;
}

beforeAll(async () => {
  anvil = await startAnvil();
  [relay, wsProxy, rx] = await Promise.all([startRelay(anvil.url), startWsProxy(anvil.url.replace('http', 'ws')), startReceiver()]);
  // The provider key in the upstream's path comes from the environment (`${VAR}`).
  const relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}/v3/\${RPC_PATH_KEY}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-logs-'));
  const configFile = join(dataDir, 'rpcctl.json');
  const tokenFile = join(dataDir, 'metrics-token');
  writeFileSync(tokenFile, `${METRICS_TOKEN}\n`);
  const writeConfig = (extra: { limits?: Record<string, number> } = {}) => writeFileSync(configFile, JSON.stringify(testConfig({
    ...extra,
    metrics: { listen: '127.0.0.1:0', token_file: tokenFile } as never,
    gateway: { access_log_sample: 1, ws: { upstream_retry_ms: 500 } },
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
    networks: [{
      slug: 'anvil', name: 'Anvil', family: 'evm',
      environments: [
        { slug: 'local', upstreams: [relayUrl], ws_upstreams: [`${wsProxy.url}/ws/${WS_PATH_SECRET}`, `ws://127.0.0.1:1/ws/${DEAD_PATH_SECRET}`] },
        { slug: 'dead', upstreams: [`http://127.0.0.1:1/v3/${DEAD_PATH_SECRET}`] },
      ],
    }],
  })));
  writeConfig();
  const env = { NO_COLOR: '1', RPCCTL_MASTER_KEY: MASTER_KEY, RPC_PATH_KEY: HTTP_PATH_SECRET };
  const rpcctl = async (args: string[]) => {
    const r = await execa(process.execPath, [bin, ...args, '--data-dir', dataDir, '--config', configFile], { reject: false, env });
    stderr += r.stderr;
    expect(r.exitCode, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as Record<string, any>;
  };

  const serve = execa(process.execPath, [bin, 'serve', '--config', configFile, '--data-dir', dataDir, '--log-format', 'json', '--log-level', 'trace'], { reject: false, env });
  serve.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  let out = '';
  const [apiUrl, gatewayUrl] = await new Promise<[string, string]>((resolve, reject) => {
    serve.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const api = /api\s+(http:\/\/\S+)/.exec(out);
      const gw = /gateway\s+(http:\/\/\S+)/.exec(out);
      if (api && gw) resolve([api[1]!, gw[1]!]);
    });
    serve.once('exit', () => reject(new Error(`serve exited early:\n${out}\n${stderr}`)));
  });

  try {
    const { user_id } = await rpcctl(['admin', 'accounts', 'create', '--plan', 'pro', '--json']);
    const key = await rpcctl(['admin', 'keys', 'create', '--account', String(user_id), '--json']);
    const { secret: webhookSecret } = await rpcctl(['admin', 'webhook-secret', '--account', String(user_id), '--json']);
    secrets.push(key.secret, webhookSecret);
    const call = async (method: string, path: string, body = '', secret = key.secret as string) => {
      const headers = signatureHeaders({ apiKey: key.api_key, secret, method, path: path.split('?')[0]!, body });
      secrets.push(headers['x-signature']!);
      return rawCall(apiUrl, method, path, body, { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) });
    };
    expect((await call('GET', '/v1/account')).status).toBe(200);
    expect((await call('GET', '/v1/account', '', 'sk_wrong')).status).toBe(401);
    expect((await call('PUT', '/v1/address-watch/webhook', JSON.stringify({ url: rx.url, enabled: true, events: { block: false } }))).status).toBe(200);
    const [, to] = anvil.accounts as [Address, Address];
    expect((await call('POST', '/v1/address-watch/addresses', JSON.stringify({ network_slug: 'anvil', address: to }))).status).toBe(200);
    const endpoint = (await call('POST', '/v1/endpoints', JSON.stringify({ name: 'logs', network_slug: 'anvil', env_slug: 'local' }))).body.endpoint;
    const dead = (await call('POST', '/v1/endpoints', JSON.stringify({ name: 'dead', network_slug: 'anvil', env_slug: 'dead' }))).body.endpoint;
    expect((await call('GET', '/v1/nope')).status).toBe(404);

    // Gateway over HTTP: a transfer to the watched address, then a call to an endpoint whose upstream is down.
    const wallet = createWalletClient({ transport: http(`${gatewayUrl}/${endpoint.uuid}`) });
    await wallet.sendTransaction({ account: anvil.accounts[0]!, to, value: parseEther('1'), chain: null });
    expect((await rawCall(gatewayUrl, 'POST', `/${dead.uuid}`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' }))).status).toBe(502);
    await rx.waitFor((all) => all.some((r) => JSON.parse(r.body).type === 'payment'), 20_000);

    // Gateway over WebSocket; its upstream socket dies and the only other one is dead too, so
    // the subscription is served by polling the HTTP upstream.
    const ws = new WebSocket(`${gatewayUrl.replace('http', 'ws')}/${endpoint.uuid}`);
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    await new Promise((resolve) => ws.on('open', resolve));
    const answered = new Promise((resolve) => ws.once('message', resolve));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
    await answered;
    await wsProxy.kill();
    for (let i = 0; i < 100 && !/polled over HTTP/.test(stderr); i++) await new Promise((r) => setTimeout(r, 50));
    ws.close(1000);
    expect(await closed).toBe(1000);

    // Reloads: one applied, one refused because the token file changed (a restart-only
    // setting): neither the service's log nor admin's output holds the token.
    writeConfig({ limits: { api_rps_per_ip: 99_999 } });
    const applied = await execa(process.execPath, [bin, 'admin', 'reload', '--json', '--data-dir', dataDir], { reject: false, env });
    adminOut += applied.stdout + applied.stderr;
    expect(applied.exitCode, applied.stderr).toBe(0);
    writeFileSync(tokenFile, `${METRICS_TOKEN_2}\n`);
    const refused = await execa(process.execPath, [bin, 'admin', 'reload', '--data-dir', dataDir], { reject: false, env });
    adminOut += refused.stdout + refused.stderr;
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain('changing metrics.token needs a restart');
  } finally {
    serve.kill('SIGTERM');
    await serve;
  }
  for (const r of rx.received) secrets.push(String(r.headers['x-signature']));
}, 90_000);

afterAll(async () => {
  await Promise.all([anvil?.stop(), rx?.close(), new Promise((r) => relay?.close(r))]);
});

describe('logs of a full run', () => {
  const lines = () => stderr.split('\n').filter((l) => l.trim() !== '');

  it('are JSON objects, one per line, with access logs for the API and the gateway', () => {
    const parsed = lines().map((l) => JSON.parse(l) as Record<string, any>);
    expect(parsed.length).toBeGreaterThan(10);
    const api = parsed.filter((p) => p.component === 'api' && p.msg === 'request');
    expect(api.find((p) => p.route === '/v1/endpoints' && p.method === 'POST')).toMatchObject({ status: 200, account_id: expect.any(Number), req_id: expect.any(String), duration_ms: expect.any(Number) });
    const refused = api.find((p) => p.status === 401)!;
    expect(refused.route).toBe('/v1/account');
    expect(refused).not.toHaveProperty('account_id');
    expect(api.find((p) => p.status === 404)).toMatchObject({ route: '(unmatched)' });
    const gw = parsed.filter((p) => p.component === 'gateway' && p.msg === 'request');
    expect(gw.find((p) => p.status === 502)).toMatchObject({ network: 'anvil-dead', route: '/{endpoint_uuid}' });
    expect(gw.some((p) => p.status === 200 && p.network === 'anvil-local')).toBe(true);
    expect(parsed.find((p) => p.msg === 'websocket closed')).toMatchObject({ component: 'gateway', transport: 'ws', close_code: 1000, calls: 1, network: 'anvil-local' });
    expect(parsed.some((p) => /polled over HTTP/.test(p.msg))).toBe(true);
    // The failures were logged, by upstream host only.
    expect(parsed.some((p) => /WebSocket upstream ws:\/\/127\.0\.0\.1:\d+ failed/.test(p.msg))).toBe(true);
  });

  it('never contain a secret, a signature or an upstream URL path', () => {
    expect(secrets.length).toBeGreaterThan(8);
    // A reload was applied and one refused, both logged.
    expect(stderr).toMatch(/"msg":"reloaded: limits\.api_rps_per_ip"/);
    expect(stderr).toMatch(/reload refused, the running config stays: changing metrics\.token needs a restart/);
    for (const s of secrets) expect(adminOut, 'rpcctl admin reload printed a secret').not.toContain(s);
    for (const line of lines()) {
      for (const s of secrets) expect(line, `a log line holds a secret: ${line}`).not.toContain(s);
      expect(line).not.toMatch(/\/v3\/|\/ws\//);
    }
  });
});

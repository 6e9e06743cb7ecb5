import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackLookup } from '../src/cli/rpc/run.js';
import { cli, cliStarted, tempConfigDir, type CliRunOptions } from './helpers/cli.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

interface Seen { host: string | undefined; url: string | undefined; headers: IncomingHttpHeaders; body: any }

let t: TestService;
let m: Merchant;
let gateway: Server;
let port: number;
const seen: Seen[] = [];
let env: Record<string, string>;
const as = (args: string[], opts: CliRunOptions = {}) => cli(args, { ...opts, env: { ...env, ...opts.env } });

/** Stands in for the gateway: answers JSON-RPC on POST /{uuid}, like the real one will. */
function fakeGateway(): Server {
  return createServer((req, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      const body = JSON.parse(text);
      seen.push({ host: req.headers.host, url: req.url, headers: req.headers, body });
      const reply = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (body.method === 'eth_blockNumber') return reply(200, { jsonrpc: '2.0', id: body.id, result: '0x10' });
      if (body.method === 'eth_getBlockByNumber') return reply(200, { jsonrpc: '2.0', id: body.id, result: { number: body.params[0], full: body.params[1] } });
      if (body.method === 'eth_call') return reply(200, { jsonrpc: '2.0', id: body.id, error: { code: 3, message: 'execution reverted', data: '0x08c379a0' } });
      if (body.method === 'paused') return reply(403, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'endpoint paused' } });
      if (body.method === 'upstream_down') return reply(502, { jsonrpc: '2.0', id: body.id, error: { code: -32010, message: 'upstream failed' } });
      if (body.method === 'hang') return; // never answers: a stuck upstream
      if (body.method === 'slow') return setTimeout(() => reply(200, { jsonrpc: '2.0', id: body.id, result: '0x1' }), 700);
      if (body.method === 'slow_down') return reply(429, { jsonrpc: '2.0', id: null, error: { code: -32005, message: 'rps limit exceeded' } });
      reply(502, { nope: true });
    });
  });
}

beforeAll(async () => {
  gateway = fakeGateway().listen(0, '127.0.0.1');
  await once(gateway, 'listening');
  port = (gateway.address() as AddressInfo).port;
  t = await startTestService({ gateway: { rpc_domain: `localhost:${port}` } });
  m = await t.merchant();
  env = { PUBLIC_API_KEY: m.apiKey, PUBLIC_API_SECRET: m.secret, PUBLIC_API_BASE: t.baseUrl, RPCCTL_CONFIG_DIR: tempConfigDir() };
  await m.client.createEndpoint({ name: 'main', network_id: 1, env_slug: 'mainnet' });
});
afterAll(async () => {
  gateway.closeAllConnections();
  gateway.close();
  await t.stop();
});

describe('rpcctl rpc', () => {
  it('POSTs JSON-RPC to the endpoint URL on loopback, keeping the .localhost Host header, unsigned', async () => {
    const { endpoints: [ep] } = await m.client.listEndpoints();
    expect(ep!.url).toBe(`http://rpc-eth-mainnet.localhost:${port}/${ep!.uuid}`);
    seen.length = 0;
    const r = await as(['rpc', 'main', 'eth_blockNumber']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('0x10\n');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ host: `rpc-eth-mainnet.localhost:${port}`, url: `/${ep!.uuid}`, body: { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] } });
    expect(seen[0]!.headers['content-type']).toBe('application/json');
    expect(seen[0]!.headers['x-api-key']).toBeUndefined();
    expect(seen[0]!.headers['x-signature']).toBeUndefined();
    // The same endpoint by id and by uuid.
    expect((await as(['rpc', String(ep!.id), 'eth_blockNumber'])).stdout).toBe('0x10\n');
    expect((await as(['rpc', ep!.uuid, 'eth_blockNumber'])).stdout).toBe('0x10\n');
  });

  it('a URL, or a uuid with a known gateway, makes no Public API call', async () => {
    const { endpoints: [ep] } = await m.client.listEndpoints();
    const noApi = { PUBLIC_API_BASE: 'http://127.0.0.1:1' }; // any Public API call would fail
    seen.length = 0;
    const byUrl = await as(['rpc', ep!.url, 'eth_blockNumber'], { env: noApi });
    expect(byUrl).toMatchObject({ code: 0, stdout: '0x10\n' });
    expect(seen[0]).toMatchObject({ host: `rpc-eth-mainnet.localhost:${port}`, url: `/${ep!.uuid}` });
    const byUuid = await as(['rpc', ep!.uuid, 'eth_blockNumber'], { env: { ...noApi, RPCCTL_GATEWAY_URL: `http://127.0.0.1:${port}` } });
    expect(byUuid).toMatchObject({ code: 0, stdout: '0x10\n' });
    expect(seen[1]).toMatchObject({ host: `127.0.0.1:${port}`, url: `/${ep!.uuid}` });
    // Without a known gateway a uuid is looked up, and so needs the API.
    expect((await as(['rpc', ep!.uuid, 'eth_blockNumber'], { env: noApi })).code).toBe(1);
  });

  it('passes params; objects print as JSON; --json prints the whole JSON-RPC answer', async () => {
    const r = await as(['rpc', 'main', 'eth_getBlockByNumber', '["latest", false]']);
    expect(JSON.parse(r.stdout)).toEqual({ number: 'latest', full: false });
    const json = JSON.parse((await as(['rpc', 'main', 'eth_blockNumber', '--json'])).stdout);
    expect(json).toEqual({ jsonrpc: '2.0', id: 1, result: '0x10' });
  });

  it('JSON-RPC errors and gateway rejections go to stderr with exit 1 (4 for a 403)', async () => {
    const reverted = await as(['rpc', 'main', 'eth_call', '[{"to":"0x0"}, "latest"]']);
    expect(reverted.code).toBe(1);
    expect(reverted.stderr).toBe('error: execution reverted (code 3, HTTP 200): "0x08c379a0"\n');
    const limited = await as(['rpc', 'main', 'slow_down']);
    expect(limited.code).toBe(1);
    expect(limited.stderr).toBe('error: rps limit exceeded (code -32005, HTTP 429)\n');
    const paused = await as(['rpc', 'main', 'paused']);
    expect(paused.code).toBe(4);
    expect(paused.stderr).toBe('error: endpoint paused (code -32001, HTTP 403)\n');
    const broken = await as(['rpc', 'main', 'other']);
    expect(broken.stderr).toMatch(/answered HTTP 502: \{"nope":true\}/);
  });

  it('an upstream failure on a local gateway points at serve\'s log (the answer never names upstreams)', async () => {
    const r = await as(['rpc', 'main', 'upstream_down']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: upstream failed (code -32010, HTTP 502)\n  the gateway does not tell clients about its upstreams; '
      + 'the cause (host and error) is in the log of `rpcctl serve` on this machine\n');
  });

  it('--timeout ends a call that gets no answer, on a line of its own after the spinner (terminal) or plain (piped)', async () => {
    const tty = await as(['rpc', 'main', 'hang', '--timeout', '0.8'], { tty: true });
    expect(tty.code).toBe(1);
    // The spinner (after 300 ms) names the call; its line is cleared before the error is written.
    expect(tty.stderr).toMatch(/^\r[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] hang rpc-eth-mainnet\.localhost:\d+\x1b\[K/);
    expect(tty.stderr).toMatch(/\r\x1b\[Kerror: no answer from http:\/\/\S+ within 0\.8 s \(wait longer with --timeout SECONDS\)\n$/);
    const piped = await as(['rpc', 'main', 'hang', '--timeout', '0.5']);
    expect(piped.code).toBe(1);
    expect(piped.stderr).toMatch(/^error: no answer from http:\/\/\S+ within 0\.5 s \(wait longer with --timeout SECONDS\)\n$/);
    // A slow call within the limit shows the spinner and then just the result.
    const slow = await as(['rpc', 'main', 'slow'], { tty: true });
    expect(slow).toMatchObject({ code: 0, stdout: '0x1\n' });
    expect(slow.stderr).toMatch(/^\r[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] slow /);
    expect(slow.stderr.endsWith('\r\x1b[K')).toBe(true);
  });

  it('Ctrl-C during a call exits 130 at once', async () => {
    seen.length = 0;
    const running = cliStarted(['rpc', 'main', 'hang'], { tty: true, env });
    for (let i = 0; i < 200 && !seen.some((x) => x.body.method === 'hang'); i++) await new Promise((r) => setTimeout(r, 25));
    const r = await running.interrupt();
    expect(r.code).toBe(130);
    expect(r.stderr).not.toContain('error');
  });

  it('bad params are usage errors (exit 2) and nothing is sent', async () => {
    seen.length = 0;
    const notJson = await as(['rpc', 'main', 'eth_blockNumber', '[latest]']);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain('params must be JSON');
    expect((await as(['rpc', 'main', 'eth_blockNumber', '42'])).code).toBe(2);
    expect(seen).toHaveLength(0);
  });

  it('an unknown endpoint is an error before any call', async () => {
    const r = await as(['rpc', 'ghost', 'eth_blockNumber']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no endpoint with id, uuid or name "ghost"');
  });

  it('resolves localhost names to loopback itself (RFC 6761) and leaves others to DNS', async () => {
    const one = await new Promise((resolve) => loopbackLookup('rpc-eth-mainnet.localhost', {}, (_e, address, family) => resolve([address, family])));
    expect(one).toEqual(['127.0.0.1', 4]);
    const all = await new Promise((resolve) => loopbackLookup('A.LOCALHOST', { all: true }, (_e, address) => resolve(address)));
    expect(all).toEqual([{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]);
    const ip = await new Promise((resolve) => loopbackLookup('127.0.0.1', {}, (_e, address) => resolve(address)));
    expect(ip).toBe('127.0.0.1');
  });
});

describe('rpcctl api', () => {
  it('GET prints the raw JSON (pretty on a terminal) and exits 0', async () => {
    const piped = await as(['api', 'GET', '/v1/account']);
    expect(piped.code).toBe(0);
    expect(piped.stdout.trim().includes('\n')).toBe(false); // the bytes as received
    expect(JSON.parse(piped.stdout)).toMatchObject({ ok: true, user_id: m.userId });
    const tty = await as(['api', 'get', 'v1/account'], { tty: true });
    expect(tty.stdout).toContain('\n  "ok": true,\n');
  });

  it('keeps the query string (unsigned) and sends the body exactly, from --data, --input FILE or stdin', async () => {
    expect(JSON.parse((await as(['api', 'GET', '/v1/endpoints/usage?days=7'])).stdout).usage.days).toBe(7);
    const { endpoints: [ep] } = await m.client.listEndpoints();
    const data = await as(['api', 'PATCH', `/v1/endpoints/${ep!.id}/status`, '--data', '{"status":"paused"}']);
    expect(JSON.parse(data.stdout).endpoint.status).toBe('paused');
    const file = join(tempConfigDir(), 'body.json');
    writeFileSync(file, '{ "status" : "active" }');
    const fromFile = await as(['api', 'PATCH', `/v1/endpoints/${ep!.id}/status`, '--input', file]);
    expect(JSON.parse(fromFile.stdout).endpoint.status).toBe('active');
    const fromStdin = await as(['api', 'PATCH', `/v1/endpoints/${ep!.id}/allowed-ips`, '--input', '-'], { stdin: '{"allowed_ips":["10.1.1.1"]}' });
    expect(JSON.parse(fromStdin.stdout).endpoint.allowed_ips).toEqual(['10.1.1.1']);
    await m.client.setAllowedIps(ep!.id, []);
  });

  it('the exit code follows the status: 1 for 4xx/5xx, 4 for 401/403; the body is printed either way', async () => {
    const notFound = await as(['api', 'GET', '/v1/nope']);
    expect(notFound.code).toBe(1);
    expect(JSON.parse(notFound.stdout)).toEqual({ ok: false, error: 'Not found' });
    expect(notFound.stderr).toBe('error: Not found (HTTP 404)\n');
    const invalid = await as(['api', 'POST', '/v1/endpoints', '--data', '{"name":']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/\(HTTP 400\)/);
    const auth = await as(['api', 'GET', '/v1/account'], { env: { PUBLIC_API_SECRET: 'sk_wrong' } });
    expect(auth.code).toBe(4);
    expect(auth.stderr).toBe('error: Invalid signature. (HTTP 401)\n');
  });

  it('usage errors: unknown method, --data with --input, unreadable file', async () => {
    expect((await as(['api', 'FETCH', '/v1/account'])).code).toBe(2);
    const both = await as(['api', 'POST', '/v1/endpoints', '--data', '{}', '--input', 'x.json']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("option '-d, --data <json>' cannot be used with option '--input <file>'");
    const missing = await as(['api', 'POST', '/v1/endpoints', '--input', '/nonexistent/body.json']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--input: ENOENT');
  });
});

describe('rpcctl rpc through the real gateway, its upstream down', () => {
  let svc: TestService;
  beforeAll(async () => {
    // Port 1 refuses connections: every upstream call fails.
    svc = await startTestService({ networks: [{ slug: 'eth', name: 'Ethereum', environments: [{ slug: 'mainnet', upstreams: ['http://127.0.0.1:1'] }] }] });
  });
  afterAll(() => svc?.stop());

  it('says upstream failed without naming the upstream, and points at serve\'s log', async () => {
    const owner = await svc.merchant();
    const { endpoint } = await owner.client.createEndpoint({ name: 'down', network_id: svc.store.catalog.networks[0]!.id, env_slug: 'mainnet' });
    const r = await cli(['rpc', endpoint.uuid, 'eth_blockNumber', '--timeout', '20'], {
      env: { RPCCTL_GATEWAY_URL: svc.gatewayUrl, PUBLIC_API_BASE: 'http://127.0.0.1:1', RPCCTL_CONFIG_DIR: tempConfigDir() },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: upstream failed \(code -32010, HTTP 502\)\n {2}the gateway does not tell clients about its upstreams; the cause \(host and error\) is in the log of `rpcctl serve` on this machine\n$/);
    expect(r.stderr).not.toContain('127.0.0.1:1');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { FakeEvm } from './helpers/fake-evm.js';
import { startFakeHorizon } from './helpers/fake-horizon.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';
import { CallNote, loggedMethod, RequestLog } from '../src/gateway/request-log.js';
import { MAX_METHOD_LENGTH } from '../src/gateway/jsonrpc.js';
import { cli, cliStarted } from './helpers/cli.js';
import type { RequestLogEntry, RequestLogPage } from '../src/client/types.js';

// Request logs (issue 26): real calls through the gateway's worker threads, read back through
// the signed API. Each worker keeps `request_log_size` calls per endpoint.

const KEPT = 20;
let t: TestService;
let up: FakeEvm;
let horizon: Awaited<ReturnType<typeof startFakeHorizon>>;
let m: Merchant;
const eps: Record<string, { id: number; url: string }> = {};

beforeAll(async () => {
  up = await new FakeEvm().start();
  horizon = await startFakeHorizon();
  up.respond = (s, res) => {
    const body = JSON.parse(s.body) as { id?: unknown; method?: string };
    if (Array.isArray(body) || (body.method !== 'eth_call' && body.method !== 'eth_chainId')) return false;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body.method === 'eth_chainId' ? { jsonrpc: '2.0', id: body.id, result: '0x1' }
      : { jsonrpc: '2.0', id: body.id, error: { code: 3, message: 'execution reverted', data: '0x08c379a0' } }));
    return true;
  };
  t = await startTestService({
    networks: [{
      id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'main', upstreams: [up.url] }],
      credits: { default: 20, methods: { eth_getBalance: 15 } },
    }, { id: 2, slug: 'xlm', name: 'Stellar', family: 'stellar', environments: [{ id: 2, slug: 'main', upstreams: [horizon.url] }] }],
    gateway: { request_log_size: KEPT },
    plans: [{ id: 1, slug: 'big', name: 'Big', included_credits: 1_000_000, rps_limit: 10_000, endpoints_limit: 100, network_limit: null }],
  });
  m = await t.merchant({ plan: 'big' });
  for (const name of ['main', 'closed', 'many', 'horizon']) {
    const e = (await m.client.createEndpoint({ name, network_environment_id: name === 'horizon' ? 2 : 1 })).endpoint;
    eps[name] = { id: e.id, url: `${t.gatewayUrl}/${e.uuid}` };
  }
  await m.client.setAllowedIps(eps.closed!.id, ['203.0.113.7']);
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await up?.stop();
  await horizon?.close();
});

async function post(ep: string, body: unknown): Promise<{ status: number; body: any }> {
  const r = await request(eps[ep]!.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: r.statusCode, body: await r.body.json() };
}

const call = (method: string, id: unknown = 1, params: unknown[] = []) => ({ jsonrpc: '2.0', id, method, params });

async function logs(ep: string, query = ''): Promise<RequestLogPage> {
  const r = await m.call('GET', `/v1/endpoints/${eps[ep]!.id}/logs${query}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as RequestLogPage;
}

/** The log once it holds `n` calls (a call enters it when its answer is finished, a moment after the client has it). */
async function logsWith(ep: string, n: number, query = ''): Promise<RequestLogEntry[]> {
  let calls: RequestLogEntry[] = [];
  await expect.poll(async () => (calls = (await logs(ep, query)).calls).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(n);
  return calls;
}

describe('request logs through the gateway', () => {
  it('records each call with its method, status, JSON-RPC error, credits, client and latency; newest first', async () => {
    const before = Date.now();
    expect((await post('main', call('eth_getBalance', 1, ['0x52908400098527886E0F7030069857D2E4169EE7', 'latest']))).status).toBe(200);
    const reverted = await post('main', call('eth_call', 2, [{ to: '0x0000000000000000000000000000000000000001', data: '0x' }, 'latest']));
    expect(reverted.body.error.code).toBe(3);
    expect((await post('main', 'not json')).status).toBe(400);
    const calls = await logsWith('main', 3);
    expect(calls.map((c) => c.method)).toEqual(['', 'eth_call', 'eth_getBalance']);
    const [parse, revert, balance] = calls as [RequestLogEntry, RequestLogEntry, RequestLogEntry];
    expect(balance).toMatchObject({ status: 200, rpc_code: null, credits: 15, client_ip: '127.0.0.1', cached: false, batch: null });
    expect(Date.parse(balance.at)).toBeGreaterThanOrEqual(before - 1000);
    expect(balance.latency_ms).toBeGreaterThan(0);
    // A caller's error the node answered with HTTP 200 is still an error, and billed as the node answered it.
    expect(revert).toMatchObject({ status: 200, rpc_code: 3, credits: 20 });
    expect(parse).toMatchObject({ status: 400, rpc_code: -32700, credits: 0 });
  });

  it('filters errors and methods', async () => {
    const errors = (await logs('main', '?status=error')).calls;
    expect(errors.map((c) => c.method)).toEqual(['', 'eth_call']);
    const balance = (await logs('main', '?method=eth_getBalance')).calls;
    expect(balance.map((c) => c.method)).toEqual(['eth_getBalance']);
    expect((await m.call('GET', `/v1/endpoints/${eps.main!.id}/logs?status=bad`)).body).toEqual({ ok: false, error: 'status: must be all or error' });
  });

  it('a batch is one row with its element count and summed credits', async () => {
    const r = await post('main', [call('eth_getBalance', 1, ['0x52908400098527886E0F7030069857D2E4169EE7', 'latest']), call('eth_blockNumber', 2), call('eth_getBalance', 3, ['0x52908400098527886E0F7030069857D2E4169EE7', 'latest'])]);
    expect(r.body).toHaveLength(3);
    const calls = await logsWith('main', 2, '?method=eth_getBalance');
    expect(calls[0]).toMatchObject({ method: 'eth_getBalance', batch: 3, credits: 15 + 20 + 15, status: 200, rpc_code: null });
  });

  it('marks answers from the cache', async () => {
    // The first eth_chainId fills the cache; a later one (on whichever worker) is answered from it.
    await expect.poll(async () => {
      await post('main', call('eth_chainId'));
      return (await logs('main', '?method=eth_chainId')).calls.some((c) => c.cached);
    }, { timeout: 10_000 }).toBe(true);
    const chain = (await logs('main', '?method=eth_chainId')).calls;
    expect(chain.at(-1)!.cached).toBe(false);
  });

  it('records refusals at the endpoint: an address outside the allowlist', async () => {
    const r = await post('closed', call('eth_blockNumber'));
    expect(r.status).toBe(403);
    const [refused] = await logsWith('closed', 1, '?status=error');
    expect(refused).toMatchObject({ status: 403, rpc_code: -32012, client_ip: '127.0.0.1', credits: 0 });
  });

  it('keeps at most request_log_size calls per endpoint per worker, the newest', async () => {
    const n = KEPT * 3;
    for (let i = 0; i < n; i++) await post('many', call('eth_blockNumber', i));
    await post('many', call('eth_getBalance', 'last', ['0x52908400098527886E0F7030069857D2E4169EE7', 'latest']));
    const page = await logs('many', '?limit=1000');
    const workers = t.service.config.gateway.workers;
    expect(page.kept_per_worker).toBe(KEPT);
    expect(page.calls.length).toBeGreaterThanOrEqual(KEPT);
    expect(page.calls.length).toBeLessThanOrEqual(KEPT * workers);
    expect(page.calls[0]!.method).toBe('eth_getBalance');
  });

  it('pages back with before, and follows with after', async () => {
    const first = await logs('many', '?limit=5');
    expect(first.calls).toHaveLength(5);
    expect(first.next_before).toBe(first.calls[4]!.id);
    const second = await logs('many', `?limit=5&before=${first.next_before}`);
    expect(second.calls).toHaveLength(5);
    expect(second.calls.map((c) => c.id)).not.toEqual(expect.arrayContaining([first.calls[4]!.id]));
    expect(Date.parse(second.calls[0]!.at)).toBeLessThanOrEqual(Date.parse(first.calls[4]!.at));

    const since = await logs('many', `?after=${first.cursor}`);
    expect(since.calls).toEqual([]);
    await post('many', call('eth_chainId', 'new'));
    let fresh: RequestLogEntry[] = [];
    await expect.poll(async () => (fresh = (await logs('many', `?after=${first.cursor}`)).calls).length, { timeout: 10_000 }).toBe(1);
    expect(fresh[0]!.method).toBe('eth_chainId');
  });

  it('a REST network\'s call is its HTTP method and path (no query string), with the upstream\'s status', async () => {
    const ok = await request(`${eps.horizon!.url}/ledgers/7?secret=no`);
    expect(ok.statusCode).toBe(200);
    await ok.body.dump();
    const missing = await request(`${eps.horizon!.url}/ledgers/999999`);
    expect(missing.statusCode).toBe(404);
    await missing.body.dump();
    const calls = await logsWith('horizon', 2);
    expect(calls.map((c) => [c.method, c.status, c.rpc_code])).toEqual([['GET /ledgers/999999', 404, null], ['GET /ledgers/7', 200, null]]);
    expect(calls[1]!.credits).toBeGreaterThan(0);
    expect((await logs('horizon', '?status=error')).calls.map((c) => c.status)).toEqual([404]);
  });

  it('keeps at most 100 characters of a method name; a name longer than any JSON-RPC method is refused before it is logged', async () => {
    // 120 characters: under the gateway's cap of MAX_METHOD_LENGTH (128), so routed and logged.
    const long = `eth_${'x'.repeat(MAX_METHOD_LENGTH - 12)}`;
    await post('many', call(long));
    await expect.poll(async () => (await logs('many')).calls.map((c) => c.method.length), { timeout: 10_000 }).toContain(101);
    expect(loggedMethod(long)).toBe(`${long.slice(0, 100)}…`);
    expect(loggedMethod('eth_call')).toBe('eth_call');
    const huge = await post('many', call(`eth_${'x'.repeat(20_000)}`));
    expect(huge.status).toBe(400);
    expect(huge.body.error).toEqual({ code: -32600, message: `invalid request: method name longer than ${MAX_METHOD_LENGTH} characters` });
    expect((await logs('many')).calls.every((c) => c.method.length <= 101)).toBe(true);
  });

  it('another account\'s endpoint is not found', async () => {
    const other = await t.merchant({ plan: 'big' });
    expect((await other.call('GET', `/v1/endpoints/${eps.main!.id}/logs`)).status).toBe(404);
  });
});

describe('rpcctl endpoints logs', () => {
  const env = () => ({ PUBLIC_API_BASE: t.baseUrl, PUBLIC_API_KEY: m.apiKey, PUBLIC_API_SECRET: m.secret, NO_COLOR: '1' });

  it('piped: one tab-separated line per call, oldest first', async () => {
    const api = (await logs('main')).calls;
    const r = await cli(['endpoints', 'logs', 'main'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n').map((l) => l.split('\t'));
    expect(lines.length).toBeGreaterThanOrEqual(api.length);
    const revert = lines.find((l) => l[2] === 'eth_call')!;
    // id, at, method, status, rpc_code, latency_ms, credits, client_ip, cached, batch
    expect([revert[3], revert[4], revert[6], revert[7], revert[8], revert[9]]).toEqual(['200', '3', '20', '127.0.0.1', 'false', '']);
    expect(lines[0]![2]).toBe('eth_getBalance');
  });

  it('on a terminal: readable lines, errors only with --status error', async () => {
    const r = await cli(['endpoints', 'logs', 'main', '--status', 'error'], { env: env(), tty: true });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/ 200 {2}eth_call {2}error 3 {2}[\d.]+ ms {2}20 cr {2}127\.0\.0\.1/);
    expect(r.stdout).toMatch(/ 400 {2}\(no method\) {2}error -32700/);
    expect(r.stdout).not.toContain('eth_getBalance');
    const none = await cli(['endpoints', 'logs', 'main', '--method', 'eth_nothing'], { env: env(), tty: true });
    expect(none.stderr).toContain('No calls in the log of main yet.');
  });

  it('--json: one call object per line; --follow prints new calls until Ctrl-C', async () => {
    const json = await cli(['endpoints', 'logs', 'main', '--json', '--limit', '2'], { env: env() });
    expect(json.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as RequestLogEntry)).toHaveLength(2);
    const follow = cliStarted(['endpoints', 'logs', 'many', '--follow', '--interval', '0.1', '--json', '--limit', '1'], { env: env() });
    await follow.waitFor(/Following many's calls/, 'stderr');
    await post('many', call('eth_getTransactionCount', 'f', ['0x52908400098527886E0F7030069857D2E4169EE7', 'latest']));
    await follow.waitFor(/eth_getTransactionCount/);
    const r = await follow.interrupt();
    expect(r.code, r.stderr).toBe(0);
    const printed = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as RequestLogEntry);
    expect(printed.filter((c) => c.method === 'eth_getTransactionCount')).toHaveLength(1);
    expect(printed).toHaveLength(2);
  });
});

describe('a gateway worker that dies', () => {
  it('is started again with an empty log; a cursor from before it died still follows the calls', async () => {
    const workers = t.service.gateway.workers;
    const { cursor } = await logs('many');
    await workers.kill(0);
    await expect.poll(() => workers.restarts, { timeout: 15_000 }).toBe(1);
    // Serving again on every connection, whichever worker takes it.
    await expect.poll(async () => (await post('many', call('eth_gasPrice', 'after'))).status, { timeout: 15_000 }).toBe(200);
    const since = await logsWith('many', 1, `?after=${cursor}`);
    expect(since.map((c) => c.method)).toContain('eth_gasPrice');
    expect(since.every((c) => c.method === 'eth_gasPrice')).toBe(true);
  });
});

describe('one worker\'s ring', () => {
  it('holds the newest `size` calls of each endpoint, oldest first, and reads after a sequence number', () => {
    const log = new RequestLog(3);
    const push = (ep: number, method: string) => {
      const n = new CallNote(log, ep, '10.0.0.1');
      n.method = method;
      n.status = method === 'bad' ? 502 : 200;
      log.push(n);
      return n;
    };
    const first = push(1, 'a');
    push(2, 'other');
    push(1, 'b');
    push(1, 'bad');
    push(1, 'c');
    const all = log.read({ endpointId: 1, after: 0, errorsOnly: false, method: undefined });
    expect(all.map((c) => c[2])).toEqual(['b', 'bad', 'c']);
    expect(log.read({ endpointId: 1, after: 0, errorsOnly: true, method: undefined }).map((c) => c[2])).toEqual(['bad']);
    expect(log.read({ endpointId: 1, after: all[1]![0], errorsOnly: false, method: undefined }).map((c) => c[2])).toEqual(['c']);
    expect(log.read({ endpointId: 2, after: first.seq, errorsOnly: false, method: 'other' })).toHaveLength(1);
    expect(log.read({ endpointId: 3, after: 0, errorsOnly: false, method: undefined })).toEqual([]);
  });
});

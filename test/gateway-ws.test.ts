import { ethers } from 'ethers';
import { createPublicClient, encodeFunctionData, parseAbi, webSocket, type Address, type Log } from 'viem';
import { Web3 } from 'web3';
import { request as httpRequest } from 'node:http';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployToken, erc20Abi, startAnvil, type Anvil } from './helpers/anvil.js';
import { rawCall, startTestService, type Merchant, type TestService } from './helpers/service.js';
import { startWsProxy, type WsProxy } from './helpers/ws-proxy.js';

const json = (o: unknown) => JSON.stringify(o);
const transferAbi = parseAbi(['event Transfer(address indexed from, address indexed to, uint256 value)']);
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

let anvil: Anvil;
let proxy: WsProxy;
let lonely: WsProxy;
let t: TestService;
let m: Merchant;
let token: Address;
let owner: Address;
let A: Address;

async function waitFor<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function endpoint(env = 'local'): Promise<{ id: number; url: string }> {
  const r = await m.call('POST', '/v1/endpoints', json({ name: `ws-${env}-${Math.random()}`, network_slug: 'anvil', env_slug: env }));
  expect(r.status).toBe(200);
  return { id: r.body.endpoint.id, url: `${t.gatewayUrl.replace('http', 'ws')}/${r.body.endpoint.uuid}` };
}

/** A bare JSON-RPC WebSocket client: what it receives, in order. */
class Client {
  readonly ws: WebSocket;
  readonly got: any[] = [];
  closed: { code: number; reason: string } | undefined;
  #id = 1;
  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.on('message', (d) => this.got.push(JSON.parse(d.toString())));
    this.ws.on('close', (code, reason) => { this.closed = { code, reason: reason.toString() }; });
    this.ws.on('error', () => {});
  }
  static async open(url: string): Promise<Client> {
    const c = new Client(url);
    await new Promise<void>((resolve, reject) => { c.ws.once('open', () => resolve()); c.ws.once('error', reject); });
    return c;
  }
  async call(method: string, params: unknown[] = []): Promise<any> {
    const id = this.#id++;
    this.ws.send(json({ jsonrpc: '2.0', id, method, params }));
    return waitFor(`answer to ${method}`, () => this.got.find((g) => g.id === id));
  }
  notifications(sub: string): any[] {
    return this.got.filter((g) => g.method === 'eth_subscription' && g.params.subscription === sub).map((g) => g.params.result);
  }
}

async function transfer(to: Address, amount: bigint): Promise<void> {
  const hash = await anvil.wallet.sendTransaction({
    account: owner, to: token, chain: null, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] }),
  });
  await anvil.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
}

beforeAll(async () => {
  anvil = await startAnvil();
  [proxy, lonely] = await Promise.all([startWsProxy(anvil.url.replace('http', 'ws')), startWsProxy(anvil.url.replace('http', 'ws'))]);
  [owner, A] = anvil.accounts as [Address, Address];
  token = await deployToken(anvil, owner, 10n ** 24n);
  t = await startTestService({
    networks: [{
      slug: 'anvil', name: 'Anvil', family: 'evm',
      environments: [
        // The proxy first: killing it makes the gateway move to anvil's own socket.
        { slug: 'local', upstreams: [anvil.url], ws_upstreams: [proxy.url, anvil.url.replace('http', 'ws')] },
        { slug: 'poll', upstreams: [anvil.url] },
        { slug: 'single', upstreams: [anvil.url], ws_upstreams: [lonely.url] },
      ],
      credits: { default: 20, methods: { eth_blockNumber: 10, eth_subscribe: 10, eth_subscription: 3 } },
    }],
    gateway: { ws: { poll_interval_ms: 100, max_subscriptions_per_socket: 4, max_sockets_per_endpoint: 3, max_message_bytes: 4096, upstream_retry_ms: 1000 } },
  });
  m = await t.merchant({ plan: 'pro' });
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await proxy?.kill().catch(() => {});
  await lonely?.kill().catch(() => {});
  await anvil?.stop();
});

describe('WebSocket through the gateway', () => {
  it('viem webSocket(): newHeads and the token\'s Transfer logs', async () => {
    const ep = await endpoint();
    const client = createPublicClient({ transport: webSocket(ep.url) });
    const blocks: bigint[] = [];
    const logs: Log[] = [];
    // `poll: false`: viem subscribes (eth_subscribe) instead of polling over the socket. Its
    // types only allow it when they can tell the transport is a WebSocket one.
    const unwatchBlocks = client.watchBlockNumber({ poll: false, onBlockNumber: (n: bigint) => { blocks.push(n); } } as never);
    const unwatchLogs = client.watchEvent({ address: token, event: transferAbi[0], poll: false, onLogs: (l: Log[]) => { logs.push(...l); } } as never);
    await waitFor('viem\'s two subscriptions', () => t.service.gateway.websockets.subscriptions === 2);
    await transfer(A, 5n);
    await waitFor('a block and a log', () => blocks.length > 0 && logs.length > 0);
    expect((logs[0] as any).args.value).toBe(5n);
    expect(logs[0]!.address.toLowerCase()).toBe(token.toLowerCase());
    unwatchBlocks();
    unwatchLogs();
    await client.transport.getRpcClient().then((c) => c.close());
    await waitFor('viem gone', () => t.service.gateway.websockets.subscriptions === 0);
  });

  it('ethers v6 WebSocketProvider: block events and contract events', async () => {
    const ep = await endpoint();
    const provider = new ethers.WebSocketProvider(ep.url);
    const blocks: number[] = [];
    const values: bigint[] = [];
    await provider.on('block', (n: number) => { blocks.push(n); });
    const contract = new ethers.Contract(token, ['event Transfer(address indexed from, address indexed to, uint256 value)'], provider);
    await contract.on('Transfer', (_from: string, _to: string, value: bigint) => { values.push(value); });
    await waitFor('ethers\' two subscriptions', () => t.service.gateway.websockets.subscriptions === 2);
    await transfer(A, 7n);
    await waitFor('ethers block and Transfer', () => blocks.length > 0 && values.includes(7n));
    expect(await provider.getBlockNumber()).toBeGreaterThan(0);
    await provider.destroy();
    await waitFor('ethers gone', () => t.service.gateway.websockets.subscriptions === 0);
  });

  it('web3.js: newBlockHeads and logs subscriptions', async () => {
    const ep = await endpoint();
    const web3 = new Web3(new Web3.providers.WebsocketProvider(ep.url));
    const heads: bigint[] = [];
    const logs: any[] = [];
    const s1 = await web3.eth.subscribe('newBlockHeaders');
    s1.on('data', (h) => { heads.push(BigInt(h.number!)); });
    const s2 = await web3.eth.subscribe('logs', { address: token, topics: [TRANSFER_TOPIC] });
    s2.on('data', (l) => { logs.push(l); });
    expect(t.service.gateway.websockets.subscriptions).toBe(2);
    await transfer(A, 9n);
    await waitFor('web3 head and log', () => heads.length > 0 && logs.length > 0);
    expect(logs[0].address.toLowerCase()).toBe(token.toLowerCase());
    await web3.eth.clearSubscriptions();
    (web3.currentProvider as any).disconnect(1000);
    await waitFor('web3 gone', () => t.service.gateway.websockets.subscriptions === 0);
  });

  it('an upstream socket killed mid-stream: the subscription carries on with the same id, no block missed', async () => {
    const ep = await endpoint();
    const c = await Client.open(ep.url);
    const sub = (await c.call('eth_subscribe', ['newHeads'])).result as string;
    const logSub = (await c.call('eth_subscribe', ['logs', { address: token }])).result as string;
    expect(sub).toMatch(/^0x[0-9a-f]{32}$/);
    await anvil.test.mine({ blocks: 1 });
    await waitFor('a head before the kill', () => c.notifications(sub).length >= 1);
    await proxy.kill();
    // Blocks made while the gateway moves to the next upstream are fetched, not lost.
    await anvil.test.mine({ blocks: 2 });
    await transfer(A, 11n);
    await anvil.test.mine({ blocks: 1 });
    await waitFor('heads after the kill', () => c.notifications(sub).length >= 5);
    const numbers = c.notifications(sub).map((h) => Number.parseInt(h.number, 16));
    for (let i = 1; i < numbers.length; i++) expect(numbers[i]).toBe(numbers[i - 1]! + 1);
    await waitFor('the log after the kill', () => c.notifications(logSub).some((l) => BigInt(l.data) === 11n));
    expect(c.closed).toBeUndefined();
    // Calls still work on the same socket.
    expect((await c.call('eth_blockNumber')).result).toMatch(/^0x/);
    expect((await c.call('eth_unsubscribe', [sub])).result).toBe(true);
    expect((await c.call('eth_unsubscribe', [sub])).result).toBe(false);
    c.ws.close();
  });

  it('when no WebSocket upstream is left, newHeads carries on by polling HTTP and moves back when one returns; newPendingTransactions is closed 1013', async () => {
    const ep = await endpoint('single');
    const c = await Client.open(ep.url);
    const pendingClient = await Client.open(ep.url);
    const sub = (await c.call('eth_subscribe', ['newHeads'])).result as string;
    expect((await pendingClient.call('eth_subscribe', ['newPendingTransactions'])).result).toBeDefined();
    await anvil.test.mine({ blocks: 1 });
    await waitFor('a head', () => c.notifications(sub).length >= 1);
    await lonely.kill();
    await waitFor('close 1013', () => pendingClient.closed, 10_000);
    expect(pendingClient.closed).toEqual({ code: 1013, reason: 'no upstream available' });
    await anvil.test.mine({ blocks: 2 });
    await waitFor('polled heads', () => c.notifications(sub).length >= 3, 10_000);
    // The node comes back: the feed returns to its socket.
    const before = lonely.connections;
    lonely = await lonely.restart();
    await waitFor('the gateway back on the WebSocket upstream', () => lonely.connections > 0, 10_000);
    expect(before).toBeGreaterThan(0);
    await anvil.test.mine({ blocks: 2 });
    await waitFor('heads after the return', () => c.notifications(sub).length >= 5, 10_000);
    const numbers = c.notifications(sub).map((h) => Number.parseInt(h.number, 16));
    for (let i = 1; i < numbers.length; i++) expect(numbers[i]).toBe(numbers[i - 1]! + 1);
    expect(c.closed).toBeUndefined();
    c.ws.close();
  });

  it('without a WebSocket upstream, newHeads and logs are polled over HTTP; newPendingTransactions is refused', async () => {
    const ep = await endpoint('poll');
    const c = await Client.open(ep.url);
    const heads = (await c.call('eth_subscribe', ['newHeads'])).result as string;
    const logs = (await c.call('eth_subscribe', ['logs', { address: token, topics: [TRANSFER_TOPIC] }])).result as string;
    const pending = await c.call('eth_subscribe', ['newPendingTransactions']);
    expect(pending.error.message).toMatch(/needs a WebSocket upstream/);
    await transfer(A, 13n);
    await anvil.test.mine({ blocks: 1 });
    await waitFor('polled heads and log', () => c.notifications(heads).length >= 2 && c.notifications(logs).length >= 1);
    expect(c.notifications(heads)[0].transactions).toBeUndefined();
    expect(BigInt(c.notifications(logs)[0].data)).toBe(13n);
    c.ws.close();
  });

  it('limits: subscriptions per socket, bad params, message size, sockets per endpoint', async () => {
    const ep = await endpoint();
    const c = await Client.open(ep.url);
    expect((await c.call('eth_subscribe', ['blocks'])).error.code).toBe(-32602);
    expect((await c.call('eth_subscribe', ['logs', { address: 'nope' }])).error.message).toMatch(/address/);
    for (let i = 0; i < 4; i++) expect((await c.call('eth_subscribe', ['newHeads'])).result).toBeDefined();
    expect((await c.call('eth_subscribe', ['newHeads'])).error).toMatchObject({ code: -32005, message: expect.stringMatching(/subscription limit/) });
    c.ws.send('not json');
    await waitFor('parse error', () => c.got.some((g) => g.error?.code === -32700));
    const others = await Promise.all([Client.open(ep.url), Client.open(ep.url)]);
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(ep.url);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode!));
      ws.on('open', () => resolve(101));
    });
    expect(refused).toBe(429);
    c.ws.send('x'.repeat(5000));
    await waitFor('close on a too large message', () => c.closed);
    expect(c.closed!.code).toBe(1009);
    for (const o of others) o.ws.close();
  });

  it('upgrades are refused like HTTP requests; pause and allowlist changes close open sockets within a second', async () => {
    const status = (url: string, headers: Record<string, string> = {}) => new Promise<number>((resolve) => {
      const ws = new WebSocket(url, { headers });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode!));
      ws.on('open', () => { ws.close(); resolve(101); });
      ws.on('error', () => {});
    });
    const ep = await endpoint();
    const base = t.gatewayUrl.replace('http', 'ws');
    expect(await status(`${base}/00000000-0000-4000-8000-000000000000`)).toBe(404);
    expect(await status(ep.url, { host: 'rpc-anvil-poll.localhost:8545' })).toBe(404);
    expect(await status(ep.url, { host: 'rpc-anvil-local.localhost:8545' })).toBe(101);
    // Another protocol's upgrade on a POST (curl --http2 on http://) is served as plain HTTP.
    const h2c = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const u = new URL(ep.url.replace('ws', 'http'));
      const r = httpRequest({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', connection: 'Upgrade, HTTP2-Settings', upgrade: 'h2c' } }, (res) => {
        let body = '';
        res.on('data', (d) => { body += d; });
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      r.on('error', reject);
      r.end(json({ jsonrpc: '2.0', id: 7, method: 'eth_chainId' }));
    });
    expect(h2c.status).toBe(200);
    expect(JSON.parse(h2c.body)).toMatchObject({ id: 7, result: '0x7a69' });

    const c = await Client.open(ep.url);
    await c.call('eth_subscribe', ['newHeads']);
    // Well inside the 5 s registry reload: the sweep (250 ms) closes it, not the next reload.
    expect((await m.call('PATCH', `/v1/endpoints/${ep.id}/status`, json({ status: 'paused' }))).status).toBe(200);
    await waitFor('close on pause', () => c.closed, 2000);
    expect(c.closed).toEqual({ code: 4002, reason: 'endpoint paused' });
    expect(await status(ep.url)).toBe(403);
    await m.call('PATCH', `/v1/endpoints/${ep.id}/status`, json({ status: 'active' }));

    const d = await Client.open(ep.url);
    expect((await m.call('PATCH', `/v1/endpoints/${ep.id}/allowed-ips`, json({ allowed_ips: ['10.1.2.3'] }))).status).toBe(200);
    await waitFor('close on allowlist change', () => d.closed, 2000);
    expect(d.closed).toEqual({ code: 4003, reason: 'ip address not allowed' });
    expect(await status(ep.url)).toBe(403);
  });

  it('usage shows the calls and the notifications; /metrics shows sockets and notifications', async () => {
    const ep = await endpoint();
    const c = await Client.open(ep.url);
    const sub = (await c.call('eth_subscribe', ['newHeads'])).result as string;
    await c.call('eth_blockNumber');
    await c.call('eth_blockNumber');
    await anvil.test.mine({ blocks: 3 });
    await waitFor('three heads', () => c.notifications(sub).length >= 3);
    const got = c.notifications(sub).length;
    c.ws.close();
    await waitFor('socket closed', () => c.closed);
    await t.service.gateway.meter.flush();
    const { usage } = (await m.call('GET', `/v1/endpoints/${ep.id}/usage?days=7`)).body;
    const by = Object.fromEntries(usage.methods.map((x: { method: string }) => [x.method, x]));
    expect(by.eth_subscribe).toEqual({ method: 'eth_subscribe', requests: 1, credits: 10 });
    expect(by.eth_blockNumber).toEqual({ method: 'eth_blockNumber', requests: 2, credits: 20 });
    expect(by.eth_subscription).toEqual({ method: 'eth_subscription', requests: got, credits: 3 * got });

    const metrics = await rawCall(t.metricsUrl!, 'GET', '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/rpcctl_ws_notifications_total\{network="anvil",env="local"\} \d+/);
    expect(metrics.body).toMatch(/rpcctl_ws_upstream_switches_total\{network="anvil",env="local"\} [1-9]/);
    expect(metrics.body).toMatch(/rpcctl_gateway_rejections_total\{network="anvil",env="local",reason="paused",transport="ws"\} 1/);
    expect(metrics.body).not.toContain(proxy.url.split('//')[1]!.split(':')[1]! + '/');
  });

  // Last: it rewinds the chain.
  it('polling: a log taken back by a reorg is sent again with removed: true, and newHeads follows the new chain', async () => {
    const ep = await endpoint('poll');
    const c = await Client.open(ep.url);
    const heads = (await c.call('eth_subscribe', ['newHeads'])).result as string;
    const logs = (await c.call('eth_subscribe', ['logs', { address: token, topics: [TRANSFER_TOPIC] }])).result as string;
    const snapshot = await anvil.test.snapshot();
    await transfer(A, 21n);
    await anvil.test.mine({ blocks: 1 });
    const sent = await waitFor('the polled log', () => c.notifications(logs).find((l) => BigInt(l.data) === 21n));
    expect(sent.removed).toBe(false);
    const oldHead = await anvil.public.getBlock();
    await waitFor('the old head', () => c.notifications(heads).some((h) => h.hash === oldHead.hash));
    // A longer chain without the transfer replaces both blocks.
    await anvil.test.revert({ id: snapshot });
    await anvil.test.mine({ blocks: 3 });
    const newHead = await anvil.public.getBlock();
    await waitFor('the new head', () => c.notifications(heads).some((h) => h.hash === newHead.hash));
    await waitFor('the log taken back', () => c.notifications(logs).some((l) => l.removed === true));
    expect(c.notifications(logs).filter((l) => l.removed)).toEqual([{ ...sent, removed: true }]);
    // Every height of the new chain was sent, in order, after the replaced ones.
    const after = c.notifications(heads).slice(c.notifications(heads).findIndex((h) => h.hash === oldHead.hash) + 1);
    const replacedFrom = Number(sent.blockNumber);
    expect(after.map((h) => Number(h.number))).toEqual([replacedFrom, replacedFrom + 1, replacedFrom + 2]);
    expect(after.map((h) => h.hash)).not.toContain(sent.blockHash);
    c.ws.close();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FetchRequest, JsonRpcProvider, Network } from 'ethers';
import { Web3 } from 'web3';
import { createPublicClient, http } from 'viem';
import { mainnet } from 'viem/chains';
import { FakeEvm } from './helpers/fake-evm.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

// The review drove the gateway with ethers v6, web3.js v4 and viem: refused batches left ethers
// and web3.js waiting for ever, `id: null` left web3.js with an empty message, and -32003 made
// viem throw TransactionRejectedRpcError. Each library must now surface the gateway's message.
let t: TestService;
let eth: FakeEvm;
let m: Merchant;
const urls: Record<'notFound' | 'paused' | 'ipNotAllowed', string> = { notFound: '', paused: '', ipNotAllowed: '' };
const MESSAGES = { notFound: 'endpoint not found', paused: 'endpoint paused', ipNotAllowed: 'ip address not allowed' } as const;
let small: string;

beforeAll(async () => {
  eth = await new FakeEvm().start();
  t = await startTestService({
    gateway: { probe_interval_ms: 60_000 },
    networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [eth.url] }] }],
    plans: [
      { id: 1, slug: 'free', name: 'Free', included_credits: 100_000, rps_limit: 5, endpoints_limit: 10 },
      { id: 2, slug: 'big', name: 'Big', included_credits: 100_000, rps_limit: 10_000, endpoints_limit: 10 },
    ],
  });
  m = await t.merchant({ plan: 'big' });
  const create = async (merchant: Merchant, name: string) => (await merchant.call('POST', '/v1/endpoints', JSON.stringify({ name, network_environment_id: 1 }))).body.endpoint as { id: number; uuid: string };
  const paused = await create(m, 'paused');
  await m.call('PATCH', `/v1/endpoints/${paused.id}/status`, '{"status":"paused"}');
  const fenced = await create(m, 'fenced');
  await m.call('PATCH', `/v1/endpoints/${fenced.id}/allowed-ips`, '{"allowed_ips":["203.0.113.50"]}');
  urls.paused = `${t.gatewayUrl}/${paused.uuid}`;
  urls.ipNotAllowed = `${t.gatewayUrl}/${fenced.uuid}`;
  urls.notFound = `${t.gatewayUrl}/00000000-0000-4000-8000-000000000000`;
  const free = await t.merchant({ plan: 'free' });
  small = `${t.gatewayUrl}/${(await create(free, 'small')).uuid}`;
}, 30_000);
afterAll(async () => {
  await t.stop();
  await eth.stop();
});

const network = Network.from(1);
const addr = (i: number) => `0x${String(i + 1).padStart(40, '0')}` as `0x${string}`;
function ethersProvider(url: string, batchMaxCount = 1) {
  const req = new FetchRequest(url);
  // No retry of 429s: the test wants to see the refusal itself.
  req.setThrottleParams({ maxAttempts: 1 });
  return new JsonRpcProvider(req, network, { staticNetwork: network, batchMaxCount, batchStallTime: 5 });
}

async function atSecondStart() {
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 10));
}

describe.each(Object.keys(MESSAGES) as Array<keyof typeof MESSAGES>)('refusal: %s', (kind) => {
  const message = MESSAGES[kind];
  it('ethers v6 surfaces the message', async () => {
    const p = ethersProvider(urls[kind]);
    await expect(p.getBlockNumber()).rejects.toThrow(message);
    p.destroy();
  });
  it('web3.js v4 surfaces the message', async () => {
    const web3 = new Web3(urls[kind]);
    await expect(web3.eth.getBlockNumber()).rejects.toThrow(message);
  });
  it('viem surfaces the message, and no refusal is a TransactionRejectedRpcError', async () => {
    const client = createPublicClient({ chain: mainnet, transport: http(urls[kind], { retryCount: 0 }) });
    const err = await client.getBlockNumber().then(() => undefined, (e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err!.message).toContain(message);
    expect(err!.name).not.toBe('TransactionRejectedRpcError');
  });
});

describe('RPS refusals and batches', () => {
  it('ethers: six reads batched at once on a 5 rps plan all settle; the sixth names the limit', async () => {
    const p = ethersProvider(small, 10);
    await atSecondStart();
    // Distinct calls: ethers shares one answer between identical ones in flight.
    const settled = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => p.send('eth_getBalance', [addr(i), 'latest'])));
    p.destroy();
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(5);
    const rejected = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
    expect(rejected).toHaveLength(1);
    expect(String(rejected[0]!.reason.message)).toContain('rps limit exceeded');
  });

  it('web3.js: a batch over the window settles every request, with the message on the refused ones', async () => {
    const web3 = new Web3(small);
    await atSecondStart();
    const batch = new web3.BatchRequest();
    for (let i = 0; i < 7; i++) void batch.add({ jsonrpc: '2.0', id: i + 1, method: 'eth_blockNumber', params: [] }).catch(() => {});
    const answers = await batch.execute() as Array<{ id: number; result?: string; error?: { code: number; message: string } }>;
    expect(answers).toHaveLength(7);
    expect(answers.filter((a) => a.result)).toHaveLength(5);
    expect(answers.filter((a) => a.error).map((a) => a.error!.message)).toEqual(['rps limit exceeded', 'rps limit exceeded']);
  });

  it('viem: a single call over the window names the limit (LimitExceeded, -32005)', async () => {
    const client = createPublicClient({ chain: mainnet, transport: http(small, { retryCount: 0 }) });
    await atSecondStart();
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => client.request({ method: 'eth_getBalance', params: [addr(i), 'latest'] })));
    const rejected = results.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
    expect(rejected).toHaveLength(1);
    expect(String(rejected[0]!.reason.message)).toContain('rps limit exceeded');
    expect(rejected[0]!.reason.name).not.toBe('TransactionRejectedRpcError');
  });
});

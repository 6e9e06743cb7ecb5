import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, http, parseEther, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { ANVIL_KEYS, startAnvil, type Anvil } from './helpers/anvil.js';
import { startTestService, type TestService } from './helpers/service.js';

let anvil: Anvil;
let t: TestService;
let endpointId: number;
let gatewayUrl: string;
let accountId: number;
let m: Awaited<ReturnType<TestService['merchant']>>;

beforeAll(async () => {
  anvil = await startAnvil();
  t = await startTestService({
    networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'anvil', upstreams: [anvil.url] }],
      credits: { default: 20, methods: { eth_blockNumber: 10, eth_getBalance: 15, eth_sendRawTransaction: 100 } } }],
    gateway: { probe_interval_ms: 60_000 },
  });
  m = await t.merchant();
  accountId = m.userId;
  const e = (await m.call('POST', '/v1/endpoints', '{"name":"anvil","network_environment_id":1}')).body.endpoint;
  endpointId = e.id;
  gatewayUrl = `${t.gatewayUrl}/${e.uuid}`;
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await anvil?.stop();
});

describe('a real Ethereum node behind the gateway, driven by viem', () => {
  it('reads the block number and a balance', async () => {
    const client = createPublicClient({ chain: foundry, transport: http(gatewayUrl) });
    expect(await client.getBlockNumber()).toBeGreaterThanOrEqual(0n);
    const balance = await client.getBalance({ address: privateKeyToAccount(ANVIL_KEYS[0]).address });
    expect(balance).toBeGreaterThan(parseEther('1000'));
  });

  it('sends a signed transaction through the gateway and sees it mined', async () => {
    const account = privateKeyToAccount(ANVIL_KEYS[0]);
    const to = privateKeyToAccount(ANVIL_KEYS[1]).address;
    const client = createPublicClient({ chain: foundry, transport: http(gatewayUrl) });
    const wallet = createWalletClient({ account, chain: foundry, transport: http(gatewayUrl) });
    const before = await client.getBalance({ address: to });
    const request = await wallet.prepareTransactionRequest({ to, value: parseEther('1.5') });
    const signed = await wallet.signTransaction(request);
    const hash: Hex = await wallet.sendRawTransaction({ serializedTransaction: signed });
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 100 });
    expect(receipt.status).toBe('success');
    expect(await client.getBalance({ address: to })).toBe(before + parseEther('1.5'));
  });

  it('sends a JSON-RPC batch and meters each element', async () => {
    const bodies: unknown[] = [];
    const client = createPublicClient({
      chain: foundry,
      transport: http(gatewayUrl, { batch: { batchSize: 10, wait: 20 }, onFetchRequest: async (req) => { bodies.push(JSON.parse(await req.clone().text())); } }),
    });
    const address = privateKeyToAccount(ANVIL_KEYS[0]).address;
    await t.service.gateway.meter.flush();
    const before = (await m.call('GET', `/v1/endpoints/${endpointId}/usage?days=7`)).body.usage;
    const [n, b, c] = await Promise.all([client.getBlockNumber(), client.getBalance({ address }), client.getChainId()]);
    expect(n).toBeGreaterThan(0n);
    expect(b).toBeGreaterThan(0n);
    expect(c).toBe(foundry.id);
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toHaveLength(3);
    await t.service.gateway.meter.flush();
    const after = (await m.call('GET', `/v1/endpoints/${endpointId}/usage?days=7`)).body.usage;
    expect(after.total_requests - before.total_requests).toBe(3);
    const sent = after.methods.find((x: { method: string }) => x.method === 'eth_sendRawTransaction');
    expect(sent).toMatchObject({ requests: 1, credits: 100 });
    expect(accountId).toBeGreaterThan(0);
  });
});

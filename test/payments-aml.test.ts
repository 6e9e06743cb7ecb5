import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpAmlProvider } from '../src/payments/aml/http.js';
import { AmlRetryError } from '../src/payments/aml/types.js';
import { getAccount, webhookSecretOf } from '../src/store/index.js';
import { startFakeChainalysis, startFakeTrm, type FakeAml } from './helpers/fake-aml.js';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';
import { signatureValid, startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestService, type TestService } from './helpers/service.js';

const CLEAN = '0x1111111111111111111111111111111111111111';
const DIRTY = '0x2222222222222222222222222222222222222222';
const subject = (address: string) => ({ family: 'evm' as const, network: 'eth', address, txHash: '0xabc' });

let chainalysis: FakeAml;
let trm: FakeAml;
beforeAll(async () => {
  [chainalysis, trm] = await Promise.all([startFakeChainalysis('ca-key'), startFakeTrm('trm-key')]);
  for (const f of [chainalysis, trm]) f.risks.set(DIRTY, 'Severe');
});
afterAll(async () => {
  await Promise.all([chainalysis?.close(), trm?.close()]);
});

const provider = (preset: 'chainalysis' | 'trm', baseUrl: string, apiKey: string) => new HttpAmlProvider({
  preset, baseUrl, apiKey, timeoutMs: 2000, chains: { eth: 'ethereum' }, reportUrlTemplate: preset === 'chainalysis' ? 'https://reactor.example/address/{address}' : null,
});

describe('http AML adapter against fakes of the providers\' documented protocols', () => {
  it('Chainalysis: registers, then reads the risk; Severe is score 100', async () => {
    const p = provider('chainalysis', chainalysis.url, 'ca-key');
    const clean = await p.screen(subject(CLEAN));
    expect(clean).toMatchObject({ provider: 'chainalysis', risk_level: 'low', score: 10, details: [], report_url: `https://reactor.example/address/${CLEAN}` });
    const dirty = await p.screen(subject(DIRTY));
    expect(dirty).toMatchObject({ risk_level: 'severe', score: 100, details: [{ category: 'sanctioned entity', address: DIRTY, source: 'chainalysis:cluster:Example Mixer' }] });
    const calls = chainalysis.requests.slice(-2).map((r) => `${r.method} ${r.path}`);
    expect(calls).toEqual(['POST /api/risk/v2/entities', `GET /api/risk/v2/entities/${DIRTY}`]);
  });

  it('Chainalysis: a result still IN_PROGRESS, a 429 and a 5xx are retried later, a wrong key is an error', async () => {
    const p = provider('chainalysis', chainalysis.url, 'ca-key');
    chainalysis.pendingPolls = 1;
    await expect(p.screen(subject(CLEAN))).rejects.toSatisfy((e) => e instanceof AmlRetryError && /IN_PROGRESS/.test(e.message));
    chainalysis.pendingPolls = 0;
    chainalysis.failNext.push(429);
    await expect(p.screen(subject(CLEAN))).rejects.toSatisfy((e) => e instanceof AmlRetryError && e.retryAfterMs === 1000);
    chainalysis.failNext.push(503);
    await expect(p.screen(subject(CLEAN))).rejects.toBeInstanceOf(AmlRetryError);
    await expect(provider('chainalysis', chainalysis.url, 'wrong').screen(subject(CLEAN))).rejects.toThrow(/HTTP 403: Forbidden/);
    await expect(provider('chainalysis', 'http://127.0.0.1:9', 'ca-key').screen(subject(CLEAN))).rejects.toBeInstanceOf(AmlRetryError);
  });

  it('TRM Labs: one POST with Basic auth; the worst indicator level decides', async () => {
    const p = provider('trm', trm.url, 'trm-key');
    expect(await p.screen(subject(CLEAN))).toMatchObject({ provider: 'trm', risk_level: 'low', score: 10, details: [], report_url: null });
    const dirty = await p.screen(subject(DIRTY));
    expect(dirty).toMatchObject({ risk_level: 'severe', score: 100, report_url: `https://app.trmlabs.com/address/${DIRTY}` });
    expect(dirty.details).toEqual([
      { category: 'Sanctions', address: DIRTY, source: 'trm:ownership' },
      { category: 'Sanctions', address: DIRTY, source: 'trm:entity:Example Entity' },
    ]);
    expect(JSON.parse(trm.requests.at(-1)!.body)).toEqual([{ address: DIRTY, chain: 'ethereum', accountExternalId: '0xabc' }]);
    trm.failNext.push(429);
    await expect(p.screen(subject(CLEAN))).rejects.toBeInstanceOf(AmlRetryError);
    await expect(provider('trm', trm.url, 'nope').screen(subject(CLEAN))).rejects.toThrow(/HTTP 401/);
  });
});

describe('a failing provider holds the order in aml_check; it is never passed unscreened', () => {
  let chain: FakeEvm;
  let t: TestService;
  let rx: Receiver;
  beforeAll(async () => {
    [chain, rx] = await Promise.all([startFakeEvmChain(), startReceiver()]);
    t = await startTestService({
      networks: [{ slug: 'fake', name: 'Fake', family: 'evm', environments: [{ slug: 'local', upstreams: [chain.url] }] }],
      webhooks: { allow_private_urls: true, timeout_ms: 2000 },
      payments: { aml: { provider: 'http', http: { preset: 'chainalysis', base_url: chainalysis.url, api_key_env: 'TEST_CA_KEY' } }, tick_ms: 50 },
    }, { watch: { pollMs: 50, delivery: { pollMs: 50 } }, env: { TEST_CA_KEY: 'ca-key' } });
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
    await Promise.all([chain?.close(), rx?.close()]);
  });

  it('503s, then a 429: the order waits; when the provider answers Severe the order fails', async () => {
    const m = await t.merchant({ plan: 'pro' });
    const secret = webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!);
    const address = '0x3333333333333333333333333333333333333333';
    const created = await m.call('POST', '/v1/payments', JSON.stringify({ order_id: 'o1', network_slug: 'fake', amount: '1', address, webhook_url: rx.url }));
    expect(created.status).toBe(200);
    const id = created.body.payment.payment_id;
    chainalysis.failNext.push(503, 503, 429);
    const before = chainalysis.requests.length;
    chain.mine([{ from: DIRTY, to: address, wei: 10n ** 18n }]);
    await rx.waitFor((all) => all.length >= 2);
    await new Promise((r) => setTimeout(r, 1500));
    // Two failures so far (backoff 2 s, then 10 s): still in aml_check, and nothing more sent.
    expect((await m.call('GET', `/v1/payments/${id}`)).body.payment).toMatchObject({ status: 'aml_check', aml: null });
    expect(rx.received.map((r) => JSON.parse(r.body).event)).toEqual(['seen', 'aml_check']);
    const job = await t.store.db.selectFrom('aml_jobs').selectAll().executeTakeFirstOrThrow();
    expect(job).toMatchObject({ status: 'pending', last_error: expect.stringMatching(/HTTP 503/) });
    // Let the queue try again now rather than after its backoff (up to 10 s by then).
    const hurry = setInterval(() => void t.store.db.updateTable('aml_jobs').set({ next_attempt_ms: 0 }).where('status', '=', 'pending').execute(), 200);
    try {
      await rx.waitFor((all) => all.length >= 3, 15_000);
    } finally {
      clearInterval(hurry);
    }
    expect(chainalysis.requests.length - before).toBeGreaterThanOrEqual(4);
    const last = JSON.parse(rx.received[2]!.body);
    expect(last).toMatchObject({ event: 'failed', reason: 'aml_rejected', aml: { provider: 'chainalysis', risk_level: 'severe', score: 100 } });
    for (const r of rx.received) expect(signatureValid(secret, r)).toBe(true);
  });

  it('a reorg while the order is screened: back to underpaid, the screening is dropped', async () => {
    const m = await t.merchant({ plan: 'pro' });
    const address = '0x6666666666666666666666666666666666666666';
    const id = (await m.call('POST', '/v1/payments', JSON.stringify({ order_id: 'o2', network_slug: 'fake', amount: '1', address, webhook_url: rx.url }))).body.payment.payment_id;
    const events = () => rx.received.map((r) => JSON.parse(r.body)).filter((b) => b.payment_id === id).map((b) => [b.event, b.reason]);
    chainalysis.failNext.push(503, 503, 503, 503, 503, 503);
    const { height } = chain.mine([{ from: CLEAN, to: address, wei: 10n ** 18n }]);
    await rx.waitFor(() => events().length >= 2);
    expect(events()).toEqual([['seen', null], ['aml_check', null]]);
    chain.orphan(height);
    chain.mine();
    chain.mine();
    await rx.waitFor(() => events().length >= 3, 15_000);
    expect(events()).toEqual([['seen', null], ['aml_check', null], ['underpaid', 'reorg']]);
    expect((await m.call('GET', `/v1/payments/${id}`)).body.payment).toMatchObject({ status: 'underpaid', amount_received: '0', tx_hashes: [] });
    const order = await t.store.db.selectFrom('payment_orders').select('id').where('payment_id', '=', id).executeTakeFirstOrThrow();
    expect(await t.store.db.selectFrom('aml_jobs').select(['status', 'last_error']).where('order_pk', '=', order.id).execute())
      .toEqual([{ status: 'cancelled', last_error: 'funding left the chain (reorg)' }]);
    chainalysis.failNext.length = 0;
  });
});

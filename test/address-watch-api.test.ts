import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressWatchClient } from '../src/client/index.js';
import { getAccount, webhookSecretOf } from '../src/store/index.js';
import { startReceiver, signatureValid, type Receiver } from './helpers/receiver.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

const dead = ['http://127.0.0.1:1'];
const networks = [
  { slug: 'eth', name: 'Ethereum', family: 'evm' as const, environments: [{ slug: 'mainnet', upstreams: dead }, { slug: 'sepolia', upstreams: dead }] },
  { slug: 'stellar', name: 'Stellar', family: 'stellar' as const, environments: [{ slug: 'mainnet', upstreams: dead }] },
];
const plans = [
  { id: 1, slug: 'free', name: 'Free', included_credits: 1000, rps_limit: 5, endpoints_limit: 1, webhook_address_slots: 0 },
  { id: 2, slug: 'small', name: 'Small', included_credits: 1000, rps_limit: 5, endpoints_limit: 1, webhook_address_slots: 3 },
  { id: 3, slug: 'pro', name: 'Pro', included_credits: 1000, rps_limit: 5, endpoints_limit: 1, webhook_address_slots: 1000 },
];
const ADDR = '0x52908400098527886E0F7030069857D2E4169EE7';
const STELLAR = 'GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7';
const json = (o: unknown) => JSON.stringify(o);

let t: TestService;
let strict: TestService;
let rx: Receiver;

beforeAll(async () => {
  [t, strict, rx] = await Promise.all([
    startTestService({ networks, plans, webhooks: { allow_private_urls: true, timeout_ms: 1000, egress_ips: ['203.0.113.7'] } }),
    startTestService({ networks, plans }),
    startReceiver(),
  ]);
});
afterAll(async () => {
  await Promise.all([t?.stop(), strict?.stop(), rx?.close()]);
});

describe('watched addresses', () => {
  it('the free plan has no slots: a clear 400', async () => {
    const m = await t.merchant({ plan: 'free' });
    const r = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'eth', address: ADDR }));
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/Watched address limit reached: the Free plan has no webhook address slots/);
    expect((await m.call('GET', '/v1/address-watch/account')).body).toEqual({
      ok: true, slots_total: 0, slots_used: 0, slots_free: 0, webhook_configured: false, webhook_enabled: false,
    });
  });

  it('adds, returns checksummed, treats any case of the same address as the same watch', async () => {
    const m = await t.merchant({ plan: 'small' });
    const a = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'eth', address: ADDR.toLowerCase() }));
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ ok: true, created: true, network_slug: 'eth', address: ADDR, watch: { address: ADDR } });
    expect(a.body.watch_id).toMatch(/^w_/);
    const again = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'eth', address: `0x${ADDR.slice(2).toUpperCase()}` }));
    expect(again.body).toMatchObject({ ok: true, created: false, watch_id: a.body.watch_id });
    // `eth` is the default environment: `eth-mainnet` names the same one.
    const same = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'eth-mainnet', address: ADDR }));
    expect(same.body).toMatchObject({ created: false, watch_id: a.body.watch_id });
    const other = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'eth-sepolia', address: ADDR }));
    expect(other.body).toMatchObject({ created: true, network_slug: 'eth-sepolia' });
    expect((await m.call('GET', '/v1/address-watch/account')).body).toMatchObject({ slots_total: 3, slots_used: 2, slots_free: 1 });
  });

  it('slots are a hard cap', async () => {
    const m = await t.merchant({ plan: 'small' });
    for (let i = 1; i <= 3; i++) {
      const r = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'eth', address: `0x${String(i).padStart(40, '0')}` }));
      expect(r.status).toBe(200);
    }
    const over = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'eth', address: `0x${'4'.padStart(40, '0')}` }));
    expect(over.status).toBe(400);
    expect(over.body.error).toContain('allows 3 watched addresses');
    // A duplicate at the cap is still answered: it needs no new slot.
    const dup = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'eth', address: `0x${'1'.padStart(40, '0')}` }));
    expect(dup.body).toMatchObject({ ok: true, created: false });
  });

  it.each([
    [{ network_slug: 'eth', address: '0x1234' }, /^address: must be a 20-byte hex address/],
    [{ network_slug: 'eth', address: ADDR.replace('E0F', 'e0F') }, /^address: has an invalid EIP-55 checksum \(did you mean 0x5290/],
    [{ network_slug: 'eth', address: STELLAR }, /^address: must be a 20-byte hex/],
    [{ network_slug: 'stellar', address: ADDR }, /^address: must be a Stellar account id/],
    [{ network_slug: 'stellar', address: `${STELLAR.slice(0, -1)}6` }, /^address: has an invalid StrKey checksum/],
    [{ network_slug: 'doge', address: ADDR }, /^network_slug: unknown network "doge"/],
    [{ network_slug: 'eth' }, /^address: /],
    [{ address: ADDR }, /^network_slug: /],
  ])('rejects %j', async (body, message) => {
    const m = await t.merchant({ plan: 'pro' });
    const r = await m.call('POST', '/v1/address-watch/addresses', json(body));
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(message);
  });

  it('stellar account ids are accepted', async () => {
    const m = await t.merchant({ plan: 'pro' });
    const r = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'stellar', address: STELLAR.toLowerCase() }));
    expect(r.body).toMatchObject({ ok: true, created: true, address: STELLAR });
  });

  it('lists with filters and pages; deletes by watch_id; unknown id is 404', async () => {
    const m = await t.merchant({ plan: 'pro' });
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const net = i <= 3 ? 'eth' : 'eth-sepolia';
      ids.push((await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: net, address: `0x${String(i).padStart(40, 'a')}` }))).body.watch_id);
    }
    const page2 = (await m.call('GET', '/v1/address-watch/addresses?page=2&per_page=2')).body;
    expect(page2).toMatchObject({ ok: true, page: 2, per_page: 2, total: 5 });
    expect(page2.addresses.map((a: { watch_id: string }) => a.watch_id)).toEqual(ids.slice(2, 4));
    expect(Object.keys(page2.addresses[0]).sort()).toEqual(['address', 'created_at', 'network_slug', 'watch_id']);
    const sepolia = (await m.call('GET', '/v1/address-watch/addresses?network_slug=eth-sepolia')).body;
    expect(sepolia.total).toBe(2);
    const one = (await m.call('GET', `/v1/address-watch/addresses?address=0x${'1'.padStart(40, 'A')}`)).body;
    expect(one.addresses.map((a: { watch_id: string }) => a.watch_id)).toEqual([ids[0]]);
    expect((await m.call('GET', '/v1/address-watch/addresses?per_page=201')).body.error).toBe('per_page: must be an integer from 1 to 200');

    expect((await m.call('DELETE', '/v1/address-watch/addresses', json({ watch_id: ids[0] }))).body).toEqual({ ok: true, watch_id: ids[0] });
    expect((await m.call('DELETE', '/v1/address-watch/addresses', json({ watch_id: ids[0] }))).status).toBe(404);
    expect((await m.call('DELETE', '/v1/address-watch/addresses', json({}))).body.error).toMatch(/^watch_id: /);
    // Another account's watch is as absent as a missing one.
    const other = await t.merchant({ plan: 'pro' });
    expect((await other.call('DELETE', '/v1/address-watch/addresses', json({ watch_id: ids[1] }))).status).toBe(404);
    expect((await m.call('GET', '/v1/address-watch/addresses')).body.total).toBe(4);
  });
});

describe('the typed client', () => {
  it('AddressWatchClient.all() pages through every watch', async () => {
    const m = await t.merchant({ plan: 'pro' });
    const watch = new AddressWatchClient(m.client);
    for (let i = 1; i <= 203; i++) await watch.add('eth', `0x${i.toString(16).padStart(40, '0')}`);
    const seen: string[] = [];
    for await (const w of watch.all({ network_slug: 'eth' })) seen.push(w.address.toLowerCase());
    expect(seen).toHaveLength(203);
    expect(new Set(seen).size).toBe(203);
    expect((await watch.account()).slots_used).toBe(203);
  });
});

describe('webhook configuration', () => {
  it('defaults, egress_ips, PUT keeps filters when events is omitted, boolean-only filters', async () => {
    const m = await t.merchant({ plan: 'pro' });
    expect((await m.call('GET', '/v1/address-watch/webhook')).body).toEqual({
      ok: true, url: null, enabled: false, egress_ips: ['203.0.113.7'],
      events: { payment: true, payment_networks: [], payout: true, payout_networks: [], block: true, block_networks: [] },
    });
    const put = await m.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: true, events: { block: false, payout_networks: ['eth-sepolia'] } }));
    expect(put.body).toMatchObject({ ok: true, url: rx.url, enabled: true, events: { payment: true, payout: true, payout_networks: ['eth-sepolia'], block: false } });
    const keep = await m.call('PUT', '/v1/address-watch/webhook', json({ url: `${rx.url}?v=2`, enabled: false }));
    expect(keep.body.events).toEqual(put.body.events);
    expect((await m.call('GET', '/v1/address-watch/webhook')).body).toMatchObject({ url: `${rx.url}?v=2`, enabled: false, events: put.body.events });
    expect((await m.call('GET', '/v1/address-watch/account')).body).toMatchObject({ webhook_configured: true, webhook_enabled: false });
  });

  it.each([
    [{ url: 'ftp://example.com/x', enabled: true }, 'url: must be an http(s) URL'],
    [{ url: 'not a url', enabled: true }, 'url: must be an http(s) URL'],
    [{ url: 'https://example.com/x' }, /^enabled: /],
    [{ url: 'https://example.com/x', enabled: 'yes' }, /^enabled: /],
    [{ url: 'http://127.0.0.1/x', enabled: true, events: { payment: 'yes' } }, 'events.payment: must be a boolean'],
    [{ url: 'http://127.0.0.1/x', enabled: true, events: { colour: true } }, 'unknown key events.colour'],
    [{ url: 'http://127.0.0.1/x', enabled: true, events: { block_networks: ['eth', 'doge'] } }, 'events.block_networks[1]: unknown network "doge"'],
    [{ url: 'http://169.254.169.254/latest', enabled: true }, 'url: 169.254.169.254 is a cloud metadata address; webhooks go to public addresses only'],
  ])('rejects %j', async (body, message) => {
    const m = await t.merchant({ plan: 'pro' });
    const r = await m.call('PUT', '/v1/address-watch/webhook', json(body));
    expect(r.status).toBe(400);
    if (typeof message === 'string') expect(r.body.error).toBe(message);
    else expect(r.body.error).toMatch(message);
  });

  it('SSRF: loopback, private and link-local URLs are refused unless the operator allows them', async () => {
    const m = await strict.merchant({ plan: 'pro' });
    for (const url of ['http://127.0.0.1:9/x', 'http://localhost/x', 'http://10.1.2.3/', 'http://[::1]/', 'http://192.168.1.1/', 'http://169.254.1.1/', 'http://[fe80::1]/']) {
      const r = await m.call('PUT', '/v1/address-watch/webhook', json({ url, enabled: true }));
      expect(r.status, url).toBe(400);
      expect(r.body.error, url).toMatch(/^url: .* (loopback, private or link-local|cloud metadata)/);
    }
    // An IP literal is named once; a name says what it resolves to; both say how to allow them.
    const literal = await m.call('PUT', '/v1/address-watch/webhook', json({ url: 'http://127.0.0.1:9/x', enabled: true }));
    expect(literal.body.error).toBe('url: 127.0.0.1 is a loopback, private or link-local address; '
      + 'webhooks to loopback/private addresses are allowed only when the service runs with --dev (webhooks.allow_private_urls)');
    const named = await m.call('PUT', '/v1/address-watch/webhook', json({ url: 'http://localhost/x', enabled: true }));
    expect(named.body.error).toMatch(/^url: localhost resolves to (127\.0\.0\.1|::1) is a loopback, .*only when the service runs with --dev/);
  });
});

describe('deliveries', () => {
  async function merchantWithWebhook(): Promise<{ m: Merchant; secret: string }> {
    const m = await t.merchant({ plan: 'pro' });
    await m.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: true }));
    const account = await getAccount(t.store, m.userId);
    return { m, secret: webhookSecretOf(t.store, account!) };
  }
  const forWebhook = (id: string) => (all: typeof rx.received) => all.some((r) => r.headers['x-webhook-id'] === id);

  it('test: queued at once, delivered signed through the queue, listed, never billed', async () => {
    const { m, secret } = await merchantWithWebhook();
    const t0 = Date.now();
    const r = await m.call('POST', '/v1/address-watch/webhook/test', json({ type: 'payment', network: 'eth' }));
    expect(r.status).toBe(200);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(r.body).toMatchObject({ ok: true, queued: true });
    const id = r.body.webhook_id as string;
    await rx.waitFor(forWebhook(id));
    const got = rx.received.find((x) => x.headers['x-webhook-id'] === id)!;
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['x-webhook-attempt']).toBe('1');
    expect(Math.abs(Number(got.headers['x-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    expect(signatureValid(secret, got)).toBe(true);
    expect(signatureValid('whsec_wrong', got)).toBe(false);
    const body = JSON.parse(got.body);
    expect(body).toMatchObject({ id, type: 'payment', direction: 'in', network: 'eth', test: true });
    expect(typeof body.block_height).toBe('number');

    const block = await m.call('POST', '/v1/address-watch/webhook/test', json({ type: 'block', network: 'eth-sepolia' }));
    await rx.waitFor(forWebhook(block.body.webhook_id));
    const b = JSON.parse(rx.received.find((x) => x.headers['x-webhook-id'] === block.body.webhook_id)!.body);
    expect(b).toMatchObject({ type: 'block', network: 'eth-sepolia', tx_count: 2 });
    expect(b.transactions).toHaveLength(2);

    const list = await waitForList(m, (d) => d.length === 2 && d.every((x) => x.status === 'delivered'));
    expect(list[0]).toMatchObject({ webhook_id: block.body.webhook_id, test: true, status: 'delivered', attempt_count: 1, event_id: null, next_retry_at: null });
    expect(list[1].attempts).toEqual([expect.objectContaining({ attempt: 1, status_code: 200, error: null, next_retry_at: null })]);
    expect(typeof list[1].attempts[0].duration_ms).toBe('number');
    const usage = (await m.call('GET', '/v1/account/usage?days=7')).body.usage;
    expect(usage.total_credits).toBe(0);
    expect(usage.methods).toEqual([]);
  });

  it('test needs a configured webhook and a known network', async () => {
    const m = await t.merchant({ plan: 'pro' });
    expect((await m.call('POST', '/v1/address-watch/webhook/test', json({ type: 'payment', network: 'eth' }))).body.error).toMatch(/^No webhook configured/);
    expect((await m.call('POST', '/v1/address-watch/webhook/test', json({ type: 'tx', network: 'eth' }))).body.error).toBe('type: must be one of payment, payout, other, block');
    expect((await m.call('POST', '/v1/address-watch/webhook/test', json({ type: 'block', network: 'nope' }))).body.error).toMatch(/^network: unknown network "nope"/);
  });

  it('retries with the same X-Webhook-Id and the next attempt number; 410 stops', async () => {
    const { m } = await merchantWithWebhook();
    let calls = 0;
    const statuses = [500, 503, 200];
    const prev = rx.respond;
    rx.respond = (rec) => (rec.headers['x-webhook-id']?.toString().startsWith('test_') && JSON.parse(rec.body).type === 'payout' ? statuses[calls++] ?? 200 : prev(rec));
    try {
      const id = (await m.call('POST', '/v1/address-watch/webhook/test', json({ type: 'payout', network: 'eth' }))).body.webhook_id;
      for (let attempt = 1; attempt <= 3; attempt++) {
        await rx.waitFor((all) => all.filter((x) => x.headers['x-webhook-id'] === id).length >= attempt);
        if (attempt < 3) {
          // The attempt counts from the claim; wait for its answer to be recorded too.
          const [d] = await waitForList(m, (l) => l[0]?.attempt_count === attempt && l[0]?.last_status_code === statuses[attempt - 1]);
          expect(d).toMatchObject({ status: 'pending', last_status_code: statuses[attempt - 1] });
          // The schedule's first waits are ~10 s and ~1 min (±20 %): check, then skip ahead.
          const wait = Date.parse(d.next_retry_at) - Date.now();
          const expected = attempt === 1 ? 10_000 : 60_000;
          expect(wait).toBeGreaterThan(expected * 0.8 - 2000);
          expect(wait).toBeLessThan(expected * 1.2 + 100);
          await t.store.db.updateTable('webhook_deliveries').set({ next_attempt_at: Date.now() }).where('webhook_id', '=', id).execute();
          t.service.webhooks.kick();
        }
      }
      const got = rx.received.filter((x) => x.headers['x-webhook-id'] === id);
      expect(got.map((x) => x.headers['x-webhook-attempt'])).toEqual(['1', '2', '3']);
      const [d] = await waitForList(m, (l) => l[0]?.status === 'delivered');
      expect(d.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 503, 200]);
      expect(d.attempts[0].next_retry_at).not.toBeNull();

      rx.respond = (rec) => (JSON.parse(rec.body).type === 'other' ? 410 : prev(rec));
      await m.call('POST', '/v1/address-watch/webhook/test', json({ type: 'other', network: 'eth' }));
      const [gone] = await waitForList(m, (l) => l[0]?.status === 'failed');
      expect(gone).toMatchObject({ attempt_count: 1, last_status_code: 410, next_retry_at: null });
      expect(gone.last_error).toContain('410');
    } finally {
      rx.respond = prev;
    }
  });

  it('a delivery whose worker died (lease ran out) is picked up again', async () => {
    const { m } = await merchantWithWebhook();
    await t.store.db.insertInto('webhook_deliveries').values({
      webhook_id: 'evt_crashed_1', account_id: m.userId, event_id: null, type: 'payment', network: 'eth', body: '{"crashed":true}',
      credits: 30, bill_method: 'webhook:payment', is_test: 0, status: 'pending', attempts: 0, next_attempt_at: Date.now() - 1000,
      lease_owner: 'a-dead-worker', lease_until: Date.now() - 1, last_status_code: null, last_error: null, created_at: new Date().toISOString(), delivered_at: null,
    }).execute();
    t.service.webhooks.kick();
    await rx.waitFor(forWebhook('evt_crashed_1'));
    await waitForList(m, (l) => l[0]?.status === 'delivered');
    const usage = (await m.call('GET', '/v1/account/usage?days=7')).body.usage;
    expect(usage.methods).toEqual([{ method: 'webhook:payment', requests: 1, credits: 30 }]);
  });

  it('a disabled webhook cancels queued deliveries; the ninth failed attempt gives up', async () => {
    const { m } = await merchantWithWebhook();
    const row = (webhook_id: string, attempts: number) => ({
      webhook_id, account_id: m.userId, event_id: null, type: 'payment', network: 'eth', body: '{}', credits: 30,
      bill_method: 'webhook:payment', is_test: 0, status: 'pending', attempts, next_attempt_at: Date.now(),
      lease_owner: null, lease_until: null, last_status_code: null, last_error: null, created_at: new Date().toISOString(), delivered_at: null,
    });
    const prev = rx.respond;
    rx.respond = (rec) => (rec.headers['x-webhook-id'] === 'evt_last_try' ? 500 : prev(rec));
    try {
      await t.store.db.insertInto('webhook_deliveries').values(row('evt_last_try', 8)).execute();
      t.service.webhooks.kick();
      const [last] = await waitForList(m, (l) => l[0]?.status === 'failed');
      expect(last).toMatchObject({ webhook_id: 'evt_last_try', attempt_count: 9, last_status_code: 500, next_retry_at: null });
      expect(rx.received.find((r) => r.headers['x-webhook-id'] === 'evt_last_try')!.headers['x-webhook-attempt']).toBe('9');
    } finally {
      rx.respond = prev;
    }
    await m.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: false }));
    await t.store.db.insertInto('webhook_deliveries').values(row('evt_while_disabled', 0)).execute();
    t.service.webhooks.kick();
    const [d] = await waitForList(m, (l) => l[0]?.status === 'cancelled');
    expect(d).toMatchObject({ webhook_id: 'evt_while_disabled', last_error: 'webhook disabled' });
    expect(rx.received.some((r) => r.headers['x-webhook-id'] === 'evt_while_disabled')).toBe(false);
    expect((await m.call('GET', '/v1/account/usage?days=7')).body.usage.total_credits).toBe(0);
  });

  it('stop() lets a delivery in flight finish and be recorded', async () => {
    const own = await startTestService({ networks, plans, webhooks: { allow_private_urls: true } });
    const slow = await startReceiver();
    slow.respond = () => new Promise((resolve) => setTimeout(() => resolve(200), 400));
    try {
      const m = await own.merchant({ plan: 'pro' });
      await m.call('PUT', '/v1/address-watch/webhook', json({ url: slow.url, enabled: true }));
      const id = (await m.call('POST', '/v1/address-watch/webhook/test', json({ type: 'payment', network: 'eth' }))).body.webhook_id;
      await slow.waitFor((all) => all.length === 1);
      await own.service.webhooks.stop();
      const row = await own.store.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 200, lease_owner: null });
    } finally {
      await Promise.all([own.stop(), slow.close()]);
    }
  });

  it('one slow receiver does not hold up other accounts', async () => {
    const slow = await startReceiver();
    slow.respond = () => new Promise((resolve) => setTimeout(() => resolve(200), 900));
    try {
      const a = await t.merchant({ plan: 'pro' });
      await a.call('PUT', '/v1/address-watch/webhook', json({ url: slow.url, enabled: true }));
      for (let i = 0; i < 12; i++) await a.call('POST', '/v1/address-watch/webhook/test', json({ type: 'payment', network: 'eth' }));
      const { m: b } = await merchantWithWebhook();
      const t0 = Date.now();
      const id = (await b.call('POST', '/v1/address-watch/webhook/test', json({ type: 'payment', network: 'eth' }))).body.webhook_id;
      await rx.waitFor(forWebhook(id), 5000);
      expect(Date.now() - t0).toBeLessThan(700);
      await slow.waitFor((all) => all.length === 12, 10_000);
    } finally {
      await slow.close();
    }
  });
});

describe('SSRF at delivery time and openapi.json', () => {
  it('a URL that turns private after the PUT (DNS change, direct store edit) is refused when delivering', async () => {
    const m = await strict.merchant({ plan: 'pro' });
    const deliveries = async () => (await m.call('GET', '/v1/address-watch/deliveries')).body.deliveries as any[];
    for (const url of [rx.url, rx.url.replace('127.0.0.1', 'localhost')]) {
      // As if the PUT had passed: write the row the PUT would have written.
      await strict.store.db.insertInto('watch_webhooks')
        .values({ account_id: m.userId, url, enabled: 1, filters: '{}', updated_at: new Date().toISOString() })
        .onConflict((oc) => oc.column('account_id').doUpdateSet({ url })).execute();
      const before = rx.received.length;
      const id = (await m.call('POST', '/v1/address-watch/webhook/test', json({ type: 'payment', network: 'eth' }))).body.webhook_id;
      const deadline = Date.now() + 5000;
      let d: any;
      while (!(d = (await deliveries()).find((x) => x.webhook_id === id && x.attempts.length === 1))) {
        if (Date.now() > deadline) throw new Error('no attempt recorded');
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(d.attempts[0].status_code).toBeNull();
      expect(d.attempts[0].error, url).toMatch(/refused: .*loopback, private or link-local/);
      expect(rx.received.length).toBe(before);
    }
  });

  it('openapi.json describes the Address Watch routes', async () => {
    const { rawCall } = await import('./helpers/service.js');
    const doc = (await rawCall(t.baseUrl, 'GET', '/v1/openapi.json')).body;
    expect(Object.keys(doc.paths).filter((p: string) => p.startsWith('/v1/address-watch'))).toEqual([
      '/v1/address-watch/account', '/v1/address-watch/addresses', '/v1/address-watch/events', '/v1/address-watch/webhook',
      '/v1/address-watch/webhook/test', '/v1/address-watch/deliveries', '/v1/address-watch/deliveries/{delivery_id}/redeliver',
    ]);
    expect(Object.keys(doc.paths['/v1/address-watch/addresses'])).toEqual(['get', 'post', 'delete']);
  });
});

async function waitForList(m: Merchant, predicate: (d: any[]) => boolean, ms = 10_000): Promise<any[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const d = (await m.call('GET', '/v1/address-watch/deliveries')).body.deliveries as any[];
    if (predicate(d)) return d;
    if (Date.now() > deadline) throw new Error(`deliveries not as expected: ${JSON.stringify(d).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

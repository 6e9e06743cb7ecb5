import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAccount, webhookSecretOf } from '../src/store/index.js';
import { startWebhookReceiver, type ForwardResult, type ReceivedWebhook } from '../src/webhooks/index.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestService, type TestService } from './helpers/service.js';

const vectors = JSON.parse(readFileSync(new URL('./fixtures/webhook-signatures.json', import.meta.url), 'utf8')) as {
  cases: Array<{ name: string; secret: string; timestamp: number; body: string; signature: string }>;
};

let t: TestService;
let app: Receiver;
beforeAll(async () => {
  [t, app] = await Promise.all([
    startTestService({ networks: [{ slug: 'eth', name: 'Ethereum', environments: [{ slug: 'mainnet', upstreams: ['http://127.0.0.1:1'] }] }], webhooks: { allow_private_urls: true } }),
    startReceiver(),
  ]);
});
afterAll(async () => { await Promise.all([t?.stop(), app?.close()]); });

describe('webhook listen core', () => {
  it('verifies, hands over and forwards real deliveries from the service', async () => {
    const m = await t.merchant({ plan: 'pro' });
    const secret = webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!);
    const events: ReceivedWebhook[] = [];
    const forwarded: ForwardResult[] = [];
    const listen = await startWebhookReceiver({ secret, forwardTo: app.url, onEvent: (e) => events.push(e), onForwarded: (f) => forwarded.push(f) });
    try {
      await m.call('PUT', '/v1/address-watch/webhook', JSON.stringify({ url: listen.url, enabled: true }));
      const id = (await m.call('POST', '/v1/address-watch/webhook/test', JSON.stringify({ type: 'block', network: 'eth' }))).body.webhook_id;
      await app.waitFor((all) => all.length === 1);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ webhookId: id, attempt: 1, event: { type: 'block', network: 'eth', test: true } });
      expect(forwarded).toEqual([expect.objectContaining({ webhookId: id, status: 200 })]);
      // Forwarded unchanged: the app behind it can verify the same signature.
      expect(app.received[0]!.body).toBe(events[0]!.raw);
      expect(app.received[0]!.headers['x-signature']).toBeDefined();
      expect(app.received[0]!.headers['x-webhook-id']).toBe(id);
    } finally {
      await listen.close();
    }
  });

  it('rejects a wrong signature with 401 and accepts the shared vectors', async () => {
    const rejected: string[] = [];
    const events: ReceivedWebhook[] = [];
    const v = vectors.cases[0]!;
    const listen = await startWebhookReceiver({ secret: v.secret, toleranceSeconds: 0, onEvent: (e) => events.push(e), onRejected: (r) => rejected.push(r) });
    try {
      for (const c of vectors.cases.filter((x) => x.secret === v.secret)) {
        const ok = await request(listen.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-timestamp': String(c.timestamp), 'x-signature': c.signature }, body: c.body });
        expect(ok.statusCode, c.name).toBe(200);
        await ok.body.dump();
      }
      const bad = await request(listen.url, { method: 'POST', headers: { 'x-timestamp': String(v.timestamp), 'x-signature': v.signature.replace(/^./, '0') }, body: v.body });
      expect(bad.statusCode).toBe(401);
      expect(await bad.body.json()).toEqual({ ok: false, error: 'signature mismatch' });
      expect(rejected).toEqual(['signature mismatch']);
      expect(events.map((e) => e.event.type)).toEqual(['payment', 'block']);
    } finally {
      await listen.close();
    }
  });
});

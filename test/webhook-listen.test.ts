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
      // The app has the request; the listener records the forward when the app's answer is back.
      for (const end = Date.now() + 10_000; forwarded.length === 0;) {
        expect(Date.now(), 'the forward to be recorded').toBeLessThan(end);
        await new Promise((r) => setTimeout(r, 10));
      }
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

describe('webhook listen forwarding', () => {
  it('a forward target that is down (restarting) is retried with backoff until it is back; none lost', async () => {
    const { createHmac } = await import('node:crypto');
    const { createServer } = await import('node:http');
    // A port nothing listens on yet: the app behind `--forward-to` is restarting.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));

    const forwarded: ForwardResult[] = [];
    const secret = 'whsec_forward_retry';
    const listen = await startWebhookReceiver({
      secret, forwardTo: `http://127.0.0.1:${port}/hooks`, forwardRetryMs: [200, 200, 200, 200, 200, 200, 200, 200, 10_000],
      onEvent: () => {}, onForwarded: (f) => forwarded.push(f),
    });
    const received: string[] = [];
    const appServer = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => { body += c.toString(); });
      req.on('end', () => { received.push(body); res.writeHead(204).end(); });
    });
    try {
      const body = JSON.stringify({ id: '9', type: 'block', network: 'eth', block_height: 1, block_hash: '0x01', created_at: new Date().toISOString() });
      const ts = String(Math.floor(Date.now() / 1000));
      const res = await request(listen.url, { method: 'POST', body, headers: { 'x-timestamp': ts, 'x-webhook-id': 'evt_9', 'x-signature': createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex') } });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
      const until = async (ok: () => boolean) => { for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 25)); };
      await until(() => forwarded.length >= 1);
      expect(forwarded[0]).toMatchObject({ webhookId: 'evt_9', error: 'connection refused', retryInMs: 200 });

      await new Promise<void>((r) => appServer.listen(port, '127.0.0.1', r)); // the app is back
      await until(() => received.length === 1 && forwarded.at(-1)?.status !== undefined);
      expect(received).toEqual([body]);
      expect(forwarded.at(-1)).toMatchObject({ webhookId: 'evt_9', status: 204 });
      expect(forwarded.at(-1)!.retryInMs).toBeUndefined();
    } finally {
      await listen.close();
      appServer.close();
    }
  });
});

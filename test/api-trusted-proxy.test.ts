import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.js';

let t: TestService;
beforeAll(async () => { t = await startTestService({ api: { trusted_proxies: ['127.0.0.1'] } }); });
afterAll(() => t.stop());

it('behind a trusted proxy the client is the right-most untrusted X-Forwarded-For hop', async () => {
  const m = await t.merchant({ allowedIps: ['198.51.100.4'] });
  expect((await m.call('GET', '/v1/account')).status).toBe(403);
  expect((await m.call('GET', '/v1/account', '', { 'x-forwarded-for': '198.51.100.4' })).status).toBe(200);
  // A client cannot smuggle an allowed address in front of its own.
  expect((await m.call('GET', '/v1/account', '', { 'x-forwarded-for': '198.51.100.4, 192.0.2.1' })).status).toBe(403);
});

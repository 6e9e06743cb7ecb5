import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUsage, dayRange, utcDay } from '../src/store/index.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

let t: TestService;
let m: Merchant;
let e1: number;
let e2: number;
const today = utcDay(Date.now());
const daysAgo = (n: number) => utcDay(Date.now() - n * 86_400_000);

beforeAll(async () => {
  t = await startTestService();
  m = await t.merchant({ plan: 'pro' });
  e1 = (await m.call('POST', '/v1/endpoints', '{"name":"a","network_environment_id":1}')).body.endpoint.id;
  e2 = (await m.call('POST', '/v1/endpoints', '{"name":"b","network_environment_id":2}')).body.endpoint.id;
  const other = await t.merchant({ plan: 'pro' });
  await addUsage(t.store, [
    { account_id: m.userId, endpoint_id: e1, day: today, method: 'eth_call', requests: 3, credits: 78 },
    { account_id: m.userId, endpoint_id: e1, day: today, method: 'eth_blockNumber', requests: 5, credits: 50 },
    { account_id: m.userId, endpoint_id: e2, day: daysAgo(2), method: 'eth_call', requests: 4, credits: 104 },
    { account_id: m.userId, endpoint_id: e2, day: daysAgo(20), method: 'eth_getLogs', requests: 1, credits: 75 },
    { account_id: m.userId, endpoint_id: e1, day: daysAgo(200), method: 'eth_call', requests: 1000, credits: 1000 },
    // Account-level charges (webhook deliveries) have no endpoint.
    { account_id: m.userId, endpoint_id: 0, day: today, method: 'webhook:payment', requests: 1, credits: 30 },
    { account_id: other.userId, endpoint_id: 999, day: today, method: 'eth_call', requests: 77, credits: 77 },
  ]);
  // A second flush of the same key adds to it.
  await addUsage(t.store, [{ account_id: m.userId, endpoint_id: e1, day: today, method: 'eth_call', requests: 1, credits: 26 }]);
});
afterAll(() => t.stop());

describe('usage routes', () => {
  it('defaults to 30 days, one zero-filled point per UTC day, oldest first', async () => {
    const { usage } = (await m.call('GET', '/v1/endpoints/usage')).body;
    expect(usage.days).toBe(30);
    expect(usage.series).toHaveLength(30);
    expect(usage.series.map((p: { date: string }) => p.date)).toEqual(dayRange(30, Date.now()));
    expect(usage.series[29]).toEqual({ date: today, requests: 9, credits: 154 });
    expect(usage.series[27]).toEqual({ date: daysAgo(2), requests: 4, credits: 104 });
    expect(usage.series[0]).toEqual({ date: daysAgo(29), requests: 0, credits: 0 });
    expect(usage.total_requests).toBe(14);
    expect(usage.total_credits).toBe(154 + 104 + 75);
  });

  it('orders methods by requests, highest first', async () => {
    const { usage } = (await m.call('GET', '/v1/endpoints/usage?days=30')).body;
    expect(usage.methods).toEqual([
      { method: 'eth_call', requests: 8, credits: 208 },
      { method: 'eth_blockNumber', requests: 5, credits: 50 },
      { method: 'eth_getLogs', requests: 1, credits: 75 },
    ]);
  });

  it('7 days leaves out older usage; 90 days has 90 points', async () => {
    const week = (await m.call('GET', '/v1/endpoints/usage?days=7')).body.usage;
    expect(week.series).toHaveLength(7);
    expect(week.total_requests).toBe(13);
    const quarter = (await m.call('GET', '/v1/endpoints/usage?days=90')).body.usage;
    expect(quarter.series).toHaveLength(90);
    expect(quarter.total_requests).toBe(14);
  });

  it.each(['1', '31', 'abc', '', '7.0'])('days=%s is a 400 naming days', async (days) => {
    const r = await m.call('GET', `/v1/endpoints/usage?days=${days}`);
    expect(r).toMatchObject({ status: 400, body: { ok: false, error: 'days: must be 7, 30 or 90' } });
  });

  it('per endpoint, by numeric id', async () => {
    const { usage } = (await m.call('GET', `/v1/endpoints/${e2}/usage?days=7`)).body;
    expect(usage.total_requests).toBe(4);
    expect(usage.methods).toEqual([{ method: 'eth_call', requests: 4, credits: 104 }]);
    expect((await m.call('GET', '/v1/endpoints/999999/usage')).status).toBe(404);
  });

  it('account usage adds webhook credits; GET /v1/account sums the month', async () => {
    const { usage } = (await m.call('GET', '/v1/account/usage?days=7')).body;
    expect(usage.total_credits).toBe(154 + 104 + 30);
    expect(usage.methods.map((x: { method: string }) => x.method)).toContain('webhook:payment');

    const account = (await m.call('GET', '/v1/account')).body;
    expect(account.plan).toEqual({ id: 3, slug: 'pro', name: 'Pro', included_credits: 100_000_000, rps_limit: 100, endpoints_limit: 25, webhook_address_slots: 10_000 });
    const period = today.slice(0, 7);
    const expected = [
      [today, 10, 184], [daysAgo(2), 4, 104], [daysAgo(20), 1, 75],
    ].filter(([d]) => String(d).startsWith(period));
    const requests = expected.reduce((s, [, r]) => s + Number(r), 0);
    const credits = expected.reduce((s, [, , c]) => s + Number(c), 0);
    expect(account.usage).toEqual({
      period, requests, credits_used: credits, credits_included: 100_000_000, credits_remaining: 100_000_000 - credits,
    });
  });
});

import { describe, expect, it } from 'vitest';
import { StepResponse, stepEndpoint, stepRequest, stepWorld, upstreamAnswer } from '../../../test/helpers/gateway-steps.js';
import { restCall } from './rest.js';

const IP = '203.0.113.9';
const stellar = () => stepEndpoint({ family: 'stellar' });

describe('restCall: a call to a REST network (Horizon, the Tron HTTP API)', () => {
  it('forwards one normalised form of the path and query, and bills it by route once the upstream answered 2xx', async () => {
    const ep = stellar();
    const { cx, sent, metered } = stepWorld({ upstream: () => upstreamAnswer(200, '{"sequence":5}') });
    const r = new StepResponse();
    await restCall(cx, stepRequest({ method: 'GET', url: '/x' }), r.res, ep, '//ledgers//5?join=transactions', IP);
    await r.done;
    expect([r.status, r.text]).toEqual([200, '{"sequence":5}']);
    expect(sent.map((s) => [s.req.method, s.req.path, s.req.body])).toEqual([['GET', '/ledgers/5?join=transactions', undefined]]);
    expect(metered).toEqual([{ endpointId: ep.id, accountId: ep.accountId, method: expect.stringContaining('/ledgers/'), credits: 20 }]);
  });

  it('an upstream\'s 4xx is passed on and not billed', async () => {
    const { cx, metered } = stepWorld({ upstream: () => upstreamAnswer(404, '{"status":404}') });
    const r = new StepResponse();
    await restCall(cx, stepRequest({ method: 'GET' }), r.res, stellar(), '/ledgers/999999999', IP);
    await r.done;
    expect(r.status).toBe(404);
    expect(metered).toEqual([]);
  });

  it('a path that escapes the root is refused 400 before anything is sent', async () => {
    const { cx, sent } = stepWorld();
    const r = new StepResponse();
    await restCall(cx, stepRequest({ method: 'GET' }), r.res, stellar(), '/../admin', IP);
    await r.done;
    expect([r.status, r.json.error.message]).toEqual([400, 'invalid path']);
    expect(sent).toEqual([]);
  });

  it('a POST\'s body is read within the caps and sent with its content type', async () => {
    const { cx, sent } = stepWorld();
    const r = new StepResponse();
    await restCall(cx, stepRequest({ method: 'POST', body: 'tx=AAAA', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), r.res, stellar(), '/transactions', IP);
    await r.done;
    expect(sent.map((s) => [s.req.method, s.req.body?.toString(), s.req.contentType])).toEqual([['POST', 'tx=AAAA', 'application/x-www-form-urlencoded']]);
  });

  it('over the RPS window: 429, nothing sent', async () => {
    const { cx, sent } = stepWorld({ rps: () => 0 });
    const r = new StepResponse();
    await restCall(cx, stepRequest({ method: 'GET' }), r.res, stellar(), '/ledgers', IP);
    await r.done;
    expect([r.status, r.json.error.code]).toEqual([429, -32005]);
    expect(sent).toEqual([]);
  });
});

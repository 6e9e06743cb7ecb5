import { describe, expect, it } from 'vitest';
import { StepResponse, stepEndpoint, stepWorld, upstreamAnswer } from '../../../test/helpers/gateway-steps.js';
import { UpstreamError } from '../upstreams/index.js';
import { forward } from './forward.js';

const req = { method: 'POST', path: '', body: Buffer.from('{}'), contentType: 'application/json' };

describe('forward: one request to the endpoint\'s upstreams', () => {
  it('returns the upstream\'s answer and writes nothing itself; hints go along', async () => {
    const { cx, sent } = stepWorld({ upstream: () => upstreamAnswer(200, '{"result":2}') });
    const r = new StepResponse();
    const got = await forward(cx, r.res, stepEndpoint(), req, { needsHead: true });
    expect(got?.status).toBe(200);
    expect(r.headersSent).toBe(false);
    expect(sent).toEqual([{ req, hints: { needsHead: true } }]);
  });

  it('every upstream failed: answers 502 itself, or hands the failure to `failed` (a batch answers per element)', async () => {
    const { cx } = stepWorld({ upstream: () => { throw new UpstreamError(false, new Error('down')); } });
    const r = new StepResponse();
    expect(await forward(cx, r.res, stepEndpoint(), req)).toBeUndefined();
    await r.done;
    expect(r.status).toBe(502);

    const quiet = new StepResponse();
    const failures: UpstreamError[] = [];
    expect(await forward(cx, quiet.res, stepEndpoint(), req, undefined, (e) => failures.push(e))).toBeUndefined();
    expect(failures.map((e) => e.code)).toEqual(['E_UPSTREAM_FAILED']);
    expect(quiet.headersSent).toBe(false);
  });

  it('no upstream serves the method: -32601 with the call\'s id', async () => {
    const { cx } = stepWorld({ upstream: () => { throw new UpstreamError('method', new Error('none')); } });
    const r = new StepResponse();
    await forward(cx, r.res, stepEndpoint(), req, undefined, undefined, 9);
    await r.done;
    expect([r.status, r.json.id, r.json.error.code]).toEqual([200, 9, -32601]);
  });

  it('a fault of ours is not an upstream failure: it is thrown on', async () => {
    const { cx } = stepWorld({ upstream: () => { throw new TypeError('bug'); } });
    await expect(forward(cx, new StepResponse().res, stepEndpoint(), req)).rejects.toThrow(TypeError);
  });
});

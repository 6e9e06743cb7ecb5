import { describe, expect, it } from 'vitest';
import { StepResponse, upstreamAnswer } from '../../../test/helpers/gateway-steps.js';
import { UpstreamError } from '../upstreams/index.js';
import { send, sendAnswer, sendBatchUpstreamError, sendJson, sendUpstreamError } from './respond.js';

const out = () => new StepResponse();

describe('answers the gateway writes itself', () => {
  it('a fixed error body: status, JSON, CORS, exact length, id null', async () => {
    const r = out();
    send(r.res, 429, 'rps');
    await r.done;
    expect(r.status).toBe(429);
    expect(r.headers).toMatchObject({ 'content-type': 'application/json', 'access-control-allow-origin': '*', 'content-length': Buffer.byteLength(r.text) });
    expect(r.json).toEqual({ jsonrpc: '2.0', error: { code: -32005, message: 'rps limit exceeded' }, id: null });
  });

  it('every upstream failed: 502 -32010, timed out: 504 -32011, both with id null', async () => {
    const failed = out();
    sendUpstreamError(failed.res, new UpstreamError(false, new Error('x')), 7);
    const timedOut = out();
    sendUpstreamError(timedOut.res, new UpstreamError(true, new Error('x')), 7);
    await Promise.all([failed.done, timedOut.done]);
    expect([failed.status, failed.json]).toEqual([502, { jsonrpc: '2.0', error: { code: -32010, message: 'upstream failed' }, id: null }]);
    expect([timedOut.status, timedOut.json]).toEqual([504, { jsonrpc: '2.0', error: { code: -32011, message: 'upstream timed out' }, id: null }]);
  });

  it('no upstream serves the method: 200 -32601 carrying the call\'s id, as a node answers', async () => {
    const r = out();
    sendUpstreamError(r.res, new UpstreamError('method', new Error('x')), 'abc');
    await r.done;
    expect([r.status, r.json]).toEqual([200, { jsonrpc: '2.0', error: { code: -32601, message: 'method not found' }, id: 'abc' }]);
  });

  it('a batch whose upstreams failed: one error per element with its id, then our own answers', async () => {
    const r = out();
    const ours = [{ jsonrpc: '2.0', error: { code: -32600, message: 'invalid request' }, id: null }];
    sendBatchUpstreamError(r.res, new UpstreamError(false, new Error('x')), [1, 'two'], ours);
    await r.done;
    expect(r.status).toBe(502);
    expect(r.json).toEqual([
      { jsonrpc: '2.0', error: { code: -32010, message: 'upstream failed' }, id: 1 },
      { jsonrpc: '2.0', error: { code: -32010, message: 'upstream failed' }, id: 'two' },
      ...ours,
    ]);
  });

  it('JSON of any value, with its byte length (not its string length)', async () => {
    const r = out();
    sendJson(r.res, 200, { ok: 'é' });
    await r.done;
    expect(r.headers['content-length']).toBe(Buffer.byteLength('{"ok":"é"}'));
    expect(r.json).toEqual({ ok: 'é' });
  });

  it('an answer from the cache goes out as the upstream\'s would, its content type kept', async () => {
    const r = out();
    sendAnswer(r.res, { status: 200, contentType: 'application/json; charset=utf-8', body: Buffer.from('{"result":1}') });
    await r.done;
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.text).toBe('{"result":1}');
    expect(upstreamAnswer(200, 'x').status).toBe(200);
  });
});

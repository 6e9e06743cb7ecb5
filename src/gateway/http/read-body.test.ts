import { describe, expect, it } from 'vitest';
import { StepResponse, stepRequest, stepWorld } from '../../../test/helpers/gateway-steps.js';
import { readCapped } from './read-body.js';

describe('readCapped: the body within the size, time and in-flight caps', () => {
  it('reads a body whole, declared or chunked', async () => {
    const { cx } = stepWorld();
    expect((await readCapped(cx, stepRequest({ body: '{"a":1}' }), new StepResponse().res, '203.0.113.9'))?.toString()).toBe('{"a":1}');
    expect((await readCapped(cx, stepRequest({ body: 'xyz', chunked: true }), new StepResponse().res, '203.0.113.9'))?.toString()).toBe('xyz');
  });

  it('over max_body_bytes: 413, declared or found while reading', async () => {
    const { cx } = stepWorld({ gateway: { max_body_bytes: 1024 } });
    for (const chunked of [false, true]) {
      const r = new StepResponse();
      expect(await readCapped(cx, stepRequest({ body: 'x'.repeat(1025), chunked }), r.res, '203.0.113.9')).toBeUndefined();
      await r.done;
      expect([r.status, r.json.error.message]).toEqual([413, 'request body too large']);
    }
  });

  it('more bytes in flight from one client than its budget: 429', async () => {
    const { cx } = stepWorld({ gateway: { max_body_bytes: 1024 * 1024, max_inflight_bytes_per_ip: 1024 * 1024, max_inflight_bytes: 4 * 1024 * 1024 } });
    const held = new StepResponse();
    // A stalled body holds its declared bytes until its response closes.
    void readCapped(cx, stepRequest({ body: 'x', headers: { 'content-length': String(1024 * 1024) }, stall: true }), held.res, '203.0.113.9');
    const r = new StepResponse();
    expect(await readCapped(cx, stepRequest({ body: 'y'.repeat(2048) }), r.res, '203.0.113.9')).toBeUndefined();
    await r.done;
    expect([r.status, r.json.error.code]).toEqual([429, -32005]);
    // Another client is not held back by it.
    expect((await readCapped(cx, stepRequest({ body: 'z' }), new StepResponse().res, '203.0.113.10'))?.toString()).toBe('z');
    held.destroy();
  });

  it('a body slower than body_timeout_ms: 408, and the connection is closed once answered', async () => {
    const { cx } = stepWorld({ gateway: { body_timeout_ms: 100 } });
    const req = stepRequest({ body: '{"jsonrpc"', stall: true });
    const r = new StepResponse();
    expect(await readCapped(cx, req, r.res, '203.0.113.9')).toBeUndefined();
    await r.done;
    expect([r.status, r.json.error.message]).toEqual([408, 'request body timed out']);
    expect(req.destroyed).toBe(true);
  });
});

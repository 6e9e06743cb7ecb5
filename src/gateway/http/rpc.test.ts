import { describe, expect, it } from 'vitest';
import { StepResponse, stepEndpoint, stepRequest, stepWorld, upstreamAnswer } from '../../../test/helpers/gateway-steps.js';
import { UpstreamError } from '../upstreams/index.js';
import { rpc } from './rpc.js';

const IP = '203.0.113.9';
const call = (method: string, id: unknown = 1) => ({ jsonrpc: '2.0', id, method, params: [] });

async function run(world: ReturnType<typeof stepWorld>, body: unknown, init: { method?: string; rest?: string } = {}) {
  const r = new StepResponse();
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  await rpc(world.cx, stepRequest({ method: init.method ?? 'POST', body: text }), r.res, stepEndpoint(), init.rest ?? '', IP);
  await r.done;
  return r;
}

describe('rpc: a JSON-RPC request', () => {
  it('only POST to the endpoint\'s root: 405 otherwise', async () => {
    for (const [method, rest] of [['GET', ''], ['POST', '/extra']]) {
      const r = await run(stepWorld(), call('eth_chainId'), { method, rest });
      expect([r.status, r.json.error.message]).toEqual([405, 'use POST with a JSON-RPC body']);
    }
    expect((await run(stepWorld(), call('eth_chainId'), { rest: '/?x=1' })).status).toBe(200);
  });

  it('a single call is forwarded as sent and billed by its method\'s credits', async () => {
    const w = stepWorld({ upstream: () => upstreamAnswer(200, '{"jsonrpc":"2.0","id":1,"result":"0x5"}') });
    const r = await run(w, call('eth_getBalance'));
    expect([r.status, r.json.result]).toEqual([200, '0x5']);
    expect(w.sent[0]!.req.body?.toString()).toBe(JSON.stringify(call('eth_getBalance')));
    expect(w.metered).toEqual([{ endpointId: 7, accountId: 3, method: 'eth_getBalance', credits: 5 }]);
  });

  it('malformed: 400 parse error (-32700), too deep, invalid with the call\'s id', async () => {
    expect((await run(stepWorld(), '{"jsonrpc":')).json.error.code).toBe(-32700);
    const deep = await run(stepWorld(), `${'['.repeat(200)}${']'.repeat(200)}`);
    expect([deep.status, deep.json.error.message]).toEqual([400, expect.stringContaining('nested deeper')]);
    const invalid = await run(stepWorld(), { jsonrpc: '2.0', id: 4 });
    expect([invalid.status, invalid.json]).toEqual([400, { jsonrpc: '2.0', error: { code: -32600, message: 'invalid request' }, id: 4 }]);
  });

  it('over the RPS window: 429 with id null, nothing sent, nothing billed', async () => {
    const w = stepWorld({ rps: () => 0 });
    const r = await run(w, call('eth_chainId', 9));
    expect([r.status, r.json]).toEqual([429, { jsonrpc: '2.0', error: { code: -32005, message: 'rps limit exceeded' }, id: null }]);
    expect([w.sent, w.metered]).toEqual([[], []]);
  });

  it('an upstream\'s error answer is passed on; its failure is 502 and not billed', async () => {
    const w = stepWorld({ upstream: () => { throw new UpstreamError(false, new Error('down')); } });
    const r = await run(w, call('eth_chainId'));
    expect([r.status, r.json.error.code, w.metered]).toEqual([502, -32010, []]);
  });

  it('a batch over max_batch is refused whole', async () => {
    const w = stepWorld({ gateway: { max_batch: 2 } });
    const r = await run(w, [call('a', 1), call('b', 2), call('c', 3)]);
    expect([r.status, r.json.error.message, w.sent]).toEqual([400, 'batch too large', []]);
  });

  it('a batch past the RPS window: the admitted elements forwarded, the rest answered in place with their ids', async () => {
    const w = stepWorld({
      rps: () => 2,
      upstream: (req) => upstreamAnswer(200, JSON.stringify((JSON.parse(req.body!.toString()) as Array<{ id: unknown }>).map((c) => ({ jsonrpc: '2.0', id: c.id, result: 'ok' })))),
    });
    const r = await run(w, [call('eth_chainId', 'a'), call('eth_chainId', 'b'), call('eth_chainId', 'c')]);
    expect(r.status).toBe(200);
    expect(JSON.parse(w.sent[0]!.req.body!.toString()).map((c: { id: unknown }) => c.id)).toEqual(['a', 'b']);
    expect(r.json).toEqual([
      { jsonrpc: '2.0', id: 'a', result: 'ok' }, { jsonrpc: '2.0', id: 'b', result: 'ok' },
      { jsonrpc: '2.0', error: { code: -32005, message: 'rps limit exceeded' }, id: 'c' },
    ]);
    expect(w.metered.map((m) => m.credits)).toEqual([20, 20]);
  });

  it('a batch whose upstreams all failed: one error per element with its id', async () => {
    const w = stepWorld({ upstream: () => { throw new UpstreamError(true, new Error('slow')); } });
    const r = await run(w, [call('eth_chainId', 1), call('eth_chainId', 2)]);
    expect(r.status).toBe(504);
    expect(r.json.map((e: { id: unknown; error: { code: number } }) => [e.id, e.error.code])).toEqual([[1, -32011], [2, -32011]]);
  });

  it('a batch of malformed elements only: 400 with their errors, nothing sent', async () => {
    const w = stepWorld();
    const r = await run(w, [{ id: 1 }, 5]);
    expect([r.status, r.json.length, w.sent]).toEqual([400, 2, []]);
  });
});

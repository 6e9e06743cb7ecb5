import { describe, expect, it } from 'vitest';
import { StepResponse, stepEndpoint, stepRequest, stepWorld, type StepRequestInit } from '../../../test/helpers/gateway-steps.js';
import { handle } from './handle.js';

async function run(world: ReturnType<typeof stepWorld>, init: StepRequestInit) {
  const r = new StepResponse();
  await handle(world.cx, stepRequest(init), r.res);
  await r.done;
  return r;
}

describe('handle: one gateway request, cheapest checks first', () => {
  const evm = stepEndpoint();
  const horizon = stepEndpoint({ family: 'stellar' });
  const paused = stepEndpoint({ paused: true });
  const fenced = stepEndpoint({ allowedIps: ['198.51.100.1'] });
  const world = () => stepWorld({ endpoints: [evm, horizon, paused, fenced] });
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' });

  it('a CORS preflight is 204 with the allowed methods and headers', async () => {
    const r = await run(world(), { method: 'OPTIONS', url: `/${evm.uuid}` });
    expect(r.status).toBe(204);
    expect(r.headers).toMatchObject({ 'access-control-allow-origin': '*', 'access-control-allow-methods': 'GET, POST, OPTIONS' });
  });

  it('/health says whether the store answers (503 while it does not); /ready only that the listener takes calls', async () => {
    expect((await run(stepWorld({ deps: { storeHealth: async () => true } }), { method: 'GET', url: '/health' })).status).toBe(200);
    const down = await run(stepWorld({ deps: { storeHealth: async () => false } }), { method: 'GET', url: '/health' });
    expect([down.status, down.json]).toEqual([503, { ok: false, error: 'Service unavailable' }]);
    expect((await run(stepWorld({ deps: { storeHealth: async () => false } }), { method: 'GET', url: '/ready' })).status).toBe(200);
  });

  it('unknown endpoint: 404 echoing the id; nothing forwarded', async () => {
    const w = world();
    const r = await run(w, { url: '/11111111-1111-4111-8111-111111111111', body });
    expect([r.status, r.json.error.code, r.json.id, w.sent]).toEqual([404, -32001, 1, []]);
  });

  it('two Host headers: 400 before any lookup', async () => {
    const r = await run(world(), { url: `/${evm.uuid}`, body, headers: { host: 'a' } });
    expect(r.status).toBe(200);
    const req = stepRequest({ url: `/${evm.uuid}`, body });
    (req as unknown as { rawHeaders: string[] }).rawHeaders = ['Host', 'a', 'host', 'b'];
    const dup = new StepResponse();
    await handle(world().cx, req, dup.res);
    await dup.done;
    expect([dup.status, dup.json.error.message]).toEqual([400, 'more than one Host header']);
  });

  it('paused: 403 -32002; an address off the allowlist: 403 -32012; the allowlist reads the client address', async () => {
    expect((await run(world(), { url: `/${paused.uuid}`, body })).json.error.code).toBe(-32002);
    expect((await run(world(), { url: `/${fenced.uuid}`, body })).json.error.code).toBe(-32012);
    expect((await run(world(), { url: `/${fenced.uuid}`, body, ip: '198.51.100.1' })).status).toBe(200);
  });

  it('dispatches by the family\'s transport: JSON-RPC to the root, REST to any path', async () => {
    const w = world();
    expect((await run(w, { url: `/${evm.uuid}`, body })).status).toBe(200);
    expect((await run(w, { method: 'GET', url: `/${horizon.uuid}/ledgers/5` })).status).toBe(200);
    expect(w.sent.map((s) => [s.req.method, s.req.path])).toEqual([['POST', ''], ['GET', '/ledgers/5']]);
    // A JSON-RPC network takes no GET.
    expect((await run(w, { method: 'GET', url: `/${evm.uuid}/ledgers/5` })).status).toBe(405);
  });
});

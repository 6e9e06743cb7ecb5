import { describe, expect, it } from 'vitest';
import { StepResponse, stepEndpoint, stepRequest, stepWorld } from '../../../test/helpers/gateway-steps.js';
import { endpointOf, hostMatches, refuse } from './route.js';

describe('endpointOf: the endpoint a request is for', () => {
  const ep = stepEndpoint();
  const { cx } = stepWorld({ endpoints: [ep, stepEndpoint({ uuid: '00000000-0000-4000-8000-000000000000', env: undefined })] });
  const of = (url: string, host?: string) => endpointOf(cx, stepRequest({ url, headers: host ? { host } : {} }), url);

  it('/{uuid} alone, or followed by / or ?', () => {
    for (const url of [`/${ep.uuid}`, `/${ep.uuid}/`, `/${ep.uuid}?a=1`, `/${ep.uuid}/ext/bc/C/rpc`]) expect(of(url), url).toBe(ep);
  });

  it('anything else is not found: a longer id, an unknown id, an endpoint whose environment left the config', () => {
    expect(of(`/${ep.uuid}x`)).toBeUndefined();
    expect(of(`/${ep.uuid.slice(0, -1)}`)).toBeUndefined();
    expect(of('/11111111-1111-4111-8111-111111111111')).toBeUndefined();
    expect(of('/00000000-0000-4000-8000-000000000000')).toBeUndefined();
    expect(of('/')).toBeUndefined();
  });

  it('a Host naming another endpoint\'s network is not found; IPs and other names route by UUID alone', () => {
    expect(of(`/${ep.uuid}`, `${ep.hostLabel}.example.com`)).toBe(ep);
    expect(of(`/${ep.uuid}`, 'rpc-other-main.example.com')).toBeUndefined();
    expect(of(`/${ep.uuid}`, 'api.example.com')).toBe(ep);
    expect(of(`/${ep.uuid}`, '127.0.0.1:8545')).toBe(ep);
  });
});

describe('hostMatches', () => {
  const ep = stepEndpoint();
  it('compares the first label case-insensitively, and only of the {prefix}- form', () => {
    expect(hostMatches('rpc-', `${ep.hostLabel.toUpperCase()}.example.com`, ep)).toBe(true);
    expect(hostMatches('rpc-', 'rpc-eth-test.example.com', ep)).toBe(false);
    expect(hostMatches('rpc-', 'localhost', ep)).toBe(true);
    expect(hostMatches('rpc-', undefined, ep)).toBe(true);
    expect(hostMatches('node-', 'rpc-eth-test.example.com', ep)).toBe(true);
  });
});

describe('refuse: a refusal that echoes the request\'s ids', () => {
  const { cx } = stepWorld();
  it('a single call gets its own id back; a batch one error per element, each with its id', async () => {
    const one = new StepResponse();
    await refuse(cx, stepRequest({ body: '{"jsonrpc":"2.0","id":"a1","method":"eth_chainId"}' }), one.res, 403, 'paused');
    expect([one.status, one.json]).toEqual([403, { jsonrpc: '2.0', error: { code: -32002, message: 'endpoint paused' }, id: 'a1' }]);
    const batch = new StepResponse();
    await refuse(cx, stepRequest({ body: '[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]' }), batch.res, 404, 'notFound');
    expect(batch.json.map((e: { id: unknown }) => e.id)).toEqual([1, 2]);
  });

  it('a large declared body or a chunked one is not read: the fixed body, id null', async () => {
    for (const init of [{ body: '{"id":1}', headers: { 'content-length': String(65 * 1024) } }, { body: '{"id":1}', chunked: true }]) {
      const r = new StepResponse();
      await refuse(cx, stepRequest(init), r.res, 403, 'ipNotAllowed');
      await r.done;
      expect([r.status, r.json.id, r.json.error.code]).toEqual([403, null, -32012]);
    }
  });

  it('an unreadable body gets id null', async () => {
    const r = new StepResponse();
    await refuse(cx, stepRequest({ body: 'not json' }), r.res, 404, 'notFound');
    expect(r.json).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'endpoint not found' }, id: null });
  });
});

import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, type LogLevel } from '../src/log/index.js';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';
import { rawCall, startTestService, type TestService } from './helpers/service.js';

/** A text-format logger (what `serve` writes on a terminal) into a string. */
function textLog(level: LogLevel = 'info') {
  let text = '';
  const stream = new Writable({ write(chunk, _enc, cb) { text += chunk.toString(); cb(); } });
  return { logger: createLogger({ format: 'text', level, stream }), text: () => text };
}

const lines = (text: string, re: RegExp) => text.split('\n').filter((l) => re.test(l));

describe('serve\'s access lines in the text format', () => {
  let chain: FakeEvm;
  let quiet: TestService;
  let sampled: TestService;
  const quietLog = textLog();
  const sampledLog = textLog();
  const services = (sample: number, logger: ReturnType<typeof textLog>['logger']) => startTestService({
    networks: [{ slug: 'eth', name: 'Ethereum', environments: [{ slug: 'mainnet', upstreams: [chain.url] }] }],
    gateway: { access_log_sample: sample },
  }, { logger });
  beforeAll(async () => {
    chain = await startFakeEvmChain();
    [quiet, sampled] = await Promise.all([services(0, quietLog.logger), services(1, sampledLog.logger)]);
  });
  afterAll(async () => {
    await Promise.all([quiet?.stop(), sampled?.stop()]);
    await chain?.close();
  });

  it('one line per Public API call: method, route, status, time, key prefix, account', async () => {
    const m = await quiet.merchant();
    expect((await m.call('GET', '/v1/account')).status).toBe(200);
    expect((await m.call('GET', '/v1/nope')).status).toBe(404);
    const deadline = Date.now() + 5000;
    while (lines(quietLog.text(), /\(unmatched\)/).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const account = lines(quietLog.text(), /\/v1\/account/);
    expect(account).toEqual([expect.stringMatching(new RegExp(`INFO: api: GET /v1/account 200 [\\d.]+ ms key ${m.apiKey.slice(0, 8)} account ${m.userId}$`))]);
    expect(lines(quietLog.text(), /\(unmatched\)/)).toEqual([expect.stringMatching(/INFO: api: GET \(unmatched\) 404 [\d.]+ ms$/)]);
    // No field lines (req_id: ..., ip: ...) under them.
    expect(quietLog.text()).not.toMatch(/^\s+(req_id|ip|route):/m);
  });

  it('gateway calls: none by default; with gateway.access_log_sample 1, one line each', async () => {
    const call = async (t: TestService) => {
      const m = await t.merchant();
      const { endpoint } = (await m.call('POST', '/v1/endpoints', JSON.stringify({ name: 'logs', network_slug: 'eth', env_slug: 'mainnet' }), { 'content-type': 'application/json' })).body;
      const r = await rawCall(t.gatewayUrl, 'POST', `/${endpoint.uuid}`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' }), { 'content-type': 'application/json' });
      expect(r.status).toBe(200);
      return m;
    };
    await call(quiet);
    const m = await call(sampled);
    const deadline = Date.now() + 5000;
    while (lines(sampledLog.text(), /INFO: gateway: POST/).length === 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
    expect(lines(sampledLog.text(), /INFO: gateway: POST/)).toEqual([expect.stringMatching(new RegExp(`POST /\\{endpoint_uuid\\} 200 [\\d.]+ ms eth-mainnet account ${m.userId}$`))]);
    // The unsampled service's call came first and is written the same way, were it logged.
    expect(lines(quietLog.text(), /gateway: POST/)).toEqual([]);
  });

  it('at debug the fields follow; JSON keeps them on the one line', () => {
    const debug = textLog('debug');
    debug.logger.child({ component: 'api' }).info({ req_id: 'r1', method: 'GET', route: '/v1/account', status: 200, duration_ms: 3, key_prefix: 'abcd1234', account_id: 7, ip: '127.0.0.1' }, 'request');
    expect(debug.text()).toMatch(/INFO: api: request\n\s+req_id: "r1"[\s\S]*key_prefix: "abcd1234"[\s\S]*ip: "127.0.0.1"/);
    let json = '';
    const logger = createLogger({ format: 'json', stream: new Writable({ write(c, _e, cb) { json += c.toString(); cb(); } }) });
    logger.child({ component: 'api' }).info({ req_id: 'r1', method: 'GET', route: '/v1/account', status: 200, key_prefix: 'abcd1234' }, 'request');
    expect(JSON.parse(json)).toMatchObject({ component: 'api', msg: 'request', req_id: 'r1', key_prefix: 'abcd1234', status: 200 });
  });
});

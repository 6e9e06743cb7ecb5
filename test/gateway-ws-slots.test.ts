import { connect } from 'node:net';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

let t: TestService;
let m: Merchant;
beforeAll(async () => {
  t = await startTestService({
    networks: [{ slug: 'anvil', name: 'Anvil', family: 'evm', environments: [{ slug: 'local', upstreams: ['http://127.0.0.1:9'] }], credits: { default: 1, methods: {} } }],
    gateway: { ws: { max_sockets_per_endpoint: 2 } },
  });
  m = await t.merchant({ plan: 'pro' });
}, 60_000);
afterAll(async () => { await t?.stop(); });

function badUpgrade(port: number, uuid: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => {
      // Upgrade: websocket, but no Sec-WebSocket-Key: ws's handleUpgrade aborts (400) without calling back.
      s.write(`GET /${uuid} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    let got = '';
    s.on('data', (d) => { got += d.toString(); });
    s.on('close', () => resolve(got.split('\r\n')[0] ?? ''));
    s.on('error', () => resolve(got));
  });
}

it('a handshake ws aborts does not keep one of the endpoint\'s socket slots', async () => {
  const r = await m.call('POST', '/v1/endpoints', JSON.stringify({ name: 'leak', network_slug: 'anvil', env_slug: 'local' }));
  expect(r.status).toBe(200);
  const uuid = r.body.endpoint.uuid as string;
  const port = Number(new URL(t.gatewayUrl).port);
  for (let i = 0; i < 2; i++) expect(await badUpgrade(port, uuid)).toMatch(/^HTTP\/1.1 400/);
  const ws = new WebSocket(`${t.gatewayUrl.replace('http', 'ws')}/${uuid}`);
  const outcome = await new Promise<string>((resolve) => {
    ws.once('open', () => resolve('open'));
    ws.once('unexpected-response', (_req, res) => resolve(`HTTP ${res.statusCode}`));
    ws.once('error', (e) => resolve(`error ${e.message}`));
  });
  ws.terminate();
  expect(outcome).toBe('open');
}, 30_000);

import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { cli, tempConfigDir } from './helpers/cli.js';

describe('endpoints list at 80 columns', () => {
  let server: Server | undefined;
  afterEach(() => { server?.close(); });

  it('is readable: one line per endpoint, the URL cut, the name whole', async () => {
    const endpoint = (id: number, name: string) => ({
      id, uuid: '0cd2a3ae-bfbb-4e8c-9865-b0cec8d777bd', name, status: 'active', network_slug: 'polygon', env_slug: 'mainnet',
      allowed_ips: [], url: `http://rpc-polygon-mainnet.localhost:8545/0cd2a3ae-bfbb-4e8c-9865-b0cec8d777bd`,
    });
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, endpoints: [endpoint(1, 'main'), endpoint(22, 'payments-backend-eu-west')] }));
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const env = { PUBLIC_API_KEY: 'k', PUBLIC_API_SECRET: 's', PUBLIC_API_BASE: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, RPCCTL_CONFIG_DIR: tempConfigDir(), NO_COLOR: '1' };
    const r = await cli(['endpoints', 'list'], { env, tty: true, columns: 80 });
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(lines[2]).toMatch(/^22  payments-backend-eu-west  polygon-mainnet  active  any  http:\/\/rpc-polygon\S+…$/);
    const piped = await cli(['endpoints', 'list'], { env });
    expect(piped.stdout.split('\n')[1]).toBe(`22\tpayments-backend-eu-west\tpolygon-mainnet\tactive\tany\t${endpoint(22, '').url}`);
  });
});

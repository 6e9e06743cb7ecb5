import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import type { AddressInfo } from 'node:net';
import { createApiServer, route } from '../src/api/index.js';
import { okSchema } from '../src/api/schemas.js';
import { parseConfig } from '../src/config/index.js';
import { createAccount, createApiKey, Store } from '../src/store/index.js';
import { signedCall } from './helpers/service.js';

let store: Store;
let baseUrl: string;
let close: () => Promise<void>;
const logged: string[] = [];

beforeAll(async () => {
  const config = parseConfig({});
  store = await Store.open({ dataDir: mkdtempSync(join(tmpdir(), 'rpcctl-500-')), config, syncCatalog: 'always' });
  const boom = route({
    method: 'GET', path: '/v1/boom', operationId: 'boom', tag: 'Test', summary: 'fails', response: okSchema,
    async handler() { throw new Error('secret internal detail at /var/lib/x'); },
  });
  // With a body: by the time the handler fails the request stream is done and destroyed.
  const boomPost = route({
    method: 'POST', path: '/v1/boom', operationId: 'boomPost', tag: 'Test', summary: 'fails', body: z.object({ x: z.number() }), response: okSchema,
    async handler() { await new Promise((r) => setTimeout(r, 10)); throw new Error('late failure'); },
  });
  const { server } = createApiServer({ store, config, routes: [boom, boomPost], log: (l) => logged.push(l) });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); });
});
afterAll(async () => { await close(); await store.close(); });

it('an unexpected failure is a 500 envelope without internals, logged on the server', async () => {
  const account = await createAccount(store, { planId: 1 });
  const key = await createApiKey(store, { accountId: account.id });
  const r = await signedCall(baseUrl, key.api_key, key.secret, 'GET', '/v1/boom');
  expect(r).toMatchObject({ status: 500, body: { ok: false, error: 'Internal server error' } });
  expect(JSON.stringify(r.body)).not.toContain('secret internal');
  expect(logged.join('\n')).toContain('secret internal detail');
  expect(logged.join('\n')).not.toContain(key.secret);
});

it('a handler failing after the body was read still answers 500', async () => {
  const account = await createAccount(store, { planId: 1 });
  const key = await createApiKey(store, { accountId: account.id });
  const r = await signedCall(baseUrl, key.api_key, key.secret, 'POST', '/v1/boom', '{"x":1}');
  expect(r).toMatchObject({ status: 500, body: { ok: false, error: 'Internal server error' } });
});

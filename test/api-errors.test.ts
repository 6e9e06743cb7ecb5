import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { signatureHeaders } from '../src/client/signing.js';
import { rawCall, startTestService, type Merchant, type TestService } from './helpers/service.js';

let t: TestService;
let m: Merchant;
beforeAll(async () => {
  t = await startTestService({ api: { max_body_bytes: 2048 } });
  m = await t.merchant();
});
afterAll(() => t.stop());

describe('error envelope', () => {
  it('unknown route: 404 {ok:false,error:"Not found"}', async () => {
    for (const path of ['/v1', '/v1/nope', '/v1/endpoints/1/nope']) {
      expect(await rawCall(t.baseUrl, 'GET', path)).toMatchObject({ status: 404, body: { ok: false, error: 'Not found' } });
    }
    // Paths outside /v1 are the web cabinet's (decisions.md): its sign-in and its HTML 404.
    expect(await rawCall(t.baseUrl, 'GET', '/')).toMatchObject({ status: 303, headers: { location: '/login?next=%2F' } });
    const other = await rawCall(t.baseUrl, 'GET', '/api/v1/account');
    expect(other.status).toBe(404);
    expect(other.headers['content-type']).toContain('text/html');
  });

  it('a malformed %-escape in a path parameter is a 404, not a server error', async () => {
    expect(await m.call('GET', '/v1/endpoints/%E0%A4')).toMatchObject({ status: 404, body: { ok: false, error: 'Not found' } });
    expect(await m.call('GET', '/v1/endpoints/%zz/usage')).toMatchObject({ status: 404 });
  });

  it('wrong method on a known path: 405 with Allow', async () => {
    const r = await rawCall(t.baseUrl, 'DELETE', '/v1/account');
    expect(r).toMatchObject({ status: 405, body: { ok: false } });
    expect(r.headers.allow).toBe('GET, HEAD');
  });

  it('an over-large body: 413 in the envelope, signed or not', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(4096), network_environment_id: 1 });
    const r = await m.call('POST', '/v1/endpoints', big);
    expect(r).toMatchObject({ status: 413, body: { ok: false, error: 'Request body too large (limit 2048 bytes)' } });
    expect(await rawCall(t.baseUrl, 'POST', '/v1/endpoints', big)).toMatchObject({ status: 413 });
    // Without a Content-Length, the limit still applies while streaming (once the key is known).
    const chunkedBody = Buffer.alloc(5120, 97);
    const chunked = await request(`${t.baseUrl}/v1/endpoints`, {
      method: 'POST', headers: signatureHeaders({ apiKey: m.apiKey, secret: m.secret, method: 'POST', path: '/v1/endpoints', body: chunkedBody.toString() }),
      body: Readable.from((function* () { for (let i = 0; i < 10; i++) yield chunkedBody.subarray(i * 512, (i + 1) * 512); })()),
    });
    expect(chunked.statusCode).toBe(413);
    expect(await chunked.body.json()).toEqual({ ok: false, error: 'Request body too large (limit 2048 bytes)' });
  });

  it('a malformed request line gets a 400 envelope, and the server lives on', async () => {
    const url = new URL(t.baseUrl);
    const reply = await new Promise<string>((resolve) => {
      const s = connect(Number(url.port), url.hostname, () => s.write('GARBAGE\r\n\r\n'));
      let data = '';
      s.on('data', (d) => { data += d; });
      s.on('close', () => resolve(data));
    });
    expect(reply).toMatch(/^HTTP\/1.1 400/);
    expect(reply).toContain('{"ok":false,"error":"Bad request"}');
    expect((await m.call('GET', '/v1/account')).status).toBe(200);
  });
});

describe('openapi.json', () => {
  it('documents every route with the full Endpoint field set and the signature scheme', async () => {
    const doc = (await rawCall(t.baseUrl, 'GET', '/v1/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    const routes = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops as object).map((op) => `${op.toUpperCase()} ${p}`));
    expect(routes).toEqual(expect.arrayContaining([
      'GET /v1/account', 'GET /v1/account/usage', 'GET /v1/endpoints', 'POST /v1/endpoints', 'GET /v1/endpoints/available-networks',
      'GET /v1/endpoints/usage', 'GET /v1/endpoints/{id}', 'GET /v1/endpoints/{id}/usage', 'PATCH /v1/endpoints/{id}/status',
      'PATCH /v1/endpoints/{id}/allowed-ips', 'GET /v1/openapi.json',
    ]));
    const endpoint = doc.components.schemas.Endpoint;
    expect(Object.keys(endpoint.properties).sort()).toEqual(['allowed_ips', 'block_height', 'created_at', 'env_slug', 'id', 'name', 'network_environment_id',
      'network_id', 'network_name', 'network_slug', 'plan_id', 'rps_limit', 'status', 'url', 'uuid', 'version'].sort());
    expect(endpoint.required).toHaveLength(16);
    expect(doc.paths['/v1/endpoints'].get.responses['200'].content['application/json'].schema.properties.endpoints.items.$ref).toBe('#/components/schemas/Endpoint');
    const create = doc.paths['/v1/endpoints'].post.requestBody.content['application/json'].schema;
    expect(create.properties.name.maxLength).toBe(255);
    expect(create.properties.env_slug.maxLength).toBe(80);
    expect(create.properties.network_environment_id.minimum).toBe(1);
    const ips = doc.paths['/v1/endpoints/{id}/allowed-ips'].patch.requestBody.content['application/json'].schema;
    expect(ips.required).toEqual(['allowed_ips']);
    expect(ips.properties.allowed_ips.maxItems).toBe(50);
    const days = doc.paths['/v1/endpoints/usage'].get.parameters.find((p: { name: string }) => p.name === 'days');
    expect(days).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', enum: [7, 30, 90] } });
    expect(doc.components.securitySchemes).toHaveProperty('signature');
  });
});

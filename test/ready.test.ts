import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/serve/service.js';
import { freePort, privatePostgresUnavailable, startPrivatePostgres, type PrivatePostgres } from './helpers/private-servers.js';
import { testConfig } from './helpers/service.js';
import { itUnless } from './helpers/skips.js';

const ready = (base: string) => request(`${base}/ready`).then(async (r) => ({ status: r.statusCode, body: await r.body.json() as Record<string, unknown> }));
const accepts = (port: number) => new Promise<boolean>((resolve) => {
  const s = connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
  s.on('error', () => resolve(false));
});

/** `GET /ready` on the API listener: the one check a load balancer needs for both listeners. */
describe('GET /ready', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => {});
  }, 60_000);

  it('is 503 while the API listens and the gateway does not yet; 200 only once the gateway accepts connections', async () => {
    const [apiPort, gatewayPort] = [await freePort(), await freePort()];
    const dir = mkdtempSync(join(tmpdir(), 'rpcctl-ready-'));
    cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
    const configFile = join(dir, 'config.json');
    writeFileSync(configFile, JSON.stringify(testConfig({ api: { port: apiPort }, gateway: { port: gatewayPort } })));
    const starting = startService({ configFile, dataDir: dir, log: () => {}, env: { ...process.env, RPCCTL_DATABASE_URL: '', RPCCTL_REDIS_URL: '' } });
    let started: RunningService | undefined;
    void starting.then((s) => { started = s; }, () => {});
    cleanup.push(async () => (await starting).stop());
    // Asked all through the start: whenever it says ready, the gateway takes connections.
    const seen: Array<{ status: number; body: Record<string, unknown> }> = [];
    const base = `http://127.0.0.1:${apiPort}`;
    const deadline = Date.now() + 60_000;
    for (;;) {
      expect(Date.now()).toBeLessThan(deadline);
      // Whether the start had finished when the question was asked (not when it was answered).
      const startedBefore = started !== undefined;
      const r = await ready(base).catch(() => undefined);
      if (r) {
        seen.push(r);
        if (r.status === 200) {
          expect(await accepts(gatewayPort)).toBe(true);
          break;
        }
        expect(r).toEqual({ status: 503, body: { ok: false, error: 'Service unavailable', store: true, gateway: false } });
        // /health alone says yes here: the window load balancers fell into.
        expect((await request(`${base}/health`)).statusCode).toBe(200);
        expect(startedBefore).toBe(false);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(seen.some((r) => r.status === 503)).toBe(true);
    expect(seen.at(-1)).toEqual({ status: 200, body: { ok: true } });
    await starting;
  });

  const noPg = privatePostgresUnavailable();
  itUnless(noPg, `is 503 while the store is away, and 200 again once it is back${noPg ? ` (skipped: ${noPg})` : ''}`, async () => {
    let pg: PrivatePostgres | undefined = await startPrivatePostgres();
    cleanup.push(async () => pg?.stop());
    const dir = mkdtempSync(join(tmpdir(), 'rpcctl-ready-'));
    cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
    const configFile = join(dir, 'config.json');
    writeFileSync(configFile, JSON.stringify(testConfig()));
    const service = await startService({
      configFile, dataDir: dir, databaseUrl: pg.url, log: () => {}, env: { RPCCTL_MASTER_KEY: 'c3'.repeat(32), RPCCTL_DATABASE_URL: '', RPCCTL_REDIS_URL: '' },
    });
    cleanup.push(() => service.stop());
    const t = { baseUrl: service.apiUrl };
    // The metrics listener answers too, for load balancers that probe on the operators' network.
    const metricsBase = service.metricsUrl!;
    expect(await ready(t.baseUrl)).toEqual({ status: 200, body: { ok: true } });
    expect(await ready(metricsBase)).toEqual({ status: 200, body: { ok: true } });
    await pg.kill();
    // The store check is cached for a second: wait for it to notice.
    await waitForStatus(t.baseUrl, 503);
    expect(await ready(t.baseUrl)).toEqual({ status: 503, body: { ok: false, error: 'Service unavailable', store: false, gateway: true } });
    await waitForStatus(metricsBase, 503);
    // The gateway serves from memory meanwhile: its own check keeps it in the gateway pool.
    expect(await ready(service.gatewayUrl)).toEqual({ status: 200, body: { ok: true } });
    expect(await ready(metricsBase)).toEqual({ status: 503, body: { ok: false, error: 'Service unavailable', api: true, gateway: true, store: false } });
    await pg.start();
    await waitForStatus(t.baseUrl, 200);
    await waitForStatus(metricsBase, 200);
  });
});

async function waitForStatus(base: string, status: number, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while ((await ready(base)).status !== status) {
    expect(Date.now(), `${base}/ready to answer ${status}`).toBeLessThan(until);
    await new Promise((r) => setTimeout(r, 100));
  }
}

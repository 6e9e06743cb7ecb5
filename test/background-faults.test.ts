import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createLogger } from '../src/log/index.js';
import { Metrics } from '../src/metrics/index.js';
import { NodeProbe, PROBE_TASK } from '../src/gateway/probe.js';
import { UpstreamDirectory } from '../src/gateway/upstreams/index.js';
import { Supervisor } from '../src/runtime/supervisor.js';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';
import { startTestService, type TestService } from './helpers/service.js';

/** Every background task of a running service, by its name under the supervisor. */
const TASKS = [
  'probe', 'registry-check', 'usage-flush', 'key-use-flush', 'retention', 'watch-reconcile', 'deliveries',
  'payments-tick', 'payments-aml', 'payments-sightings', 'payments-references', 'scanner:fake-local',
];

async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function valueOf(metrics: Metrics, name: string, task: string): Promise<number> {
  const m = await metrics.registry.getSingleMetric(name)?.get();
  return m?.values.find((v) => v.labels.task === task)?.value ?? 0;
}

let chain: FakeEvm;
let t: TestService;
const lines: Array<{ level: string; task?: string; msg: string }> = [];
const unhandled: unknown[] = [];
const onUnhandled = (err: unknown) => { unhandled.push(err); };

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  chain = await startFakeEvmChain();
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as (typeof lines)[number]);
      done();
    },
  });
  t = await startTestService({
    networks: [{ slug: 'fake', name: 'Fake', family: 'evm', environments: [{ slug: 'local', upstreams: [chain.url], confirmations: 2 }] }],
    plans: [{ id: 1, slug: 'pro', name: 'Pro', included_credits: 1_000_000, rps_limit: 1000, endpoints_limit: 5, webhook_address_slots: 10 }],
    // The reference lookup runs at its own pace, not on kicks: a short one, so its retry is soon.
    payments: { reference_sweep_ms: 200 },
  }, { logger: createLogger({ format: 'json', level: 'info', stream: sink }) });
  // A watched address starts the environment's scanner; an endpoint gives the probe something to probe.
  const m = await t.merchant({ plan: 'pro' });
  expect((await m.call('POST', '/v1/endpoints', JSON.stringify({ name: 'e', network_environment_id: t.store.catalog.environmentBySlug('fake')!.id }))).status).toBe(200);
  expect((await m.call('POST', '/v1/address-watch/addresses', JSON.stringify({ network_slug: 'fake', address: `0x${'ab'.repeat(20)}` }))).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await chain?.close();
  process.off('unhandledRejection', onUnhandled);
});

describe('a failure in any background task', () => {
  it('every task the issue names runs under the service\'s supervisor', async () => {
    await until(() => TASKS.every((name) => t.service.supervisor.tasks().includes(name)), 'every task to start');
  });

  it.each(TASKS)('%s: caught, logged at error with its name, counted, and the task runs again; the service stays up', async (task) => {
    const { supervisor, metrics } = t.service;
    const errors = await valueOf(metrics, 'rpcctl_background_errors_total', task);
    const message = `injected fault in ${task}`;
    supervisor.inject(task, new Error(message));
    const injectedAt = Date.now() / 1000;
    // Periodic tasks are brought forward; the loops (scanner, deliveries, payments) poll by themselves.
    supervisor.kick(task);
    await until(async () => await valueOf(metrics, 'rpcctl_background_errors_total', task) === errors + 1, `${task} to count the failure`);
    expect(lines.some((l) => l.level === 'error' && l.task === task && l.msg.includes(message))).toBe(true);
    // The next run succeeds: it is retried after the back-off, not after a whole interval.
    supervisor.kick(task);
    await until(async () => await valueOf(metrics, 'rpcctl_background_last_success_timestamp_seconds', task) > injectedAt, `${task} to succeed again`);
    expect(lines.some((l) => l.level === 'info' && l.task === task && /works again/.test(l.msg))).toBe(true);
    expect((await request(`${t.baseUrl}/health`)).statusCode).toBe(200);
    expect(unhandled).toEqual([]);
  });
});

describe('the gateway probe with its store gone', () => {
  it('is caught and counted, never an unhandled rejection (it ended every instance on a PostgreSQL outage)', async () => {
    const { Store } = await import('../src/store/index.js');
    const { parseConfig } = await import('../src/config/index.js');
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'rpcctl-probe-'));
    const store = await Store.open({ dataDir: dir, config: parseConfig({}), syncCatalog: 'always', env: {} });
    const metrics = new Metrics({ processMetrics: false });
    const supervisor = new Supervisor({ metrics });
    const probe = new NodeProbe(store, new UpstreamDirectory({ timeoutMs: 1000, maxLagBlocks: 5, hedgeQuantile: undefined }), () => {}, { supervisor });
    await store.close(); // the store goes away underneath the running probe
    const before = unhandled.length;
    probe.start(50);
    await until(async () => await valueOf(metrics, 'rpcctl_background_errors_total', PROBE_TASK) >= 2, 'the probe to fail twice');
    await new Promise((r) => setImmediate(r));
    expect(unhandled.slice(before)).toEqual([]);
    await probe.stop();
    await supervisor.stop();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('the gateway probe while its store is away', () => {
  it('probes on the environments it last knew: the upstreams\' heads keep moving, only the store writes fail (and the round is counted)', async () => {
    const { Store, createAccount } = await import('../src/store/index.js');
    const { insertEndpointChecked } = await import('../src/store/endpoints.js');
    const { parseConfig } = await import('../src/config/index.js');
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const upstream = await startFakeEvmChain();
    const dir = mkdtempSync(join(tmpdir(), 'rpcctl-probe-'));
    const store = await Store.open({
      dataDir: dir, syncCatalog: 'always', env: {},
      config: parseConfig({
        networks: [{ id: 1, slug: 'fake', name: 'Fake', family: 'evm', environments: [{ id: 1, slug: 'local', upstreams: [upstream.url] }] }],
        plans: [{ id: 1, slug: 'p', name: 'P', included_credits: 1000, rps_limit: 10, endpoints_limit: 5 }],
      }),
    });
    try {
      const account = await createAccount(store, { planId: 1 });
      await insertEndpointChecked(store, { accountId: account.id, name: 'e', environmentId: 1 }, () => {});
      const views = new Map<number, { head: number; finalized: number }>();
      const probe = new NodeProbe(store, new UpstreamDirectory({ timeoutMs: 1000, maxLagBlocks: 5, hedgeQuantile: undefined }), () => {}, { views });
      await probe.probeAll();
      const before = views.get(1)?.head;
      expect(before).toBeTypeOf('number');

      await store.close(); // the store goes away; the upstream's chain moves on
      upstream.mine();
      upstream.mine();
      await expect(probe.probeAll()).rejects.toThrow();
      expect(views.get(1)?.head).toBe(before! + 2);
    } finally {
      await store.close().catch(() => {});
      await upstream.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

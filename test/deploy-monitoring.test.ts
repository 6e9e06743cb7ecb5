import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa, type ResultPromise } from 'execa';
import { FakeEvm } from './helpers/fake-evm.js';
import { privateRedisUnavailable, startPrivateRedis, type PrivateRedis } from './helpers/private-servers.js';
import { rawCall, testConfig } from './helpers/service.js';
import { describeUnless } from './helpers/skips.js';

/**
 * deploy/monitoring: the alert rules pass `promtool check rules` and their unit tests
 * (`promtool test rules`), and every metric the rules and the Grafana dashboard name is one a
 * running service exposes: a renamed metric breaks this test, not an operator's alert.
 */
const dir = new URL('../deploy/monitoring/', import.meta.url).pathname;
const promtool = spawnSync('promtool', ['--version']).status === 0;
const noRedis = privateRedisUnavailable();

const rulesText = readFileSync(join(dir, 'alerts.yaml'), 'utf8');
const dashboard = JSON.parse(readFileSync(join(dir, 'grafana-dashboard.json'), 'utf8')) as {
  panels: Array<{ type: string; title: string; targets?: Array<{ expr: string }> }>;
  templating: { list: Array<{ definition?: string }> };
};

/** rpcctl_* names in PromQL; a histogram's series name its family. */
function metricNames(promql: string): string[] {
  return [...promql.matchAll(/\brpcctl_[a-z0-9_]+/g)].map((m) => m[0]);
}
/** Metric families of an exposition (HELP/TYPE lines: present even before a first sample). */
function families(exposition: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of exposition.split('\n')) {
    const m = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}
function unknownNames(names: string[], known: Map<string, string>): string[] {
  return [...new Set(names)].filter((name) => {
    if (known.has(name)) return false;
    const family = name.replace(/_(bucket|count|sum)$/, '');
    return !(family !== name && known.get(family) === 'histogram');
  });
}

function promtoolRun(args: string[]) {
  const r = spawnSync('promtool', args, { cwd: dir, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describeUnless(!promtool && 'promtool is not installed; Debian: apt-get install prometheus', 'alert rules', () => {
  it('promtool check rules: valid', () => {
    const r = promtoolRun(['check', 'rules', 'alerts.yaml']);
    expect(r.output).toMatch(/SUCCESS: 11 rules found/);
    expect(r.status).toBe(0);
  });

  it('promtool test rules: every alert fires when it should and not before', () => {
    const r = promtoolRun(['test', 'rules', 'alerts.test.yaml']);
    expect(r.output).toMatch(/SUCCESS/);
    expect(r.status).toBe(0);
  });

  it('the unit tests catch a changed threshold (they can fail)', () => {
    const work = mkdtempSync(join(tmpdir(), 'rpcctl-rules-'));
    try {
      writeFileSync(join(work, 'alerts.yaml'), rulesText.replace('rpcctl_webhook_outbox_oldest_seconds) > 300', 'rpcctl_webhook_outbox_oldest_seconds) > 3000'));
      copyFileSync(join(dir, 'alerts.test.yaml'), join(work, 'alerts.test.yaml'));
      const r = spawnSync('promtool', ['test', 'rules', 'alerts.test.yaml'], { cwd: work, encoding: 'utf8' });
      expect(r.status).not.toBe(0);
      expect(`${r.stdout}${r.stderr}`).toMatch(/RpcctlWebhookOutboxStale/);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('covers what operators page on: upstream down, lag, delivery backlog, outbox age, Redis fallback, store errors', () => {
    const alerts = [...rulesText.matchAll(/- alert: (\S+)/g)].map((m) => m[1]);
    expect(alerts).toEqual(expect.arrayContaining([
      'RpcctlUpstreamDown', 'RpcctlUpstreamLagging', 'RpcctlScannerLagging', 'RpcctlWebhookBacklog', 'RpcctlWebhookOutboxStale', 'RpcctlRedisFallback', 'RpcctlStoreErrors',
    ]));
    // Each alert has its unit test.
    const tested = new Set([...readFileSync(join(dir, 'alerts.test.yaml'), 'utf8').matchAll(/alertname: (\S+)/g)].map((m) => m[1]));
    expect(alerts.filter((a) => !tested.has(a))).toEqual([]);
  });
});

describeUnless(noRedis, 'every metric the dashboard and the rules name is exposed by a running service', () => {
  let up: FakeEvm;
  let redis: PrivateRedis;
  let serve: ResultPromise | undefined;
  let known: Map<string, string>;
  const work = mkdtempSync(join(tmpdir(), 'rpcctl-monitoring-'));

  beforeAll(async () => {
    up = await new FakeEvm().start();
    // With Redis, so its gauges (registered only then) are there too.
    redis = await startPrivateRedis();
    const configFile = join(work, 'config.json');
    writeFileSync(configFile, JSON.stringify(testConfig({
      networks: [{ slug: 'eth', name: 'Ethereum', environments: [{ slug: 'main', upstreams: [up.url] }] }],
      redis: { url: redis.url },
    })));
    // The real `rpcctl serve` process, as operators scrape it (some metrics are the process's own).
    const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
    serve = execa(process.execPath, [bin, 'serve', '--config', configFile, '--data-dir', join(work, 'data')], {
      reject: false, all: true, env: { RPCCTL_MASTER_KEY: '', RPCCTL_DATABASE_URL: '', RPCCTL_REDIS_URL: '', RPCCTL_LOG_FORMAT: 'text' },
    });
    let out = '';
    const metricsUrl = await new Promise<string>((resolve, reject) => {
      serve!.all!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /\bmetrics\s+(http:\/\/\S+)/.exec(out)?.[1];
        if (m) resolve(m.replace(/\/metrics$/, ''));
      });
      serve!.once('exit', () => reject(new Error(`serve exited early:\n${out}`)));
    });
    const r = await rawCall(metricsUrl, 'GET', '/metrics');
    expect(r.status).toBe(200);
    known = families(r.body as string);
  }, 120_000);
  afterAll(async () => {
    serve?.kill('SIGTERM');
    await serve;
    await Promise.all([up?.stop(), redis?.stop()]);
    rmSync(work, { recursive: true, force: true });
  });

  it('the dashboard: panels for the gateway, scanners, webhooks and payments, every metric exposed', () => {
    const rows = dashboard.panels.filter((p) => p.type === 'row').map((p) => p.title);
    expect(rows).toEqual(expect.arrayContaining(['Gateway', 'Scanners', 'Webhooks', 'Payments']));
    const exprs = dashboard.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
    expect(exprs.length).toBeGreaterThan(20);
    const names = [...exprs, ...dashboard.templating.list.map((v) => v.definition ?? '')].flatMap(metricNames);
    expect(names.length).toBeGreaterThan(30);
    expect(unknownNames(names, known)).toEqual([]);
  });

  it('the alert rules: every metric exposed', () => {
    const names = metricNames(rulesText.split('\n').filter((l) => /^\s+expr:/.test(l)).join('\n'));
    expect(names.length).toBeGreaterThan(10);
    expect(unknownNames(names, known)).toEqual([]);
  });

  it('a name the service does not expose is caught (the check can fail)', () => {
    expect(unknownNames(['rpcctl_gateway_requests_total', 'rpcctl_gateway_request_total', 'rpcctl_upstream_request_duration_seconds_bucket', 'rpcctl_webhook_outbox_depth_count'], known))
      .toEqual(['rpcctl_gateway_request_total', 'rpcctl_webhook_outbox_depth_count']);
  });
});

// bench:gateway — JSON-RPC load through the full gateway (routing, RPS window, allowlist,
// metering, request logs) against the same load through a minimal node:http + undici proxy, both
// in front of the same fast local upstream, in alternating rounds, with the serve process's CPU
// time per request (user + system, from /proc: steadier than throughput on a shared machine).
// BENCH_COMPARE=/path/to/other/checkout (built with npm run build) adds that version's gateway to
// every round, for a CPU-per-request ratio between the two. BENCH_TRACING=0.01 adds this
// checkout's gateway with tracing on at that sampling ratio (exporting to a sink in this process)
// to every round, for the ratio traced/untraced (BENCH_AA=1: that third gateway untraced too, an
// A/A run that shows how far two identical processes differ here); with BENCH_COMPARE too, the
// other checkout's gateway traced the same way as well, so the cost of tracing before and after a
// change is measured in the same rounds. Then a soak run to watch memory.
import { EventEmitter } from 'node:events';
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fmt, load, median, startFixture } from './load.js';
import { startServe } from './serve.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
// Requests a second to each gateway (BENCH_RATE; default: as fast as each answers). A fixed rate
// makes CPU per request comparable between processes when the machine is too busy for them to
// reach the same throughput (fewer requests a second batch less, and cost more each).
const rate = process.env.BENCH_RATE === undefined ? undefined : Number(process.env.BENCH_RATE);
const soakSeconds = Number(process.env.BENCH_SOAK_SECONDS ?? 60);

const compare = process.env.BENCH_COMPARE;
const tracingRatio = process.env.BENCH_TRACING === undefined ? undefined : Number(process.env.BENCH_TRACING);

const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

/** User + system CPU seconds of a process so far. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

/**
 * The request log's work per call in isolation (the record, the 'close' listener, the ring), in
 * µs: against a bare response object with the same events, over rings of 50 endpoints kept full.
 */
async function requestLogCostUs() {
  const { RequestLog, noteCall, noteOf, noteCode } = await import('../dist/gateway/request-log.js');
  const log = new RequestLog(200);
  const n = 1_000_000;
  const response = () => {
    const res = new EventEmitter();
    res.statusCode = 200;
    res.writableFinished = true;
    return res;
  };
  const timed = (fn) => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn(i);
    return (performance.now() - t0) * 1000 / n;
  };
  const noted = (i) => {
    const res = response();
    noteCall(log, res, i % 50, '127.0.0.1');
    noteOf(res).method = 'eth_getBalance';
    noteOf(res).credits = 15;
    noteCode(res, undefined);
    res.emit('close');
  };
  const bare = () => response().emit('close');
  timed(noted);
  timed(bare);
  const costs = [];
  for (let r = 0; r < 5; r++) costs.push(timed(noted) - timed(bare));
  return median(costs);
}

/**
 * The tracing work per call in isolation at `ratio` (the call's span with the client's
 * traceparent read, endpoint and method noted, one upstream attempt with its traceparent
 * written, both ended), in CPU µs: against the same bare response without it. Spans go to `sinkUrl`.
 */
async function tracingCostUs(ratio, sinkUrl) {
  const { startTracing } = await import('../dist/telemetry/index.js');
  const { traced, traceOf, traceEndpoint, traceMethod, traceAttempt } = await import('../dist/gateway/trace.js');
  const tracing = await startTracing({ url: `${sinkUrl}/v1/traces`, headers: {}, serviceName: 'bench', samplingRatio: ratio, timeoutMs: 10_000 }, () => {}, 'bench');
  const ep = { id: 1, env: { slug: 'mainnet', network: { slug: 'eth' } } };
  const n = 200_000;
  const call = (withTracing) => {
    const res = new EventEmitter();
    res.statusCode = 200;
    res.writableFinished = true;
    const req = { method: 'POST', headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } };
    const work = () => {
      const t = traceOf(res);
      traceEndpoint(t, ep);
      traceMethod(t, 'eth_getBalance');
      const done = traceAttempt(t, 'http://127.0.0.1:8545', 'eth_getBalance', { 'content-type': 'application/json' });
      done?.(200);
    };
    if (withTracing) traced(tracing, req, res, work);
    res.emit('close');
  };
  // CPU time of this thread (steadier than the clock on a shared machine).
  const timed = (withTracing) => {
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i++) call(withTracing);
    const d = process.cpuUsage(t0);
    return (d.user + d.system) / n;
  };
  timed(true);
  timed(false);
  const costs = [];
  for (let r = 0; r < 5; r++) costs.push(timed(true) - timed(false));
  await tracing.shutdown();
  return median(costs);
}

const upstream = await startFixture('upstream.js');
const proxy = await startFixture('min-proxy.js', [upstream.url]);
const body = '{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x52908400098527886E0F7030069857D2E4169EE7","latest"]}';
const headers = () => ({ 'content-type': 'application/json' });

/** An OTLP/HTTP receiver that takes every export and counts the spans' bytes (tracing mode). */
async function startSpanSink() {
  const sink = { bytes: 0, exports: 0 };
  const server = createServer((req, res) => {
    req.on('data', (c) => { sink.bytes += c.length; });
    req.on('end', () => { sink.exports++; res.writeHead(200, { 'content-type': 'application/json' }).end('{}'); });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { stats: sink, url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

/**
 * A serve process (this checkout's, or `root`'s) with one endpoint, and a load function that
 * measures its CPU per request; `telemetry`: its config's telemetry section.
 */
async function gatewayOf(root, telemetry) {
  const serve = await startServe({
    ...(telemetry ? { telemetry } : {}),
    api: { host: '127.0.0.1', port: 0 },
    gateway: { host: '127.0.0.1', port: 0, probe_interval_ms: 3_600_000 },
    limits: { api_rps_per_ip: 1_000_000, api_rpm_per_account: 1_000_000 },
    networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [upstream.url] }],
      credits: { default: 20, methods: { eth_getBalance: 15 } } }],
    plans: [{ id: 1, slug: 'bench', name: 'Bench', included_credits: 1e12, rps_limit: 1_000_000_000, endpoints_limit: 10 }],
  }, root ? { bin: join(root, 'bin', 'rpcctl.js') } : {});
  const { user_id } = serve.admin('accounts', 'create', '--plan', 'bench');
  const key = serve.admin('keys', 'create', '--account', String(user_id));
  const { ApiClient } = await import('../dist/client/index.js');
  const client = new ApiClient({ baseUrl: serve.api, apiKey: key.api_key, secret: key.secret });
  const { endpoint } = await client.createEndpoint({ name: 'bench', network_environment_id: 1 });
  // An allowlist that admits the bench client, so the check runs on every request.
  await client.setAllowedIps(endpoint.id, ['203.0.113.1', '127.0.0.1']);
  await client.close();
  const run = async (s) => {
    const cpu0 = cpuSeconds(serve.child.pid);
    const r = await load({ url: serve.gateway, path: `/${endpoint.uuid}`, method: 'POST', body, headers, seconds: s, connections, expectStatus: 200, rate });
    r.cpuUs = (cpuSeconds(serve.child.pid) - cpu0) * 1e6 / r.requests;
    return r;
  };
  return { serve, run };
}

const main = await gatewayOf(undefined);
const other = compare ? await gatewayOf(compare) : undefined;
const sink = tracingRatio === undefined ? undefined : await startSpanSink();
const tracedTelemetry = process.env.BENCH_AA ? undefined : { sampling_ratio: tracingRatio, otlp: { endpoint: sink?.url } };
const traced = sink ? await gatewayOf(undefined, tracedTelemetry) : undefined;
const otherTraced = sink && compare ? await gatewayOf(compare, tracedTelemetry) : undefined;
const serve = main.serve;
try {
  const viaGateway = main.run;
  const viaProxy = (s) => load({ url: proxy.url, path: '/', method: 'POST', body, headers, seconds: s, connections, expectStatus: 200 });
  const show = (r) => `${fmt(r)}  cpu ${r.cpuUs.toFixed(1).padStart(6)} us/req`;

  await viaProxy(1);
  await viaGateway(1);
  if (other) await other.run(1);
  if (traced) await traced.run(1);
  if (otherTraced) await otherTraced.run(1);
  const ref = [];
  const gw = [];
  const cmp = [];
  const trc = [];
  const otrc = [];
  const runs = { main: (s) => viaGateway(s), other: (s) => other.run(s), traced: (s) => traced.run(s), otherTraced: (s) => otherTraced.run(s) };
  const lists = { main: gw, other: cmp, traced: trc, otherTraced: otrc };
  const present = ['main', ...(other ? ['other'] : []), ...(traced ? ['traced'] : []), ...(otherTraced ? ['otherTraced'] : [])];
  for (let r = 0; r < rounds; r++) {
    const p = await viaProxy(seconds);
    // Which gateway goes first rotates, so none always runs on a machine just warmed by another.
    const order = present.map((_, i) => present[(i + r) % present.length]);
    for (const which of order) lists[which].push(await runs[which](seconds));
    ref.push(p);
    console.log(`round ${r + 1}: minimal proxy ${fmt(p)}`);
    console.log(`         gateway       ${show(gw.at(-1))}`);
    if (other) console.log(`         compared      ${show(cmp.at(-1))}  (${compare})`);
    if (traced) console.log(`         traced        ${show(trc.at(-1))}  (sampling ${tracingRatio})`);
    if (otherTraced) console.log(`         compared, traced ${show(otrc.at(-1))}  (sampling ${tracingRatio})`);
  }
  const summary = (rs) => ({ rps: median(rs.map((r) => r.rps)), p50: median(rs.map((r) => r.p50)), p99: median(rs.map((r) => r.p99)), cpuUs: median(rs.map((r) => r.cpuUs)), errors: 0, unexpected: 0 });
  const p = summary(ref);
  const g = summary(gw);
  console.log('\nmedians');
  console.log(`  minimal proxy (node:http + undici)  ${fmt(p)}`);
  console.log(`  rpcctl gateway                      ${show(g)}`);
  console.log(`  throughput gateway/proxy: ${(g.rps / p.rps * 100).toFixed(1)} % (aim >= 90 %)`);
  console.log(`  p99 gateway/proxy: ${(g.p99 / p.p99).toFixed(2)}x (aim <= 2x)`);
  if (other) {
    const c = summary(cmp);
    const paired = gw.map((r, i) => r.cpuUs / cmp[i].cpuUs);
    console.log(`  compared gateway (${compare})  ${show(c)}`);
    console.log(`  CPU per request this/compared, medians: ${(g.cpuUs / c.cpuUs * 100).toFixed(1)} %; median of per-round ratios: ${(median(paired) * 100).toFixed(1)} %`);
    console.log(`  throughput this/compared: ${(g.rps / c.rps * 100).toFixed(1)} %`);
  }
  if (traced) {
    const t = summary(trc);
    const paired = trc.map((r, i) => r.cpuUs / gw[i].cpuUs);
    console.log(`  traced gateway (sampling ${tracingRatio})  ${show(t)}`);
    console.log(`  CPU per request traced/untraced, medians: ${(t.cpuUs / g.cpuUs * 100).toFixed(1)} %; median of per-round ratios: ${(median(paired) * 100).toFixed(1)} %`);
    console.log(`  throughput traced/untraced: ${(t.rps / g.rps * 100).toFixed(1)} %; p99 traced/untraced: ${(t.p99 / g.p99).toFixed(2)}x`);
    if (otherTraced) {
      const o = summary(otrc);
      const c = summary(cmp);
      const opaired = otrc.map((r, i) => r.cpuUs / cmp[i].cpuUs);
      console.log(`  compared gateway traced (sampling ${tracingRatio})  ${show(o)}`);
      console.log(`  compared: CPU per request traced/untraced, medians: ${(o.cpuUs / c.cpuUs * 100).toFixed(1)} %; median of per-round ratios: ${(median(opaired) * 100).toFixed(1)} %`);
      console.log(`  CPU per request traced this/traced compared, medians: ${(t.cpuUs / o.cpuUs * 100).toFixed(1)} %; median of per-round ratios: ${(median(trc.map((r, i) => r.cpuUs / otrc[i].cpuUs)) * 100).toFixed(1)} %`);
    }
    console.log(`  exported so far: ${sink.stats.exports} requests, ${(sink.stats.bytes / 1024).toFixed(0)} KiB`);
    for (const ratio of [tracingRatio, 1]) {
      const us = await tracingCostUs(ratio, sink.url);
      console.log(`  tracing work per call in isolation at sampling ${ratio}: ${us.toFixed(2)} us, ${(us / g.cpuUs * 100).toFixed(2)} % of the untraced gateway's CPU per request`);
    }
  }
  const logCost = await requestLogCostUs();
  console.log(`  request log work per request in isolation: ${logCost.toFixed(2)} us, ${(logCost / g.cpuUs * 100).toFixed(2)} % of the gateway's CPU per request`);
  if ([...ref, ...gw, ...cmp, ...trc].some((r) => r.errors || r.unexpected)) console.log('  WARNING: some requests failed; see rounds above');

  if (soakSeconds > 0) {
    const pid = serve.child.pid;
    const samples = [];
    const timer = setInterval(() => samples.push(rssMb(pid)), 5000);
    const soak = await viaGateway(soakSeconds);
    clearInterval(timer);
    samples.push(rssMb(pid));
    console.log(`\nsoak ${soakSeconds}s through the gateway: ${fmt(soak)}`);
    console.log(`  serve RSS MiB every 5 s: ${samples.map((s) => s.toFixed(0)).join(' ')}`);
    const firstHalf = median(samples.slice(0, Math.ceil(samples.length / 2)));
    const secondHalf = median(samples.slice(Math.ceil(samples.length / 2)));
    console.log(`  median RSS first half ${firstHalf.toFixed(0)} MiB, second half ${secondHalf.toFixed(0)} MiB (ratio ${(secondHalf / firstHalf).toFixed(2)})`);
  }
} finally {
  await serve.stop();
  await other?.serve.stop();
  await traced?.serve.stop();
  await otherTraced?.serve.stop();
  await sink?.close();
  upstream.process.kill();
  proxy.process.kill();
}

// bench:scale, gateway part. Every figure is a ratio against a reference measured in the same
// run (interleaved rounds, medians): the machine is small, shared and noisy.
//   1. p99 with 100k endpoints vs 10 (an `rpcctl admin` plan change every second in both), and
//      start-up time and RSS at each size. Paced load (a fixed rate, latency counted from when
//      each request was due): a closed loop would wait out a stall with its few connections
//      and report it as a handful of slow requests;
//   2. the gateway vs bench/fixtures/min-proxy.js before the same upstream: req/s and CPU-µs per
//      request (utime + stime from /proc of each process);
//   3. N gateway workers vs 1 (config `gateway.workers`), and the RPS window's exactness across
//      workers: the most requests admitted in any second over the plan's limit.
// While one process is measured the others are stopped (SIGSTOP), so their background work
// (a registry reload, a flush) lands on nobody's figures but their own.
// BENCH_SCALE_SMALL=1: data sets 100x smaller, fewer and shorter rounds (a quick check).
import { execFile, execSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { load, median, startFixture } from '../load.js';
import { startServe } from '../serve.js';

const small = process.env.BENCH_SCALE_SMALL === '1';
const manyEndpoints = small ? 1_000 : 100_000;
const fewEndpoints = 10;
const rounds = small ? 2 : 7;
const seconds = small ? 2 : 4;
const connections = 32;
const rpsLimit = 100;
const rpsSeconds = small ? 3 : 6;
/** The paced load of the p99 rounds: well under what either arm can serve on a busy 2-core machine. */
const pacedRate = small ? 500 : 1000;
/** Longer than the registry's 5 s reload of today's gateway, so every round sees one. */
const pacedSeconds = small ? 3 : 6;
const cores = availableParallelism();
const dist = new URL('../../dist/', import.meta.url);
const bin = new URL('../../bin/rpcctl.js', import.meta.url).pathname;
const { parseConfig } = await import(new URL('config/index.js', dist).href);
const { Store, createAccount } = await import(new URL('store/index.js', dist).href);

const ticks = Number(execSync('getconf CLK_TCK', { encoding: 'utf8' }));
/** CPU seconds (user + system, every thread) of a process so far. */
const cpuOf = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / ticks;
};
const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const x = (r) => `${r.toFixed(2)}x`;
const ms = (v) => `${v.toFixed(1)} ms`;
const n = (v) => Math.round(v).toLocaleString('en-US');
/** One ratio line, as bench/scale.js collects them. */
function ratio(label, value, op, aim, details) {
  const ok = op === '<=' ? value <= aim : op === '>=' ? value >= aim : value.toFixed(2) === aim.toFixed(2);
  console.log(`  ${label}: ${x(value)} (aim ${op} ${aim.toFixed(2)}) ${ok ? 'ok' : 'MISSED'} — ${details}`);
}

let workersSupported = true;
try {
  parseConfig({ gateway: { workers: 1 } });
} catch {
  workersSupported = false;
}

const upstream = await startFixture('upstream.js');
const proxy = await startFixture('min-proxy.js', [upstream.url]);

const plans = [
  { id: 1, slug: 'bench', name: 'Bench', included_credits: 1e12, rps_limit: 1_000_000_000, endpoints_limit: 1_000_000 },
  { id: 2, slug: 'bench_b', name: 'Bench B', included_credits: 1e12, rps_limit: 999_999_999, endpoints_limit: 1_000_000 },
  { id: 3, slug: 'rps100', name: 'RPS 100', included_credits: 1e12, rps_limit: rpsLimit, endpoints_limit: 10 },
];
const configFor = (gateway = {}) => ({
  api: { host: '127.0.0.1', port: 0 },
  gateway: { host: '127.0.0.1', port: 0, probe_interval_ms: 3_600_000, ...gateway },
  limits: { api_rps_per_ip: 1_000_000, api_rpm_per_account: 1_000_000 },
  networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [upstream.url] }],
    credits: { default: 20, methods: { eth_getBalance: 15 } } }],
  plans,
});

/**
 * A data dir with `count` endpoints, written through the store as the service writes them:
 * accounts by createAccount (100 endpoints each), endpoints in bulk inserts of the same rows
 * the API's insert makes. Returns the UUIDs the bench needs.
 */
async function seed(config, count) {
  const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-bench-scale-'));
  let store;
  try {
    store = await Store.open({ dataDir, config: parseConfig(config), syncCatalog: 'always' });
    const perAccount = 100;
    const accounts = [];
    for (let i = 0; i < Math.ceil(count / perAccount); i++) accounts.push((await createAccount(store, { planId: 1 })).id);
    const rpsAccount = (await createAccount(store, { planId: 3 })).id;
    const now = new Date().toISOString();
    const row = (accountId) => ({ uuid: randomUUID(), account_id: accountId, name: 'bench', status: 'active', network_environment_id: 1,
      allowed_ips: '[]', created_at: now, updated_at: now, version: null, block_height: null });
    const batch = 1000;
    for (let at = 0; at < count; at += batch) {
      const rows = [];
      for (let i = at; i < Math.min(count, at + batch); i++) rows.push(row(accounts[Math.floor(i / perAccount)]));
      await store.db.transaction().execute((trx) => trx.insertInto('endpoints').values(rows).execute());
    }
    await store.db.insertInto('endpoints').values(row(rpsAccount)).execute();
    const first = await store.db.selectFrom('endpoints').select('uuid').where('account_id', '=', accounts[0]).orderBy('id').executeTakeFirstOrThrow();
    const limited = await store.db.selectFrom('endpoints').select('uuid').where('account_id', '=', rpsAccount).executeTakeFirstOrThrow();
    // The account whose plan `rpcctl admin` flips every second: not the one the load goes to.
    return { dataDir, loadUuid: first.uuid, rpsUuid: limited.uuid, flipAccount: accounts[accounts.length - 1] };
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  } finally {
    await store?.close();
  }
}

async function startSeeded(config, count) {
  const t0 = performance.now();
  const seeded = await seed(config, count);
  const seedMs = performance.now() - t0;
  const serve = await startServe(config, { dataDir: seeded.dataDir }).catch((err) => {
    rmSync(seeded.dataDir, { recursive: true, force: true });
    throw err;
  });
  return { ...seeded, serve, seedMs, pid: serve.child.pid, configFile: join(seeded.dataDir, 'config.json') };
}

/** `rpcctl admin accounts set-plan` in its own process, as an operator runs it; resolves when it exits. */
function adminSetPlan(inst, plan) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [bin, 'admin', 'accounts', 'set-plan', String(inst.flipAccount), '--plan', plan, '--json',
      '--data-dir', inst.dataDir, '--config', inst.configFile], { encoding: 'utf8' }, (err) => (err ? reject(err) : resolve()));
  });
}

/** A plan change of `inst`'s flip account every second (never two at once) until the returned stop is called. */
function adminEverySecond(inst) {
  let stopped = false;
  let changes = 0;
  let failures = 0;
  let flip = false;
  const loop = (async () => {
    while (!stopped) {
      const t0 = performance.now();
      flip = !flip;
      try {
        await adminSetPlan(inst, flip ? 'bench_b' : 'bench');
        changes++;
      } catch {
        failures++;
      }
      const wait = 1000 - (performance.now() - t0);
      if (wait > 0 && !stopped) await new Promise((r) => setTimeout(r, wait));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    return { changes, failures };
  };
}

const running = [];
/** Runs `fn` with every serve process but `active` (null: none) stopped. */
async function alone(active, fn) {
  const others = running.filter((r) => r !== active);
  for (const o of others) process.kill(o.pid, 'SIGSTOP');
  try {
    return await fn();
  } finally {
    for (const o of others) process.kill(o.pid, 'SIGCONT');
  }
}

const CALL = '{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x52908400098527886E0F7030069857D2E4169EE7","latest"]}';
const headers = () => ({ 'content-type': 'application/json' });
/**
 * `rate` requests a second for `secs`, each sent when due whatever the others do; latency from
 * when it was due, so time spent queued behind a stalled gateway counts.
 */
async function paced(inst, rate, secs) {
  const pool = new Pool(new URL(inst.serve.gateway).origin, { connections: 64, pipelining: 1 });
  const latencies = [];
  let errors = 0;
  const inflight = [];
  const t0 = performance.now();
  const total = Math.round(rate * secs);
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate) + 1);
    for (; sent < due; sent++) {
      const at = t0 + (sent / rate) * 1000;
      inflight.push(pool.request({ path: `/${inst.loadUuid}`, method: 'POST', body: CALL, headers: headers() })
        .then(async (res) => {
          await res.body.dump();
          if (res.statusCode !== 200) errors++;
        }, () => { errors++; })
        .then(() => { latencies.push(performance.now() - at); }));
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - t0) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))];
  return { requests: latencies.length, rps: latencies.length / elapsed, p50: pct(0.5), p99: pct(0.99), max: latencies[latencies.length - 1], errors, unexpected: 0 };
}
const viaGateway = (inst, s) => load({ url: inst.serve.gateway, path: `/${inst.loadUuid}`, method: 'POST', body: CALL, headers, seconds: s, connections, expectStatus: 200 });
/** Load on `pid`'s process, with its CPU seconds per request. */
async function measured(pid, run) {
  const c0 = cpuOf(pid);
  const r = await run();
  return { ...r, cpuUs: ((cpuOf(pid) - c0) / r.requests) * 1e6 };
}
const failed = (rs) => rs.reduce((a, r) => a + r.errors + r.unexpected, 0);

const workerConfig = workersSupported ? { workers: cores } : {};
try {
  const few = await startSeeded(configFor(workerConfig), fewEndpoints);
  running.push(few);
  const many = await startSeeded(configFor(workerConfig), manyEndpoints);
  running.push(many);
  console.log(`seeded ${n(manyEndpoints)} endpoints in ${(many.seedMs / 1000).toFixed(1)} s (${fewEndpoints} in ${(few.seedMs / 1000).toFixed(1)} s)`);
  console.log(`start-up to ready: ${(many.serve.startupMs / 1000).toFixed(2)} s at ${n(manyEndpoints)} endpoints, ${(few.serve.startupMs / 1000).toFixed(2)} s at ${fewEndpoints}`
    + ` (${x(many.serve.startupMs / few.serve.startupMs)}); RSS ${rssMb(many.pid).toFixed(0)} vs ${rssMb(few.pid).toFixed(0)} MiB`);

  // 1. p99 with many endpoints vs few, an admin change every second in both.
  await alone(few, () => paced(few, pacedRate, 1));
  await alone(many, () => paced(many, pacedRate, 1));
  const p99 = { few: [], many: [] };
  const changes = { few: 0, many: 0, failures: 0 };
  for (let r = 0; r < rounds; r++) {
    for (const [name, inst] of [['few', few], ['many', many]]) {
      const stopAdmin = adminEverySecond(inst);
      const res = await alone(inst, () => paced(inst, pacedRate, pacedSeconds));
      const a = await stopAdmin();
      changes[name] += a.changes;
      changes.failures += a.failures;
      p99[name].push(res);
      console.log(`round ${r + 1}: ${name === 'few' ? `${fewEndpoints} endpoints` : `${n(manyEndpoints)} endpoints`}`.padEnd(30)
        + `${n(res.rps)} req/s paced  p50 ${ms(res.p50)}  p99 ${ms(res.p99)}  max ${ms(res.max)}  (${a.changes} admin changes)${res.errors ? `  ${res.errors} failed` : ''}`);
    }
  }
  const p99Few = median(p99.few.map((r) => r.p99));
  const p99Many = median(p99.many.map((r) => r.p99));
  console.log(`RSS after the rounds: ${rssMb(many.pid).toFixed(0)} MiB at ${n(manyEndpoints)} endpoints, ${rssMb(few.pid).toFixed(0)} MiB at ${fewEndpoints}`);
  ratio(`gateway p99, ${n(manyEndpoints)} vs ${fewEndpoints} endpoints (admin change every second)`, p99Many / p99Few, '<=', 1.5,
    `p99 ${ms(p99Many)} vs ${ms(p99Few)} at ${n(pacedRate)} req/s paced, max ${ms(median(p99.many.map((r) => r.max)))} vs ${ms(median(p99.few.map((r) => r.max)))}, `
    + `${changes.many} vs ${changes.few} admin changes${changes.failures ? ` (${changes.failures} failed)` : ''}, ${failed([...p99.few, ...p99.many])} failed requests`);
  running.splice(running.indexOf(many), 1);
  await many.serve.stop();
  rmSync(many.dataDir, { recursive: true, force: true });

  // 2. The gateway against the minimal proxy, before the same upstream.
  const viaProxy = (s) => load({ url: proxy.url, path: '/', method: 'POST', body: CALL, headers, seconds: s, connections, expectStatus: 200 });
  await alone(null, () => viaProxy(1));
  const vs = { gw: [], proxy: [] };
  for (let r = 0; r < rounds; r++) {
    // The proxy idles meanwhile: it has no background work to stop. Each goes first every other
    // round, so a drift of the machine's load within a round favours neither.
    const runProxy = () => alone(null, () => measured(proxy.process.pid, () => viaProxy(seconds)));
    const runGateway = () => alone(few, () => measured(few.pid, () => viaGateway(few, seconds)));
    let p, g;
    if (r % 2 === 0) {
      p = await runProxy();
      g = await runGateway();
    } else {
      g = await runGateway();
      p = await runProxy();
    }
    vs.proxy.push(p);
    vs.gw.push(g);
    console.log(`round ${r + 1}: min-proxy ${n(p.rps)} req/s ${p.cpuUs.toFixed(0)} CPU-µs/req p99 ${ms(p.p99)} | gateway ${n(g.rps)} req/s ${g.cpuUs.toFixed(0)} CPU-µs/req p99 ${ms(g.p99)}`);
  }
  const med = (rs, k) => median(rs.map((r) => r[k]));
  const gwDesc = workersSupported ? `${cores} gateway worker(s)` : 'one gateway thread';
  ratio('gateway vs min-proxy, req/s', med(vs.gw, 'rps') / med(vs.proxy, 'rps'), '>=', 1.3,
    `${n(med(vs.gw, 'rps'))} vs ${n(med(vs.proxy, 'rps'))} req/s, ${gwDesc}, ${connections} connections, ${failed([...vs.gw, ...vs.proxy])} failed requests`);
  ratio('gateway vs min-proxy, CPU-µs per request', med(vs.gw, 'cpuUs') / med(vs.proxy, 'cpuUs'), '<=', 0.75,
    `${med(vs.gw, 'cpuUs').toFixed(0)} vs ${med(vs.proxy, 'cpuUs').toFixed(0)} µs (utime+stime from /proc, whole serve process)`);

  // 3. N workers vs 1, and the RPS window across workers.
  if (!workersSupported) {
    console.log(`  gateway ${cores} workers vs 1 worker, req/s: skipped — gateway.workers not in this build`);
  } else {
    const one = await startSeeded(configFor({ workers: 1 }), fewEndpoints);
    running.push(one);
    await alone(one, () => viaGateway(one, 1));
    // min-proxy runs in these rounds too: one gateway worker against it is thread for thread.
    const byWorkers = { n: [], one: [], proxy: [] };
    for (let r = 0; r < rounds; r++) {
      const runOne = async () => byWorkers.one.push(await alone(one, () => measured(one.pid, () => viaGateway(one, seconds))));
      const runN = async () => byWorkers.n.push(await alone(few, () => measured(few.pid, () => viaGateway(few, seconds))));
      const runProxy = async () => byWorkers.proxy.push(await alone(null, () => measured(proxy.process.pid, () => viaProxy(seconds))));
      const order = [runOne, runN, runProxy];
      for (let i = 0; i < order.length; i++) await order[(i + r) % order.length]();
      const [a, b, p] = [byWorkers.one.at(-1), byWorkers.n.at(-1), byWorkers.proxy.at(-1)];
      console.log(`round ${r + 1}: 1 worker ${n(a.rps)} req/s ${a.cpuUs.toFixed(0)} CPU-µs/req | ${cores} workers ${n(b.rps)} req/s ${b.cpuUs.toFixed(0)} CPU-µs/req`
        + ` | min-proxy ${n(p.rps)} req/s ${p.cpuUs.toFixed(0)} CPU-µs/req`);
    }
    ratio('gateway with 1 worker vs min-proxy (one thread each), req/s', med(byWorkers.one, 'rps') / med(byWorkers.proxy, 'rps'), '>=', 1.3,
      `${n(med(byWorkers.one, 'rps'))} vs ${n(med(byWorkers.proxy, 'rps'))} req/s, ${connections} connections`);
    ratio('gateway with 1 worker vs min-proxy (one thread each), CPU-µs per request', med(byWorkers.one, 'cpuUs') / med(byWorkers.proxy, 'cpuUs'), '<=', 0.75,
      `${med(byWorkers.one, 'cpuUs').toFixed(0)} vs ${med(byWorkers.proxy, 'cpuUs').toFixed(0)} µs (utime+stime from /proc, whole processes)`);
    ratio(`gateway ${cores} workers vs 1 worker, req/s`, med(byWorkers.n, 'rps') / med(byWorkers.one, 'rps'), '>=', 1.2,
      `${n(med(byWorkers.n, 'rps'))} vs ${n(med(byWorkers.one, 'rps'))} req/s, p99 ${ms(med(byWorkers.n, 'p99'))} vs ${ms(med(byWorkers.one, 'p99'))}; `
      + `${cores} cores shared with the load generator and the upstream`);
    running.splice(running.indexOf(one), 1);
    await one.serve.stop();
    rmSync(one.dataDir, { recursive: true, force: true });
  }

  const window = await alone(few, () => admittedPerSecond(few));
  const inner = window.perSecond.slice(1, -1);
  const most = Math.max(...inner);
  ratio(`RPS window across ${workersSupported ? `${cores} workers` : 'one gateway thread (gateway.workers not in this build)'}, max admitted per second / limit`,
    most / rpsLimit, '=', 1, `max ${most}, min ${Math.min(...inner)} admitted per second over ${inner.length} whole seconds, limit ${rpsLimit}; `
    + `${n(window.refused)} refused with 429, ${window.other} other answers, ${window.connections} connections`);
} finally {
  for (const r of running) {
    await r.serve.stop().catch(() => {});
    rmSync(r.dataDir, { recursive: true, force: true });
  }
  upstream.process.kill();
  proxy.process.kill();
}

/**
 * Oversubscribed load on the rps-limited endpoint over many connections: 200s counted by the
 * second they arrive in. The window fills in the first milliseconds of each second, so an
 * answer never straddles a second boundary by the time it takes to arrive.
 */
async function admittedPerSecond(inst) {
  const conns = 64;
  const pool = new Pool(new URL(inst.serve.gateway).origin, { connections: conns, pipelining: 1 });
  const start = Math.floor(Date.now() / 1000) + 1;
  const end = start + rpsSeconds + 2;
  const perSecond = new Map();
  let refused = 0;
  let other = 0;
  await Promise.all(Array.from({ length: conns }, async () => {
    while (Date.now() < end * 1000) {
      try {
        const res = await pool.request({ path: `/${inst.rpsUuid}`, method: 'POST', body: CALL, headers: headers() });
        await res.body.dump();
        const second = Math.floor(Date.now() / 1000);
        if (res.statusCode === 200) perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
        else if (res.statusCode === 429) refused++;
        else other++;
      } catch {
        other++;
      }
    }
  }));
  await pool.close();
  const seconds = [];
  for (let s = start; s < end; s++) seconds.push(perSecond.get(s) ?? 0);
  return { perSecond: seconds, refused, other, connections: conns };
}

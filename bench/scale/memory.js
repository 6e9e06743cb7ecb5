// Start-up time and RSS of `rpcctl serve` (gateway.workers 2) at 100k endpoints vs 10, after start-up
// and after a load, for one or more builds (ARMS=name=/path/to/checkout,... default: this one),
// interleaved rounds, medians. Seeded data dirs are kept in BENCH_MEMORY_DIR between runs.
// Run: node bench/scale/memory.js (after npm run build).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
const repo = new URL('../..', import.meta.url).pathname;
const { load, startFixture, median } = await import(join(repo, 'bench/load.js'));
const arms = (process.env.ARMS ?? `this=${repo}`).split(',').map((s) => s.split('='));
const rounds = Number(process.env.ROUNDS ?? 5);
const MANY = Number(process.env.MANY ?? 100_000);
const upstream = await startFixture('upstream.js');
const plans = [{ id: 1, slug: 'bench', name: 'Bench', included_credits: 1e12, rps_limit: 1_000_000_000, endpoints_limit: 1_000_000 }];
const config = {
  api: { host: '127.0.0.1', port: 0 }, gateway: { host: '127.0.0.1', port: 0, probe_interval_ms: 3_600_000, workers: 2 },
  limits: { api_rps_per_ip: 1_000_000, api_rpm_per_account: 1_000_000 },
  networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [upstream.url] }] }], plans,
};
const { parseConfig } = await import(join(repo, 'dist/config/index.js'));
const { Store, createAccount } = await import(join(repo, 'dist/store/index.js'));
async function seed(dir, count) {
  if (existsSync(join(dir, 'uuids.json'))) return JSON.parse(readFileSync(join(dir, 'uuids.json'), 'utf8'));
  mkdirSync(dir, { recursive: true });
  const store = await Store.open({ dataDir: dir, config: parseConfig(config), syncCatalog: 'always' });
  const accounts = [];
  for (let i = 0; i < Math.ceil(count / 100); i++) accounts.push((await createAccount(store, { planId: 1 })).id);
  const now = new Date().toISOString();
  const uuids = [];
  for (let at = 0; at < count; at += 1000) {
    const rows = [];
    for (let i = at; i < Math.min(count, at + 1000); i++) {
      const uuid = randomUUID(); if (uuids.length < 50) uuids.push(uuid);
      rows.push({ uuid, account_id: accounts[Math.floor(i / 100)], name: 'bench', status: 'active', network_environment_id: 1,
        allowed_ips: i % 50 === 0 ? '["10.0.0.1","127.0.0.1"]' : '[]', created_at: now, updated_at: now, version: null, block_height: null });
    }
    await store.db.transaction().execute((trx) => trx.insertInto('endpoints').values(rows).execute());
  }
  await store.close();
  writeFileSync(join(dir, 'uuids.json'), JSON.stringify(uuids));
  return uuids;
}
const rss = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
async function serve(root, dir) {
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  const t0 = performance.now();
  const child = spawn(process.execPath, [join(root, 'bin/rpcctl.js'), 'serve', '--config', join(dir, 'config.json'), '--data-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const gw = await new Promise((ok, fail) => {
    const on = (d) => { out += d; const g = /gateway\s+(http:\/\/\S+)/.exec(out); if (g && /ready/.test(out)) { child.stdout.off('data', on); child.stderr.off('data', on); child.stdout.resume(); child.stderr.resume(); ok(g[1]); } };
    child.stdout.on('data', on); child.stderr.on('data', on);
    child.once('exit', (c) => fail(new Error(`exit ${c}: ${out}`)));
  });
  return { gw, child, ms: performance.now() - t0 };
}
const base = process.env.BENCH_MEMORY_DIR ?? join(tmpdir(), 'rpcctl-bench-memory');
const dirs = { many: join(base, `many-${MANY}`), few: join(base, 'few') };
const uu = { many: await seed(dirs.many, MANY), few: await seed(dirs.few, 10) };
const res = {};
for (let r = 0; r < rounds; r++) {
  const order = [];
  for (const [name, root] of arms) for (const size of ['many', 'few']) order.push([name, root, size]);
  if (r % 2) order.reverse();
  for (const [name, root, size] of order) {
    const s = await serve(root, dirs[size]);
    await new Promise((ok) => setTimeout(ok, 1000));
    const rssStart = rss(s.child.pid);
    let i = 0;
    const l = await load({ url: s.gw, path: () => `/${uu[size][i++ % uu[size].length]}`, method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}', headers: () => ({ 'content-type': 'application/json' }), connections: 16, seconds: 2 });
    await new Promise((ok) => setTimeout(ok, 500));
    const rssLoad = rss(s.child.pid);
    s.child.kill('SIGTERM'); await new Promise((ok) => s.child.once('exit', ok));
    const k = `${name}/${size}`;
    (res[k] ??= []).push({ ms: s.ms, rssStart, rssLoad, req: l.requests, err: l.errors + l.unexpected });
    console.log(`round ${r} ${k}: start ${s.ms.toFixed(0)} ms, RSS ${rssStart.toFixed(0)} → ${rssLoad.toFixed(0)} MiB after ${l.requests} req (${l.errors} err)`);
  }
}
const med = (k, f) => median(res[k].map((x) => x[f]));
for (const [name] of arms) {
  const m = (f) => med(`${name}/many`, f), f_ = (f) => med(`${name}/few`, f);
  console.log(`${name}: start-up ${m('ms').toFixed(0)} vs ${f_('ms').toFixed(0)} ms (${(m('ms') / f_('ms')).toFixed(2)}x); RSS after start ${m('rssStart').toFixed(0)} vs ${f_('rssStart').toFixed(0)} MiB (+${(m('rssStart') - f_('rssStart')).toFixed(0)} MiB per ${MANY}, ${((m('rssStart') - f_('rssStart')) * 1048576 / MANY).toFixed(0)} B/endpoint); after load ${m('rssLoad').toFixed(0)} vs ${f_('rssLoad').toFixed(0)} MiB (+${(m('rssLoad') - f_('rssLoad')).toFixed(0)})`);
}
upstream.process.kill();

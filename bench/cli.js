// bench:cli — start-up of rpcctl commands against a bare `node -e 0`, interleaved so all see the
// same machine noise. Medians of wall time per process.
//   --help / --version      definitions only
//   profile list            reads local config only          (aim: within 2x node -e 0)
//   account                 one signed Public API call on loopback (aim: within 3x)
//   rpc <uuid> ...          no Public API call at all (a UUID needs no lookup)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './load.js';

const runs = Number(process.env.BENCH_RUNS ?? 30);
const bin = fileURLToPath(new URL('../bin/rpcctl.js', import.meta.url));

async function freePort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

// A service on loopback with one local account, as `rpcctl serve --dev` + `rpcctl init --local`.
const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-bench-cli-'));
const configDir = mkdtempSync(join(tmpdir(), 'rpcctl-bench-cli-cfg-'));
writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ api: { port: await freePort() }, gateway: { port: await freePort() } }));
const env = { ...process.env, NO_COLOR: '1', RPCCTL_DATA_DIR: dataDir, RPCCTL_CONFIG_DIR: configDir, PUBLIC_API_KEY: '', PUBLIC_API_SECRET: '', PUBLIC_API_BASE: '' };
const serve = spawn(process.execPath, [bin, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise((resolve, reject) => {
  let out = '';
  serve.stdout.on('data', (d) => { out += d; if (out.includes('is ready')) resolve(); });
  serve.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
});
const init = spawnSync(process.execPath, [bin, 'init', '--local'], { env, encoding: 'utf8' });
if (init.status !== 0) throw new Error(`init --local failed: ${init.stderr}`);

const cases = {
  'node -e 0': ['-e', '0'],
  'rpcctl --version': [bin, '--version'],
  'rpcctl --help': [bin, '--help'],
  'rpcctl profile list': [bin, 'profile', 'list'],
  'rpcctl account': [bin, 'account'],
};
const aims = { 'rpcctl profile list': 2, 'rpcctl account': 3 };

function time(args) {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', env });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

try {
  const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (const args of Object.values(cases)) time(args); // warm the file and compile caches
  for (let i = 0; i < runs; i++) for (const [name, args] of Object.entries(cases)) samples[name].push(time(args));

  const base = median(samples['node -e 0']);
  console.log(`node ${process.version}, ${runs} runs each, median wall time per process`);
  for (const [name, xs] of Object.entries(samples)) {
    const m = median(xs);
    const aim = aims[name];
    console.log(`  ${name.padEnd(22)} ${m.toFixed(1).padStart(7)} ms   ${(m / base).toFixed(2)}x${name === 'node -e 0' ? '' : `  (aim < ${aim ?? 3}x)`}`);
  }
} finally {
  serve.kill('SIGINT');
}

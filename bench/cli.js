// bench:cli — start-up of `rpcctl --help` and `rpcctl --version` against a bare `node -e 0`,
// interleaved so all three see the same machine noise. Medians of wall time per process.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median } from './load.js';

const runs = Number(process.env.BENCH_RUNS ?? 30);
const bin = fileURLToPath(new URL('../bin/rpcctl.js', import.meta.url));
const cases = {
  'node -e 0': ['-e', '0'],
  'rpcctl --version': [bin, '--version'],
  'rpcctl --help': [bin, '--help'],
};

function time(args) {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (const args of Object.values(cases)) time(args); // warm the file cache
for (let i = 0; i < runs; i++) for (const [name, args] of Object.entries(cases)) samples[name].push(time(args));

const base = median(samples['node -e 0']);
console.log(`node ${process.version}, ${runs} runs each, median wall time per process`);
for (const [name, xs] of Object.entries(samples)) {
  const m = median(xs);
  console.log(`  ${name.padEnd(18)} ${m.toFixed(1).padStart(7)} ms   ${(m / base).toFixed(2)}x${name === 'node -e 0' ? '' : '  (aim < 3x)'}`);
}

// bench:scale — every part in bench/scale/ (gateway.js, usage.js, feeds.js, ...) in its own
// process, one after another (they would skew each other's figures), their output streamed,
// then one summary of every ratio line. `node bench/scale.js gateway usage` runs only those.
// BENCH_SCALE_SMALL=1 is passed on: data sets 100x smaller, for a quick check.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('./scale/', import.meta.url));
const only = process.argv.slice(2).map((a) => a.replace(/\.js$/, ''));
const parts = readdirSync(dir).filter((f) => f.endsWith('.js') && (only.length === 0 || only.includes(f.slice(0, -3)))).sort();
/** `  <label>: <ratio>x (aim <op> <value>) ok|MISSED — <details>`, or `  <label>: skipped — <why>`. */
const RATIO_LINE = /^ {2}\S.*?: (?:\d+(?:\.\d+)?x \(aim [^)]*\) (?:ok|MISSED)|skipped)\b/;

const summary = [];
let failures = 0;
for (const part of parts) {
  console.log(`\n== ${part} ==`);
  const t0 = performance.now();
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, [`${dir}${part}`], { stdio: ['ignore', 'pipe', 'inherit'] });
    let partial = '';
    child.stdout.on('data', (d) => {
      process.stdout.write(d);
      const lines = (partial + d).split('\n');
      partial = lines.pop();
      for (const line of lines) if (RATIO_LINE.test(line)) summary.push({ part, line });
    });
    child.on('close', (c, signal) => {
      if (partial && RATIO_LINE.test(partial)) summary.push({ part, line: partial });
      resolve(c ?? signal);
    });
  });
  const secs = ((performance.now() - t0) / 1000).toFixed(0);
  if (code !== 0) {
    failures++;
    summary.push({ part, line: `  ${part}: FAILED — exited with ${code} after ${secs} s (its ratios above, if any, are incomplete)` });
  } else {
    console.log(`(${part}: ${secs} s)`);
  }
}

console.log(`\n== summary${process.env.BENCH_SCALE_SMALL === '1' ? ' (BENCH_SCALE_SMALL=1: data sets 100x smaller, not the real figures)' : ''} ==`);
let current;
for (const { part, line } of summary) {
  if (part !== current) console.log(`${part}:`);
  current = part;
  console.log(line);
}
const missed = summary.filter((s) => / MISSED\b/.test(s.line)).length;
console.log(`\n${summary.length - failures} ratio lines, ${missed} missed, ${failures} part(s) failed`);
process.exitCode = failures > 0 ? 1 : 0;

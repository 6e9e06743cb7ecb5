// Starts `rpcctl serve` as its own process, as an operator would, and waits for its ready line.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const ownBin = new URL('../bin/rpcctl.js', import.meta.url).pathname;

/**
 * `opts.dataDir`: a data dir already filled (bench:scale seeds one first); else a fresh one.
 * `opts.bin`: another checkout's `bin/rpcctl.js` (its build), to compare two versions.
 */
export async function startServe(config, opts = {}) {
  const bin = opts.bin ?? ownBin;
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'rpcctl-bench-'));
  const started = performance.now();
  const configFile = join(dataDir, 'config.json');
  writeFileSync(configFile, JSON.stringify(config));
  // The checkout's pinned Node when it has one: an older Node running the bench would have
  // bin/rpcctl.js start it as a child of its own, and `child` (whose CPU the benches read)
  // would be a wrapper doing nothing.
  const pinned = join(dirname(bin), '..', 'node_modules', 'node', 'bin', 'node');
  const node = existsSync(pinned) ? pinned : process.execPath;
  const child = spawn(node, [bin, 'serve', '--config', configFile, '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const urls = await new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d;
      const api = /api\s+(http:\/\/\S+)/.exec(out);
      const gateway = /gateway\s+(http:\/\/\S+)/.exec(out);
      if (api && /ready/.test(out)) {
        // Its access log goes on: drained, not kept and searched (that cost the bench a core).
        child.stdout.off('data', onData);
        child.stderr.off('data', onData);
        child.stdout.resume();
        child.stderr.resume();
        resolve({ api: api[1], gateway: gateway?.[1], startupMs: performance.now() - started });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
  });
  const admin = (...args) => JSON.parse(execFileSync(node, [bin, 'admin', ...args, '--json', '--data-dir', dataDir, '--config', configFile], { encoding: 'utf8' }));
  return {
    ...urls, dataDir, admin, child,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

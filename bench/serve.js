// Starts `rpcctl serve` as its own process, as an operator would, and waits for its ready line.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;

export async function startServe(config) {
  const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-bench-'));
  const configFile = join(dataDir, 'config.json');
  writeFileSync(configFile, JSON.stringify(config));
  const child = spawn(process.execPath, [bin, 'serve', '--config', configFile, '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const urls = await new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d;
      const api = /api\s+(http:\/\/\S+)/.exec(out);
      const gateway = /gateway\s+(http:\/\/\S+)/.exec(out);
      if (api && /ready/.test(out)) resolve({ api: api[1], gateway: gateway?.[1] });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
  });
  const admin = (...args) => JSON.parse(execFileSync(process.execPath, [bin, 'admin', ...args, '--json', '--data-dir', dataDir, '--config', configFile], { encoding: 'utf8' }));
  return {
    ...urls, dataDir, admin, child,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

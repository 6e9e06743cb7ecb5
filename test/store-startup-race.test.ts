import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { testConfig } from './helpers/service.js';

const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const env = { NO_COLOR: '1', RPCCTL_MASTER_KEY: 'ab'.repeat(32) };

// The review started serve and three `admin accounts create` together on a fresh data dir:
// 9 of 26 trials failed (`database is locked`, a migration run twice). Each process must wait
// its turn; this runs the same race with real processes.
describe('start-up on a fresh data dir, several processes at once', () => {
  it('serve and three admin runs all succeed, trial after trial', async () => {
    for (let trial = 0; trial < 5; trial++) {
      const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-race-'));
      const configFile = join(dataDir, 'rpcctl.json');
      writeFileSync(configFile, JSON.stringify(testConfig()));
      const serve = execa(process.execPath, [bin, 'serve', '--config', configFile, '--data-dir', dataDir], { reject: false, all: true, env });
      let output = '';
      const ready = new Promise<void>((resolve, reject) => {
        serve.all!.on('data', (d: Buffer) => {
          output += d.toString();
          if (/api\s+http/.test(output)) resolve();
        });
        void serve.then((r) => reject(new Error(`serve exited (${r.exitCode}):\n${output}`)));
      });
      const admins = Array.from({ length: 3 }, () =>
        execa(process.execPath, [bin, 'admin', 'accounts', 'create', '--plan', 'free', '--json', '--data-dir', dataDir], { reject: false, env }));
      const results = await Promise.all(admins);
      for (const r of results) expect(r.exitCode, `trial ${trial}: ${r.stderr}`).toBe(0);
      const ids = results.map((r) => (JSON.parse(r.stdout) as { user_id: number }).user_id);
      expect(new Set(ids).size).toBe(3);
      await ready;
      // At once after the banner: the signal handlers are in place before it is printed.
      serve.kill('SIGINT');
      const done = await serve;
      expect(done.exitCode, `${done.signal} ${done.all}`).toBe(0);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

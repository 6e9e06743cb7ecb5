import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { cli } from './helpers/cli.js';
import { itUnless } from './helpers/skips.js';

/**
 * `rpcctl admin reload` sends SIGHUP, which ends most processes, to the pid in the data dir's
 * `serve.pid`. A pid file written by someone other than the process's owner (a data dir other
 * users can write) must not make admin signal that process.
 */
const victim = spawn('sleep', ['60'], { stdio: 'ignore' });
afterAll(() => {
  victim.kill();
});

const notRoot = process.getuid?.() !== 0 ? 'the test must run as root (it writes a file owned by another user)' : !existsSync('/proc/self') ? 'no /proc' : undefined;

describe('admin reload: the process serve.pid names', () => {
  itUnless(notRoot, 'is not signalled when another user wrote serve.pid', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-pidfile-'));
    const pidFile = join(dataDir, 'serve.pid');
    writeFileSync(pidFile, `${victim.pid}\n`);
    chownSync(pidFile, 65534, 65534);
    const r = await cli(['admin', 'reload', '--data-dir', dataDir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`names process ${victim.pid}, which another user runs: not signalling it`);
    expect(victim.exitCode).toBeNull();
    expect(victim.signalCode).toBeNull();
  });
});

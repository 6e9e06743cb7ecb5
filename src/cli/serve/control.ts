import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReloadOutcome } from '../../serve/service.js';

/**
 * How `rpcctl admin` reaches a `rpcctl serve` running on the same data dir: the process id in
 * `serve.pid` (admin sends it SIGHUP), and the last reload's outcome in `reload.json` (admin
 * waits for it). Files rather than a socket: admin already works from the data dir (as `admin
 * upstreams` reads the probe's state file there), and a signal is what systemd's `ExecReload=`
 * and `kill -HUP` send too, so all three reload alike.
 */
export const PID_FILE = 'serve.pid';
export const RELOAD_FILE = 'reload.json';

/** The last reload as `reload.json` holds it. */
export interface ReloadRecord {
  pid: number;
  /** Counts this process's reloads: admin waits for a higher one than it saw. */
  seq: number;
  at: string;
  ok: boolean;
  changed?: string[];
  reason?: string;
}

export function serveControl(dataDir: string): { write(): void; reloaded(outcome: ReloadOutcome): void; remove(): void } {
  let seq = 0;
  const pidFile = join(dataDir, PID_FILE);
  return {
    write: () => writeAtomic(pidFile, `${process.pid}\n`),
    reloaded(outcome) {
      const record: ReloadRecord = { pid: process.pid, seq: ++seq, at: new Date().toISOString(), ...outcome };
      try {
        writeAtomic(join(dataDir, RELOAD_FILE), `${JSON.stringify(record)}\n`);
      } catch { /* the outcome is logged already; admin then says it saw none */ }
    },
    remove() {
      // Only our own: another serve may have started on this data dir since.
      try {
        if (readFileSync(pidFile, 'utf8').trim() === String(process.pid)) rmSync(pidFile);
      } catch { /* gone already */ }
    },
  };
}

export function readReloadRecord(dataDir: string): ReloadRecord | undefined {
  try {
    return JSON.parse(readFileSync(join(dataDir, RELOAD_FILE), 'utf8')) as ReloadRecord;
  } catch {
    return undefined;
  }
}

function writeAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, file);
}

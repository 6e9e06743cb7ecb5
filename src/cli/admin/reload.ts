import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { defaultDataDir } from '../../config/index.js';
import { CliError, type CliIO } from '../io.js';
import { Output } from '../output.js';
import { PID_FILE, readReloadRecord, type ReloadRecord } from '../serve/control.js';
import type { AdminOptions } from './run.js';

/** How long a reload may take before admin gives up waiting for its outcome (a catalog sync on a busy store). */
const WAIT_MS = 60_000;

/**
 * `rpcctl admin reload`: SIGHUP to the `rpcctl serve` of this data dir (its `serve.pid`), then
 * its outcome from `reload.json`. A refusal exits 1 with the reason; the service keeps its
 * running config either way. On another machine, or for every instance of a fleet, send SIGHUP
 * (`systemctl reload rpcctl`, `kill -HUP`) to each.
 */
export async function reload(io: CliIO, opts: AdminOptions & { json?: boolean; color?: boolean }): Promise<void> {
  const dataDir = opts.dataDir ?? defaultDataDir(io.env);
  const pidFile = join(dataDir, PID_FILE);
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile, 'utf8').trim());
  } catch {
    throw new CliError(`no rpcctl serve is running on ${dataDir} (no ${PID_FILE}): start it, or pass its --data-dir`);
  }
  if (!Number.isSafeInteger(pid) || pid <= 0 || !alive(pid)) throw new CliError(`no rpcctl serve is running on ${dataDir} (${PID_FILE} names process ${pid}, which is gone)`);
  // SIGHUP ends most processes: one whose owner did not write serve.pid is not signalled (a
  // data dir others can write, or a file left by another user's serve whose pid was reused).
  if (!writtenByOwnerOf(pidFile, pid)) throw new CliError(`${PID_FILE} in ${dataDir} names process ${pid}, which another user runs: not signalling it (the data dir should be private to the service's user)`);
  const before = readReloadRecord(dataDir);
  const seen = before?.pid === pid ? before.seq : 0;
  process.kill(pid, 'SIGHUP');
  const until = Date.now() + WAIT_MS;
  let record: ReloadRecord | undefined;
  for (;;) {
    record = readReloadRecord(dataDir);
    if (record?.pid === pid && record.seq > seen) break;
    if (!alive(pid)) throw new CliError(`rpcctl serve (process ${pid}) ended before it reported the reload`);
    if (Date.now() > until) throw new CliError(`rpcctl serve (process ${pid}) was sent SIGHUP but reported no outcome within ${WAIT_MS / 1000} s: see its log`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const out = new Output(io, opts);
  if (out.json) {
    out.printJson(record);
  } else if (record.ok) {
    out.note(record.changed?.length ? `Reloaded the config of process ${pid}: ${record.changed.join(', ')}` : `Reloaded the config of process ${pid}: nothing changed`);
  }
  if (!record.ok) throw new CliError(`the config was not reloaded (process ${pid} keeps its running config): ${record.reason}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, as another user's process.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid file's owner runs the process (Linux, /proc); where there is no /proc, not checked. */
function writtenByOwnerOf(pidFile: string, pid: number): boolean {
  let runner: number;
  try {
    runner = statSync(`/proc/${pid}`).uid;
  } catch {
    return true;
  }
  return statSync(pidFile).uid === runner;
}

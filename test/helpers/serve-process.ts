import { execa, type ResultPromise } from 'execa';

const bin = new URL('../../bin/rpcctl.js', import.meta.url).pathname;

/** One real `rpcctl serve` process (the built bin), as an operator runs it. */
export interface ServeProcess {
  proc: ResultPromise;
  api: string;
  gateway: string;
  /** Its instance id (the owner written in `scanner_leases`). */
  id: string;
  /** Where its `/metrics` is read: the metrics listener when the banner names one, else the gateway's. */
  metrics: string;
  /** Everything it wrote to stdout and stderr so far. */
  out(): string;
  alive(): boolean;
}

export interface ServeProcessOptions {
  configFile: string;
  dataDir: string;
  database: string;
  redis: string;
  masterKey: string;
}

/**
 * Starts `rpcctl serve` on a shared PostgreSQL and Redis and resolves once its banner names both
 * listeners and its instance id; rejects with its output if it exits first.
 */
export function startServeProcess(o: ServeProcessOptions): Promise<ServeProcess> {
  const proc = execa(process.execPath, [bin, 'serve', '--config', o.configFile, '--data-dir', o.dataDir, '--database', o.database, '--redis', o.redis], {
    reject: false, all: true, env: { RPCCTL_MASTER_KEY: o.masterKey, RPCCTL_DATABASE_URL: '', RPCCTL_REDIS_URL: '' },
  });
  let out = '';
  return new Promise<ServeProcess>((resolve, reject) => {
    proc.all!.on('data', (d: Buffer) => {
      out += d.toString();
      const api = bannerValue(out, 'api');
      const gateway = bannerValue(out, 'gateway');
      const id = bannerValue(out, 'instance');
      if (!api || !gateway || !id) return;
      const metrics = bannerValue(out, 'metrics')?.replace(/\/metrics$/, '') ?? gateway;
      resolve({ proc, api, gateway, id, metrics, out: () => out, alive: () => proc.exitCode === null && proc.signalCode === null });
    });
    proc.once('exit', () => reject(new Error(`serve exited early:\n${out}`)));
  });
}

/**
 * A value of the ready banner: its own whole line (`  instance  <id>`), never a word in a log
 * line. Stdout (banner) and stderr (logs) arrive through two pipes, so a log written while the
 * service starts (a scanner taking its lease: "this instance scans it now") can come first;
 * matching `instance\s+(\S+)` anywhere took "scans" as the id. Up to the newline, so a banner
 * cut between two chunks is not read half.
 */
function bannerValue(out: string, name: string): string | undefined {
  return new RegExp(`^ {2}${name} +(\\S+)\\r?\\n`, 'm').exec(out)?.[1];
}

/** SIGKILL (no clean stop: nothing flushed, no lease handed over) and wait for the exit. */
export async function killServeProcess(p: ServeProcess): Promise<void> {
  p.proc.kill('SIGKILL');
  await p.proc.catch(() => {});
}

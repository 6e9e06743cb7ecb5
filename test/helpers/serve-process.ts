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
      const api = /\bapi\s+(http:\/\/\S+)/.exec(out)?.[1];
      const gateway = /\bgateway\s+(http:\/\/\S+)/.exec(out)?.[1];
      const id = /\binstance\s+(\S+)/.exec(out)?.[1];
      if (!api || !gateway || !id) return;
      const metrics = /\bmetrics\s+(http:\/\/\S+)/.exec(out)?.[1]?.replace(/\/metrics$/, '') ?? gateway;
      resolve({ proc, api, gateway, id, metrics, out: () => out, alive: () => proc.exitCode === null && proc.signalCode === null });
    });
    proc.once('exit', () => reject(new Error(`serve exited early:\n${out}`)));
  });
}

/** SIGKILL (no clean stop: nothing flushed, no lease handed over) and wait for the exit. */
export async function killServeProcess(p: ServeProcess): Promise<void> {
  p.proc.kill('SIGKILL');
  await p.proc.catch(() => {});
}

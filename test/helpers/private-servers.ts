import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Private servers for the failure tests: they get killed and restarted, so they must never be
 * the machine's shared PostgreSQL (5432) and Redis (6379). Spare ports, a temp dir each.
 */

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function which(bin: string): string | undefined {
  try {
    // Debian keeps the server binaries off PATH, under /usr/lib/postgresql/<version>/bin.
    return execFileSync('sh', ['-c', `command -v ${bin} || ls -d /usr/lib/postgresql/*/bin/${bin} 2>/dev/null | tail -1`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Why a private Redis cannot start here, or undefined when it can. */
export function privateRedisUnavailable(): string | undefined {
  return which('redis-server') ? undefined : 'redis-server is not installed (apt-get install redis-server)';
}

export interface PrivateRedis {
  url: string;
  port: number;
  /** SIGKILL: the outage a crash or a network cut looks like. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: no persistence). */
  start(): Promise<void>;
  /** SIGSTOP: connections stay open and nothing answers (a hung server, a long GC pause, a VM freeze). */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  stop(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'rpcctl-redis-'));
  let proc: ChildProcess | undefined;
  const start = async () => {
    proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
    await waitForPort(port);
  };
  const kill = async () => {
    const p = proc;
    proc = undefined;
    if (!p || p.exitCode !== null) return;
    await new Promise<void>((r) => { p.once('exit', () => r()); p.kill('SIGKILL'); });
  };
  await start();
  const signal = (sig: NodeJS.Signals) => {
    if (!proc || proc.exitCode !== null) throw new Error('the private Redis is not running');
    proc.kill(sig);
  };
  return {
    url: `redis://127.0.0.1:${port}`, port, kill, start,
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Why a private PostgreSQL cannot start here, or undefined when it can. */
export function privatePostgresUnavailable(): string | undefined {
  if (!which('initdb') || !which('pg_ctl')) return 'initdb/pg_ctl are not installed (apt-get install postgresql)';
  return undefined;
}

export interface PrivatePostgres {
  url: string;
  port: number;
  /** `pg_ctl stop -m immediate`: the server goes away without a goodbye. */
  kill(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP to the postmaster and every backend: connections stay open and nothing answers (a hung server, a paused VM). */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  stop(): Promise<void>;
}

/** initdb + pg_ctl in a temp dir on a spare port; as root, the server runs as the postgres user. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'rpcctl-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const run = (args: string[]) => {
    args = [which(args[0]!) ?? args[0]!, ...args.slice(1)];
    const cmd = asRoot ? ['runuser', '-u', 'postgres', '--', ...args] : args;
    execFileSync(cmd[0]!, cmd.slice(1), { stdio: 'ignore', timeout: 60_000 });
  };
  if (asRoot) {
    chmodSync(dir, 0o755);
    const { uid, gid } = postgresIds();
    chownSync(dir, uid, gid);
  }
  run(['initdb', '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const start = async () => {
    run(['pg_ctl', '-D', data, '-l', join(dir, 'log'), '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']);
  };
  const kill = async () => {
    if (existsSync(join(data, 'postmaster.pid'))) run(['pg_ctl', '-D', data, '-m', 'immediate', '-w', 'stop']);
  };
  await start();
  const signal = (sig: NodeJS.Signals) => {
    const pidFile = join(data, 'postmaster.pid');
    if (!existsSync(pidFile)) throw new Error('the private PostgreSQL is not running');
    const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    // A stopped postmaster forks no new backend, so its children now are all there is to stop.
    for (const pid of [postmaster, ...childrenOf(postmaster)]) process.kill(pid, sig);
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, kill, start,
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    async stop() {
      try { signal('SIGCONT'); } catch { /* not running */ }
      await kill().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) => readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/)).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function postgresIds(): { uid: number; gid: number } {
  const [uid, gid] = execFileSync('sh', ['-c', 'id -u postgres; id -g postgres'], { encoding: 'utf8' }).trim().split('\n').map(Number);
  return { uid: uid!, gid: gid! };
}

async function waitForPort(port: number, ms = 10_000): Promise<void> {
  const { connect } = await import('node:net');
  const until = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nothing listens on 127.0.0.1:${port} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

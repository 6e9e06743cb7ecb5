import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { createServer, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RpcctlError } from '../../util/errors.js';

/**
 * The gateway port, claimed for one service. The workers bind with SO_REUSEPORT so the kernel
 * spreads connections between them, but that option lets ANY process of the same user join the
 * port and take its share of the connections. Two things keep a second service out:
 *
 * - an exclusive bind (no SO_REUSEPORT) on the address before the workers start: on Linux it
 *   fails on a port held by anything, reusePort listeners of a running gateway included;
 * - a lock per port, held as long as the service runs, so that a second service cannot slip in
 *   between that probe and the workers' binds (nor while a worker is being started again).
 *   On Linux it is an abstract unix socket, `\0rpcctl-gateway:<port>`: no file to go stale,
 *   the kernel frees the name when the process dies, however it dies. Elsewhere, a lock file
 *   in the temp dir holding the pid, taken over when that pid is gone.
 *
 * The lock is per port, not per address: a gateway on 0.0.0.0:P would otherwise share P with
 * one on 127.0.0.1:P, which the kernel allows for reusePort sockets of one user.
 */
export interface PortClaim {
  readonly port: number;
  /** Resolves once another process (or this one, starting again) can claim the port. */
  release(): Promise<void>;
}

interface Lock { release(): Promise<void> }

/** `port` (not 0) is held by another process; `code` is EADDRINUSE as for a failed listen. */
export class PortTakenError extends RpcctlError {
  readonly code = 'EADDRINUSE';
  constructor(host: string, port: number, by: string) {
    super(`cannot listen on ${host}:${port}: the address is already in use (${by})`);
    this.name = 'PortTakenError';
  }
}

/** Claims `port` on `host` for this process: the lock, then the exclusive probe bind. */
export async function claimPort(port: number, host: string): Promise<PortClaim> {
  const lock = await lockPort(port);
  if (!lock) throw new PortTakenError(host, port, 'another rpcctl gateway holds it');
  try {
    const probe = await bind(port, host, false);
    await close(probe);
  } catch (err) {
    await lock.release();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new PortTakenError(host, port, 'another process listens on it');
    throw err;
  }
  return { port, release: lock.release };
}

/**
 * Port 0: a free port the kernel picks, held by a reusePort listener (returned, to close once
 * the workers hold the port too) and locked. A port whose lock another service holds (it is
 * between its probe and its binds) is given back and another one picked.
 */
export async function claimFreePort(host: string): Promise<{ claim: PortClaim; holder: NetServer }> {
  for (let attempt = 0; ; attempt++) {
    const holder = await bind(0, host, true);
    const port = (holder.address() as { port: number }).port;
    const lock = await lockPort(port);
    if (lock) return { claim: { port, release: lock.release }, holder };
    await close(holder);
    if (attempt >= 10) throw new PortTakenError(host, port, 'no free port could be locked');
  }
}

function bind(port: number, host: string, reusePort: boolean): Promise<NetServer> {
  const server = createServer();
  return new Promise<NetServer>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, exclusive: true, reusePort } as Parameters<NetServer['listen']>[0], () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

function close(server: NetServer): Promise<void> {
  return new Promise<void>((resolve) => server.close(() => resolve()));
}

/** The lock for `port`, or undefined when another process holds it. */
async function lockPort(port: number): Promise<Lock | undefined> {
  return process.platform === 'linux' ? lockAbstractSocket(port) : lockFile(port);
}

async function lockAbstractSocket(port: number): Promise<Lock | undefined> {
  const server = createServer((socket) => socket.destroy());
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ path: `\0rpcctl-gateway:${port}`, exclusive: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') return undefined;
    throw err;
  }
  // Held for the process's life, but never the reason it stays alive.
  server.unref();
  return { release: () => close(server) };
}

function lockFile(port: number): Lock | undefined {
  const file = join(tmpdir(), `rpcctl-gateway-${port}.lock`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      const unlink = () => {
        process.off('exit', unlink);
        try { unlinkSync(file); } catch { /* already gone */ }
      };
      // A crash that skips stop() still leaves a pid that is gone: the next start takes over.
      process.on('exit', unlink);
      return { release: async () => unlink() };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (holderAlive(file)) return undefined;
      try { unlinkSync(file); } catch { /* another process took it over first */ }
    }
  }
  return undefined;
}

function holderAlive(file: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

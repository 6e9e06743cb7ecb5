import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Builds dist/ once before any test runs. Two kinds of test code run the build rather than the
 * sources: the gateway's worker threads (a worker thread loads plain JavaScript; the sources'
 * `.js` specifiers do not resolve to `.ts` files there without a loader hook) and every test that
 * spawns `bin/rpcctl.js`. Without this, a test after a change to that code silently ran the
 * previous build. Loading the sources in workers through Node's type stripping would cover the
 * workers only, and would need a resolve hook for the specifiers; one build (seconds) covers both.
 *
 * Then shuts the contributor's own setting out (see `isolate`).
 */
export default function setup(): () => void {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  // The package's exports do not include its bin, so by path.
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  return isolate(root);
}

/** What the CLI and `serve` read from the environment: a contributor's values must not reach a test. */
export const USER_SETTINGS = [
  'PUBLIC_API_BASE', 'PUBLIC_API_KEY', 'PUBLIC_API_SECRET', 'RPCCTL_WEBHOOK_SECRET', 'RPCCTL_CONFIG_DIR', 'RPCCTL_DATA_DIR',
  'RPCCTL_DATABASE_URL', 'RPCCTL_REDIS_URL', 'RPCCTL_MASTER_KEY', 'RPCCTL_GATEWAY_URL', 'RPCCTL_LOG_LEVEL', 'RPCCTL_LOG_FORMAT',
  'RPCCTL_DEBUG', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME',
];

/**
 * The suite runs where a contributor works: after `npm link` (an `rpcctl` on PATH, maybe an older
 * build), with a profile in HOME, a service of their own running. The test processes (forked after
 * this) inherit an empty HOME, none of the settings above, and an `rpcctl` first on PATH that is
 * this checkout's. Returns the teardown.
 */
function isolate(root: string): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'rpcctl-test-env-'));
  const home = join(dir, 'home');
  const bin = join(dir, 'bin');
  mkdirSync(home);
  mkdirSync(bin);
  writeFileSync(join(bin, 'rpcctl'), `#!/bin/sh\nexec "${process.execPath}" "${join(root, 'bin', 'rpcctl.js')}" "$@"\n`, { mode: 0o755 });
  for (const name of USER_SETTINGS) delete process.env[name];
  process.env.HOME = home;
  process.env.PATH = `${bin}:${process.env.PATH ?? ''}`;
  return () => rmSync(dir, { recursive: true, force: true });
}

import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Builds dist/ once before any test runs. Two kinds of test code run the build rather than the
 * sources: the gateway's worker threads (a worker thread loads plain JavaScript; the sources'
 * `.js` specifiers do not resolve to `.ts` files there without a loader hook) and every test that
 * spawns `bin/rpcctl.js`. Without this, a test after a change to that code silently ran the
 * previous build. Loading the sources in workers through Node's type stripping would cover the
 * workers only, and would need a resolve hook for the specifiers; one build (seconds) covers both.
 */
export default function setup(): void {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  // The package's exports do not include its bin, so by path.
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
}

#!/usr/bin/env node
// Before anything else loads: on an older Node the first failure would be an import of
// node:sqlite, which says nothing about what to do.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 22)) {
  // Linked from a clone (`npm link`), the repo's pinned Node sits beside us: use it, so
  // `rpcctl` on PATH works even where the system Node is older.
  const { existsSync, realpathSync } = await import('node:fs');
  const { fileURLToPath } = await import('node:url');
  const self = realpathSync(fileURLToPath(import.meta.url));
  const pinned = fileURLToPath(new URL('../node_modules/node/bin/node', `file://${self}`));
  if (!existsSync(pinned)) {
    process.stderr.write(`rpcctl needs Node.js >= 22.22 (this is ${process.version}).\n`
      + 'Install a newer Node, or in a clone of the repo run it as `npx rpcctl ...` (the repo pins Node 24).\n');
    process.exit(1);
  }
  const { spawn } = await import('node:child_process');
  const child = spawn(pinned, [self, ...process.argv.slice(2)], { stdio: 'inherit' });
  // Ctrl-C reaches the child from the terminal itself; other signals are passed on.
  process.on('SIGINT', () => {});
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) process.kill(process.pid, signal === 'SIGINT' ? 'SIGTERM' : signal);
    process.exit(code ?? 1);
  });
} else {
  // node:sqlite is stable in use but still flagged experimental on some Node lines; the warning
  // says nothing a user can act on.
  const emitWarning = process.emitWarning;
  process.emitWarning = function (warning, ...rest) {
    const text = typeof warning === 'string' ? warning : warning?.message ?? '';
    if (text.includes('SQLite')) return;
    return emitWarning.call(process, warning, ...rest);
  };
  // V8's compiled code for our modules and dependencies, cached on disk across runs: a
  // command line is started thousands of times, and start-up is most of a short command.
  // (process.getBuiltinModule, not import(): the ESM facade of a built-in runs its lazy getters.)
  process.getBuiltinModule('node:module').enableCompileCache?.();
  await import('../dist/cli/main.js');
}

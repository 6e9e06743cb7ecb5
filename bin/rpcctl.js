#!/usr/bin/env node
// Before anything else loads: on an older Node the first failure would be an import of
// node:sqlite, which says nothing about what to do.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 22)) {
  process.stderr.write(`rpcctl needs Node.js >= 22.22 (this is ${process.version}).\n`
    + 'Install a newer Node, or in a clone of the repo run it as `npx rpcctl ...` (the repo pins Node 24).\n');
  process.exit(1);
}
// node:sqlite is stable in use but still flagged experimental on some Node lines; the warning
// says nothing a user can act on.
const emitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  const text = typeof warning === 'string' ? warning : warning?.message ?? '';
  if (text.includes('SQLite')) return;
  return emitWarning.call(process, warning, ...rest);
};
await import('../dist/cli/main.js');

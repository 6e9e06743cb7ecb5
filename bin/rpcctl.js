#!/usr/bin/env node
// node:sqlite is stable in use but still flagged experimental on some Node lines; the warning
// says nothing a user can act on.
const emitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  const text = typeof warning === 'string' ? warning : warning?.message ?? '';
  if (text.includes('SQLite')) return;
  return emitWarning.call(process, warning, ...rest);
};
await import('../dist/cli/main.js');

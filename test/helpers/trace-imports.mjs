// --import hook for start-up tests: writes every module URL the process loads to
// $RPCCTL_TRACE_IMPORTS when it exits.
import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';

const loaded = new Set();
registerHooks({
  load(url, context, nextLoad) {
    loaded.add(url);
    return nextLoad(url, context);
  },
});
process.on('exit', () => writeFileSync(process.env.RPCCTL_TRACE_IMPORTS, [...loaded].join('\n')));

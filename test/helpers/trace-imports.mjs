// --import hook for start-up tests: writes every module URL the process loads to
// $RPCCTL_TRACE_IMPORTS when it exits, then Node's own internal modules as `internal:NAME`.
// (Built-ins through process.getBuiltinModule: an ESM import of one would load more of them.)
const { registerHooks } = process.getBuiltinModule('node:module');
const { writeFileSync } = process.getBuiltinModule('node:fs');

const loaded = new Set();
registerHooks({
  load(url, context, nextLoad) {
    loaded.add(url);
    return nextLoad(url, context);
  },
});
process.on('exit', () => {
  const internal = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => `internal:${m.slice('NativeModule '.length)}`);
  writeFileSync(process.env.RPCCTL_TRACE_IMPORTS, [...loaded, ...internal].join('\n'));
});

// What the gateway knows of Bitcoin Core's JSON-RPC (and its forks').

import { singleRequestProbe, type CallClass, type MethodClasses } from '../gateway.js';

/** Calls that send something: never sent twice at once (a hedge). */
const SENDS = new Set(['sendrawtransaction', 'submitblock', 'submitpackage']);
/** Reads by block or transaction hash: any node that has it answers the same, lagging or not. */
const BY_HASH = new Set(['getblock', 'getblockheader', 'getblockstats']);

const HEAD: CallClass = { needsHead: true, idempotent: true, retry: true };
const ANY_HEAD: CallClass = { needsHead: false, idempotent: true, retry: true };
const SEND: CallClass = { needsHead: true, idempotent: false, retry: true };

export const utxoMethods: MethodClasses = {
  classOf: (method) => (SENDS.has(method) ? SEND : BY_HASH.has(method) ? ANY_HEAD : HEAD),
  nullMayLag: () => false,
  isStandard: () => false,
  rangeQuery: undefined,
};

/** Version and block count of each upstream in one batch. */
export const utxoProbe = singleRequestProbe({
  method: 'POST', path: '', contentType: 'application/json',
  body: JSON.stringify([
    { jsonrpc: '1.0', id: 1, method: 'getnetworkinfo', params: [] },
    { jsonrpc: '1.0', id: 2, method: 'getblockcount', params: [] },
  ]),
}, (text) => {
  const answers = JSON.parse(text) as Array<{ id: number; result?: { subversion?: string } | number }>;
  if (!Array.isArray(answers)) throw new Error('upstream did not answer the batch with an array');
  const info = answers.find((a) => a.id === 1)?.result;
  const height = answers.find((a) => a.id === 2)?.result;
  return { version: typeof info === 'object' ? info.subversion ?? null : null, head: typeof height === 'number' ? height : undefined };
});

import { evmContractToken } from '../evm/index.js';
import type { ChainFamily } from '../family.js';
import { parseUtxoAddress } from './address.js';
import { UtxoChain } from './chain.js';
import { bitcoinCredits } from './credits.js';
import { parseUtxoXpub, utxoAddressAt, utxoKeyFits } from './derive.js';
import { bitcoinAddressFormat } from './formats.js';
import { KeyMisfitError } from '../xpub.js';

/**
 * Bitcoin Core JSON-RPC and its forks (Litecoin, Dogecoin): per-environment address prefixes,
 * no tokens, orders derived from a zpub/ypub/xpub (or their test-network forms).
 */
export const utxo: ChainFamily = {
  name: 'utxo',
  parseAddress: (env, input) => parseUtxoAddress(env.addressFormat!, input),
  scanner: (upstreams, timeoutMs) => new UtxoChain(upstreams, timeoutMs),
  gateway: {
    transport: 'rpc', rpcErrorsAre500: true, websocket: false,
    health: {
      method: 'POST', path: '', contentType: 'application/json',
      body: JSON.stringify([
        { jsonrpc: '1.0', id: 1, method: 'getnetworkinfo', params: [] },
        { jsonrpc: '1.0', id: 2, method: 'getblockcount', params: [] },
      ]),
      read: (text) => {
        const answers = JSON.parse(text) as Array<{ id: number; result?: { subversion?: string } | number }>;
        if (!Array.isArray(answers)) throw new Error('upstream did not answer the batch with an array');
        const info = answers.find((a) => a.id === 1)?.result;
        const height = answers.find((a) => a.id === 2)?.result;
        return { version: typeof info === 'object' ? info.subversion ?? null : null, blockHeight: typeof height === 'number' ? height : null };
      },
    },
  },
  credits: {
    defaults: () => ({ default: bitcoinCredits.default, methods: { ...bitcoinCredits.methods } }),
    routes: undefined,
    block: { method: 'getblock' },
  },
  config: { tokens: undefined, addressFormat: bitcoinAddressFormat },
  payments: {
    // Satoshis; Litecoin and Dogecoin count in 8 decimals too.
    native: { symbol: 'BTC', decimals: 8 },
    amlChain: 'bitcoin',
    // Six confirmations: the customary point past which a Bitcoin reorg is not expected.
    finalityDepth: 6,
    // Config lists no tokens here; kept as the reading it always had.
    contractToken: evmContractToken,
    derivation: {
      checkKey: (xpub) => void parseUtxoXpub(xpub),
      deriver: (xpub, env) => {
        const x = parseUtxoXpub(xpub);
        const misfit = utxoKeyFits(x, env);
        if (misfit) throw new KeyMisfitError(misfit);
        return (i) => utxoAddressAt(x, env.addressFormat!, i);
      },
      // Shown on the first network of the catalog the key fits (by its prefixes).
      firstAddress: (xpub, envs, identify) => {
        const x = parseUtxoXpub(xpub);
        const env = envs.find((e) => e.addressFormat && utxoKeyFits(x, e) === undefined);
        const format = env?.addressFormat ?? bitcoinAddressFormat(x.testnet ? 'testnet' : 'mainnet')!;
        return { first_address: utxoAddressAt(x, format, 0), network: env ? identify(env) : x.testnet ? 'bitcoin-testnet' : 'bitcoin' };
      },
    },
  },
};

import type { Environment } from '../store/index.js';
import { EvmChain } from './evm-chain.js';
import type { ChainAdapter } from './scanner.js';
import { StellarChain } from './stellar-chain.js';
import { TronChain } from './tron/chain.js';
import { UtxoChain } from './utxo/chain.js';

/** The chain adapter of an environment's family (the scanners' and the payments' unconfirmed-block look). */
export function chainFor(env: Environment): ChainAdapter {
  switch (env.network.family) {
    case 'stellar': return new StellarChain(env.upstreams);
    case 'utxo': return new UtxoChain(env.upstreams);
    case 'tron': return new TronChain(env.upstreams);
    default: return new EvmChain(env.upstreams);
  }
}

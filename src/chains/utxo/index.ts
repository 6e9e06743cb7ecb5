import { evmContractToken } from '../evm/index.js';
import type { ChainFamily } from '../family.js';
import { utxoTraits } from './traits.js';
import { parseUtxoAddress } from './address.js';
import { UtxoChain } from './chain.js';
import { bareUtxoKey, parseUtxoXpub, utxoAddressAt, utxoKeyFits } from './derive.js';
import { bitcoinAddressFormat } from './formats.js';
import { KeyMisfitError } from '../xpub.js';
import { bip21Uri } from './uri.js';
import { utxoPayouts } from './payout.js';

/**
 * Bitcoin Core JSON-RPC and its forks (Litecoin, Dogecoin): per-environment address prefixes,
 * no tokens, orders derived from a zpub/ypub/xpub (or their test-network forms).
 */
export const utxo: ChainFamily = {
  ...utxoTraits,
  parseAddress: (env, input) => parseUtxoAddress(env.addressFormat!, input),
  scanner: (upstreams, timeoutMs) => new UtxoChain(upstreams, timeoutMs),
  payments: {
    ...utxoTraits.payments,
    // Config lists no tokens here; kept as the reading it always had.
    contractToken: evmContractToken,
    derivation: {
      checkKey: (xpub) => void parseUtxoXpub(xpub),
      keyIdentity: bareUtxoKey,
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
    paymentUri: bip21Uri,
    reference: undefined,
  },
  payouts: utxoPayouts,
};

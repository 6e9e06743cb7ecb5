import type { Environment } from '../store/index.js';
import type { ParsedAddress } from '../chains/address.js';
import { parseEvmAddress } from '../chains/evm/address.js';
import { parseStellarAddress } from '../chains/stellar/address.js';
import { parseTronAddress } from '../chains/tron/address.js';
import { parseUtxoAddress } from '../chains/utxo/address.js';

/** An address given for a watch on `env`, validated by the environment's family. */
export function parseAddress(env: Environment, input: string): ParsedAddress {
  switch (env.network.family) {
    case 'stellar': return parseStellarAddress(input);
    case 'utxo': return parseUtxoAddress(env.addressFormat!, input);
    case 'tron': return parseTronAddress(input);
    default: return parseEvmAddress(input);
  }
}

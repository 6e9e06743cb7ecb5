import type { ChainFamily } from '../family.js';
import { solanaTraits } from './traits.js';
import { parseSolanaAddress } from './address.js';
import { SolanaChain } from './chain.js';
import { solanaReference } from './reference.js';
import { solanaPayUri } from './uri.js';

/**
 * Solana: JSON-RPC nodes, base58 ed25519 addresses, SPL tokens by mint (a wallet's tokens sit in
 * its token accounts), orders paid to the merchant's one wallet and told apart by a Solana Pay reference (ed25519 has
 * no watch-only extended key to derive an address per order).
 */
export const solana: ChainFamily = {
  ...solanaTraits,
  parseAddress: (_env, input) => parseSolanaAddress(input),
  scanner: (upstreams, timeoutMs, options) => new SolanaChain(upstreams, timeoutMs, options),
  payments: {
    ...solanaTraits.payments,
    // The scanner reports an SPL transfer's mint in its base58 form, the form config gives.
    contractToken: (address) => {
      const id = parseSolanaAddress(address).display;
      return { id, matchKey: id };
    },
    derivation: undefined,
    // A Solana Pay transfer request: orders share the merchant's wallet, told apart by reference.
    paymentUri: solanaPayUri,
    reference: solanaReference,
  },
  // Payouts in SOL and SPL tokens are not built yet: merchants pay from the payment request.
  payouts: { verify: undefined, unsigned: undefined },
};

import type { ChainFamily } from '../family.js';
import { parseXpub } from '../xpub.js';
import { parseTronAddress } from './address.js';
import { TronChain } from './chain.js';
import { TRON_ROUTES } from './credits.js';
import { tronAddressAt } from './derive.js';

/** Tron: the HTTP API of java-tron and TronGrid (REST), `T…` addresses, TRC-20 tokens, orders derived from an xpub (m/44'/195'/0'). */
export const tron: ChainFamily = {
  name: 'tron',
  parseAddress: (_env, input) => parseTronAddress(input),
  scanner: (upstreams, timeoutMs) => new TronChain(upstreams, timeoutMs),
  gateway: {
    transport: 'rest', rpcErrorsAre500: false, websocket: false,
    health: {
      method: 'POST', path: '/wallet/getnowblock', body: '{}', contentType: 'application/json',
      read: (text) => {
        const block = JSON.parse(text) as { block_header?: { raw_data?: { number?: number } } };
        return { version: null, blockHeight: block.block_header?.raw_data?.number ?? null };
      },
    },
  },
  credits: {
    // The Tron HTTP API's built-in route table prices it; `default` covers the rest.
    defaults: () => ({ default: 20, methods: {} }),
    routes: TRON_ROUTES,
    block: { method: 'POST', path: '/wallet/getblockbynum' },
  },
  config: {
    tokens: {
      description: 'a T… address',
      claims: (t) => t.asset === undefined && !t.address!.startsWith('0x'),
      check: (t) => void parseTronAddress(t.address!),
    },
    addressFormat: undefined,
  },
  payments: {
    native: { symbol: 'TRX', decimals: 6 }, // sun
    amlChain: 'tron',
    // Solidified after 19 confirmations (2/3 of the 27 super representatives); one block of margin.
    finalityDepth: 20,
    // The scanner reports a TRC-20 Transfer's contract as `T…`, the form config gives.
    contractToken: (address) => {
      const id = parseTronAddress(address).display;
      return { id, matchKey: id };
    },
    derivation: {
      checkKey: (xpub) => void parseXpub(xpub),
      deriver: (xpub) => {
        const key = parseXpub(xpub);
        return (i) => tronAddressAt(key, i);
      },
      firstAddress: (xpub) => ({ first_address: tronAddressAt(xpub, 0) }),
    },
  },
};

import { traitsOf } from '../chains/traits.js';
import type { NetworkConfig, PlanConfig } from './schema.js';

/** A network's credit table when its config gives none: its family's built-in one. */
export function defaultCredits(family: NetworkConfig['family']): NetworkConfig['credits'] {
  return traitsOf(family).credits.defaults();
}

/**
 * The built-in catalog: popular networks on public upstreams, so a fresh `rpcctl serve`
 * proxies real chains. Operators replace the upstreams with their own nodes in config.
 * Ids are fixed here because endpoints store them.
 */

/** Well-known stablecoins on the default environment (mainnet) of each network. */
const usd = (usdt: string | null, usdc: string | null, usdtDecimals = 6, usdcDecimals = 6): NetworkConfig['tokens'] => [
  ...(usdt ? [{ symbol: 'USDT', address: usdt, decimals: usdtDecimals }] : []),
  ...(usdc ? [{ symbol: 'USDC', address: usdc, decimals: usdcDecimals }] : []),
];

function evm(id: number, slug: string, name: string, sort: number, envs: Array<[number, string, string]>, tokens: NetworkConfig['tokens'] = []): NetworkConfig {
  return {
    id, slug, name, family: 'evm', sort, tokens,
    environments: envs.map(([envId, envSlug, url]) => ({ id: envId, slug: envSlug, upstreams: [url], ws_upstreams: [], confirmations: 1 })),
    credits: defaultCredits('evm'),
  };
}

export const defaultNetworks: NetworkConfig[] = [
  evm(1, 'eth', 'Ethereum', 10, [
    [1, 'mainnet', 'https://ethereum-rpc.publicnode.com'],
    [2, 'sepolia', 'https://ethereum-sepolia-rpc.publicnode.com'],
  ], usd('0xdAC17F958D2ee523a2206206994597C13D831ec7', '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48')),
  evm(2, 'polygon', 'Polygon', 20, [
    [3, 'mainnet', 'https://polygon-bor-rpc.publicnode.com'],
    [4, 'amoy', 'https://polygon-amoy-bor-rpc.publicnode.com'],
  ], usd('0xc2132D05D31c914a87C6611C10748AEb04B58e8F', '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359')),
  evm(3, 'arbitrum', 'Arbitrum One', 30, [[5, 'mainnet', 'https://arbitrum-one-rpc.publicnode.com']],
    usd('0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9', '0xaf88d065e77c8cC2239327C5EDb3A432268e5831')),
  evm(4, 'base', 'Base', 40, [
    [6, 'mainnet', 'https://mainnet.base.org'],
    [7, 'sepolia', 'https://sepolia.base.org'],
  ], usd(null, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913')),
  evm(5, 'optimism', 'OP Mainnet', 50, [[8, 'mainnet', 'https://optimism-rpc.publicnode.com']],
    usd('0x94b008aA00579c1307B0EF2c499aD98a8ce58e58', '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85')),
  evm(6, 'bsc', 'BNB Smart Chain', 60, [
    [9, 'mainnet', 'https://bsc-rpc.publicnode.com'],
    [10, 'testnet', 'https://bsc-testnet-rpc.publicnode.com'],
  ], usd('0x55d398326f99059fF775485246999027B3197955', '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', 18, 18)),
  {
    id: 7, slug: 'stellar', name: 'Stellar', family: 'stellar', sort: 70,
    environments: [
      { id: 11, slug: 'mainnet', upstreams: ['https://horizon.stellar.org'], ws_upstreams: [], confirmations: 1 },
      { id: 12, slug: 'testnet', upstreams: ['https://horizon-testnet.stellar.org'], ws_upstreams: [], confirmations: 1 },
    ],
    // Horizon routes are priced by the family's built-in route table; `default` covers the rest.
    credits: { default: 20, methods: {} },
    tokens: [],
  },
  {
    // Bitcoin Core JSON-RPC. Public nodes answer the read methods the scanner needs; point
    // this at your own node (user:password@host works) or a provider's URL in config.
    id: 8, slug: 'bitcoin', name: 'Bitcoin', family: 'utxo', sort: 80, tokens: [],
    environments: [
      { id: 13, slug: 'mainnet', upstreams: ['https://bitcoin-rpc.publicnode.com'], ws_upstreams: [], confirmations: 2 },
      { id: 14, slug: 'testnet', upstreams: ['https://bitcoin-testnet-rpc.publicnode.com'], ws_upstreams: [], confirmations: 1 },
    ],
    credits: defaultCredits('utxo'),
  },
  {
    // The Tron HTTP API (java-tron full nodes, TronGrid). TronGrid rate-limits keyless use.
    // USDT-TRC20 is Tether's mainnet contract (6 decimals); on Nile list the test token your shop uses instead.
    id: 9, slug: 'tron', name: 'Tron', family: 'tron', sort: 90, tokens: [{ symbol: 'USDT', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', decimals: 6 }],
    environments: [
      { id: 15, slug: 'mainnet', upstreams: ['https://api.trongrid.io'], ws_upstreams: [], confirmations: 19 },
      { id: 16, slug: 'nile', upstreams: ['https://nile.trongrid.io'], ws_upstreams: [], confirmations: 19 },
    ],
    credits: { default: 20, methods: {} },
  },
  {
    // Solana's public clusters. `mainnet` is the cluster Solana calls mainnet-beta (slugs take no
    // dash: it separates network and environment in endpoint host names). The public nodes
    // rate-limit hard and answer no `getProgramAccounts`: point these at your own or a
    // provider's. USDC and USDT are Circle's and Tether's mainnet mints; devnet lists Circle's
    // devnet USDC (its own mint); testnet has no stablecoin.
    id: 10, slug: 'solana', name: 'Solana', family: 'solana', sort: 100,
    tokens: [
      { symbol: 'USDC', address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', decimals: 6 },
      { symbol: 'USDT', address: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', decimals: 6 },
    ],
    environments: [
      { id: 17, slug: 'mainnet', upstreams: ['https://api.mainnet-beta.solana.com'], ws_upstreams: ['wss://api.mainnet-beta.solana.com'], confirmations: 1 },
      {
        id: 18, slug: 'devnet', upstreams: ['https://api.devnet.solana.com'], ws_upstreams: ['wss://api.devnet.solana.com'], confirmations: 1,
        tokens: [{ symbol: 'USDC', address: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU', decimals: 6 }],
      },
      { id: 19, slug: 'testnet', upstreams: ['https://api.testnet.solana.com'], ws_upstreams: ['wss://api.testnet.solana.com'], confirmations: 1, tokens: [] },
    ],
    credits: defaultCredits('solana'),
  },
];

export const defaultPlans: PlanConfig[] = [
  { id: 1, slug: 'free', name: 'Free', included_credits: 100_000, rps_limit: 5, endpoints_limit: 1, webhook_address_slots: 0, network_limit: 1, allowed_network_slugs: [] },
  { id: 2, slug: 'basic', name: 'Basic', included_credits: 10_000_000, rps_limit: 25, endpoints_limit: 5, webhook_address_slots: 100, network_limit: 5, allowed_network_slugs: [] },
  { id: 3, slug: 'pro', name: 'Pro', included_credits: 100_000_000, rps_limit: 100, endpoints_limit: 25, webhook_address_slots: 10_000, network_limit: null, allowed_network_slugs: [] },
];

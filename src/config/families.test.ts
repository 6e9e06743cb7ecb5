import { describe, expect, it } from 'vitest';
import { traitsOf } from '../chains/traits.js';
import { parseConfig } from './index.js';

describe('config', () => {
  const net = (env: Record<string, unknown>, family = 'utxo') => ({ networks: [{ slug: 'ltc', name: 'Litecoin', family, environments: [{ slug: 'main', upstreams: ['http://127.0.0.1:1/'], ...env }] }] });
  it('a utxo environment needs address prefixes unless its slug is one of Bitcoin\'s', () => {
    expect(() => parseConfig(net({}))).toThrow(/environments\[0\]\.address_format: required/);
    expect(() => parseConfig(net({ address_format: { bech32: 'ltc', pub_key_hash: 48, script_hash: 50 } }))).not.toThrow();
    expect(() => parseConfig(net({ address_format: { bech32: 'ltc', pub_key_hash: 48, script_hash: 50 } }, 'evm'))).toThrow(/only for the utxo family/);
  });
  it('the built-in catalog has Bitcoin, Tron and Solana', () => {
    const c = parseConfig({});
    expect(c.networks.find((n) => n.slug === 'bitcoin')).toMatchObject({ family: 'utxo' });
    expect(c.networks.find((n) => n.slug === 'tron')).toMatchObject({ family: 'tron' });
    const solana = c.networks.find((n) => n.slug === 'solana')!;
    expect(solana).toMatchObject({ family: 'solana', credits: { methods: { getSlot: 5, getBlock: 100, getProgramAccounts: 250 } } });
    expect(solana.environments.map((e) => e.slug)).toEqual(['mainnet', 'devnet', 'testnet']);
    expect(solana.tokens.map((t) => t.address)).toEqual(['EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB']);
    expect(solana.environments[1]!.tokens).toEqual([{ symbol: 'USDC', address: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU', decimals: 6 }]);
    // Subscriptions through a built-in endpoint reach a node: Solana's public PubSub endpoints, as its cluster docs name them.
    expect(solana.environments.map((e) => e.ws_upstreams)).toEqual([
      ['wss://api.mainnet-beta.solana.com'], ['wss://api.devnet.solana.com'], ['wss://api.testnet.solana.com'],
    ]);
    // Any family whose feeds only a WebSocket upstream can serve (nothing polled over HTTP) has one in every built-in environment.
    for (const n of c.networks.filter((n) => { const ws = traitsOf(n.family).gateway.websocket; return ws !== undefined && ws.kinds.length > 0 && ws.polling === undefined; })) {
      for (const e of n.environments) expect(e.ws_upstreams.length, `${n.slug}-${e.slug}`).toBeGreaterThan(0);
    }
  });
  it('a Solana network lists SPL mints; another family\'s token form, or a mint that is not 32 bytes, is refused naming where', () => {
    const sol = (tokens: unknown[], envTokens?: unknown[]) => ({ networks: [{ slug: 'sol', name: 'Solana', family: 'solana', tokens, environments: [{ slug: 'dev', upstreams: ['http://127.0.0.1:1/'], ...(envTokens ? { tokens: envTokens } : {}) }] }] });
    const usdc = { symbol: 'USDC', address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', decimals: 6 };
    expect(() => parseConfig(sol([usdc]))).not.toThrow();
    expect(() => parseConfig(sol([], [usdc]))).not.toThrow();
    expect(() => parseConfig(sol([{ ...usdc, address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' }]))).toThrow(/networks\[0\]\.tokens\[0\]: a T… address is not a token form of the solana family/);
    expect(() => parseConfig(sol([], [{ ...usdc, address: 'z'.repeat(44) }]))).toThrow(/networks\[0\]\.environments\[0\]\.tokens\[0\]\.address: is not a Solana address/);
    expect(() => parseConfig({ networks: [{ slug: 'e', name: 'E', environments: [{ slug: 'm', upstreams: ['http://127.0.0.1:1/'] }], tokens: [usdc] }] })).toThrow(/an SPL mint address \(base58\) is not a token form of the evm family/);
  });
});

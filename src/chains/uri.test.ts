import { describe, expect, it } from 'vitest';
import { chainOf } from './index.js';
import type { ChainAdapter, ChainEnvironment, NetworkFamily } from './family.js';

// The checkout page's QR content, per chain family (docs/payments.md, "Checkout page").

const env = (family: NetworkFamily, network: string): ChainEnvironment => ({ slug: 'mainnet', network: { slug: network, family }, upstreams: [] });
let asked = 0;
const node = (): ChainAdapter => ({
  head: async () => 0, block: async () => undefined, blockHash: async () => undefined, close: async () => {},
  chainId: async () => { asked++; return 137; },
});
const uri = (family: NetworkFamily, network: string, r: { address: string; asset?: string; amountRaw: bigint; decimals: number }) =>
  chainOf(family).payments.paymentUri({ env: env(family, network), asset: 'native', ...r }, node);

describe('payment URIs', () => {
  it('Bitcoin-family: BIP21 with the amount in coins, the fork\'s own scheme', async () => {
    expect(await uri('utxo', 'bitcoin', { address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', amountRaw: 150_000n, decimals: 8 }))
      .toBe('bitcoin:bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq?amount=0.0015');
    expect(await uri('utxo', 'litecoin', { address: 'ltc1qg82tr7sq8ly3dqdvnwcx0qnq6ls8jnyl0trx6e', amountRaw: 100_000_000n, decimals: 8 }))
      .toBe('litecoin:ltc1qg82tr7sq8ly3dqdvnwcx0qnq6ls8jnyl0trx6e?amount=1');
    expect(await uri('utxo', 'dogecoin', { address: 'DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L', amountRaw: 12_345_678_901n, decimals: 8 }))
      .toBe('dogecoin:DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L?amount=123.45678901');
  });

  it('EVM: EIP-681 with the node\'s chain id, native value in wei or an ERC-20 transfer call', async () => {
    const to = '0x52908400098527886E0F7030069857D2E4169EE7';
    expect(await uri('evm', 'polygon', { address: to, amountRaw: 1_500_000_000_000_000_000n, decimals: 18 }))
      .toBe(`ethereum:${to}@137?value=1500000000000000000`);
    const token = '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359';
    expect(await uri('evm', 'polygon', { address: to, asset: token, amountRaw: 12_500_000n, decimals: 6 }))
      .toBe(`ethereum:${token}@137/transfer?address=${to}&uint256=12500000`);
    expect(asked).toBe(2);
  });

  it('Tron and Stellar: the plain address (no URI their wallets agree on)', async () => {
    expect(await uri('tron', 'tron', { address: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7', amountRaw: 5_000_000n, decimals: 6 })).toBe('TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7');
    const g = 'GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7';
    expect(await uri('stellar', 'stellar', { address: g, amountRaw: 10_000_000n, decimals: 7 })).toBe(g);
    expect(asked).toBe(2);
  });

  it('Solana: a Solana Pay transfer request, amount in units, spl-token for a mint, the reference, label and message URL-encoded', async () => {
    const family = chainOf('solana').payments;
    const recipient = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
    const reference = family.reference!.create();
    const request = { env: env('solana', 'solana'), address: recipient, reference, label: 'Café & Co', message: 'Order #7' };
    expect(await family.paymentUri({ ...request, asset: 'native', amountRaw: 1_500_000_000n, decimals: 9 }, node))
      .toBe(`solana:${recipient}?amount=1.5&reference=${reference}&label=Caf%C3%A9%20%26%20Co&message=Order%20%237`);
    const usdc = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
    expect(await family.paymentUri({ ...request, asset: usdc, amountRaw: 12_500_000n, decimals: 6, label: undefined, message: undefined }, node))
      .toBe(`solana:${recipient}?amount=12.5&spl-token=${usdc}&reference=${reference}`);
    // A fresh 32-byte key each time, watched under a key no address has.
    expect(family.reference!.create()).not.toBe(reference);
    expect(family.reference!.watchKey(reference)).toBe(`reference:${reference}`);
    expect(asked).toBe(2);
  });
});

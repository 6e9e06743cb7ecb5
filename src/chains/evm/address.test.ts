import { getAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { parseEvmAddress, toChecksumAddress } from './address.js';

describe('EVM addresses', () => {
  it('EIP-55 checksums agree with viem (an independent implementation)', () => {
    for (let i = 0; i < 50; i++) {
      const hex = `0x${Buffer.from(Array.from({ length: 20 }, (_, j) => (i * 37 + j * 101) & 0xff)).toString('hex')}`;
      expect(toChecksumAddress(hex)).toBe(getAddress(hex));
    }
    // The EIP's own examples.
    for (const a of ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB', '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb']) {
      expect(parseEvmAddress(a.toLowerCase()).display).toBe(a);
      expect(parseEvmAddress(a)).toEqual({ display: a, key: a.toLowerCase() });
    }
  });

  it('rejects malformed EVM addresses and wrong checksums', () => {
    expect(() => parseEvmAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD')).toThrow(/EIP-55/);
    for (const bad of ['', '5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe', '0xZZAeb6053F3E94C9b9A09f33669435E7Ef1BeAed']) {
      expect(() => parseEvmAddress(bad)).toThrow(/20-byte hex/);
    }
  });
});

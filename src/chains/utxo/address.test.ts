import { describe, expect, it } from 'vitest';
import { InvalidAddressError } from '../address.js';
import { parseUtxoAddress } from './address.js';

const BTC = { bech32: 'bc', pub_key_hash: 0, script_hash: 5 };
const TBTC = { bech32: 'tb', pub_key_hash: 0x6f, script_hash: 0xc4 };

describe('UTXO addresses (BIP-173/350/86 and base58 vectors)', () => {
  it('every script type to its output script; bech32 either case, returned lower case', () => {
    const cases: Array<[string, string]> = [
      ['1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', '76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac'],
      ['3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', 'a914b472a266d0bd89c13706a4132ccfb16f7c3b9fcb87'],
      ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', '0014751e76e8199196d454941c45d1b3a323f1433bd6'],
      ['BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4', '0014751e76e8199196d454941c45d1b3a323f1433bd6'],
      ['bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3', '00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262'],
      ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', '512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798'],
    ];
    for (const [address, script] of cases) {
      const p = parseUtxoAddress(BTC, address);
      expect(p.key, address).toBe(script);
      expect(p.display).toBe(address.startsWith('BC1') ? address.toLowerCase() : address);
    }
    expect(parseUtxoAddress(TBTC, 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx').key).toBe('0014751e76e8199196d454941c45d1b3a323f1433bd6');
  });

  it('refuses other networks, bad checksums, mixed case and bech32 (not m) taproot', () => {
    const bad = [
      'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', // testnet on mainnet
      'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5', // checksum
      'bc1qw508d6qejxtdg4y5R3zarvary0c5xw7kv8f3t4', // mixed case
      'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd', // v1 program with a wrong checksum
      '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb',
      '0x52908400098527886E0F7030069857D2E4169EE7',
    ];
    for (const a of bad) expect(() => parseUtxoAddress(BTC, a), a).toThrow(InvalidAddressError);
    // Dogecoin has no segwit: bech32 null refuses bc1 forms.
    expect(() => parseUtxoAddress({ bech32: null, pub_key_hash: 30, script_hash: 22 }, 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4')).toThrow(InvalidAddressError);
  });


});

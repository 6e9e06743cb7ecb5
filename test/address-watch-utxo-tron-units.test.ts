import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { InvalidAddressError } from '../src/chains/address.js';
import { WatchRegistry } from '../src/watch/registry.js';
import { parseTronAddress } from '../src/chains/tron/address.js';
import { parseTronJson } from '../src/chains/tron/chain.js';
import { matchTronBlock, type TronTx, type TronTxInfo } from '../src/chains/tron/match.js';
import { parseUtxoAddress } from '../src/chains/utxo/address.js';
import { parseAmounts } from '../src/chains/utxo/chain.js';
import { matchUtxoBlock, satoshis, type UtxoTx } from '../src/chains/utxo/match.js';

const fixture = (path: string) => readFileSync(new URL(`./fixtures/${path}`, import.meta.url), 'utf8');
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

  it('amounts: 8 decimals to satoshis exactly, also beyond 2^53', () => {
    expect(satoshis('0.00000001')).toBe('1');
    expect(satoshis('20999999.99999999')).toBe('2099999999999999');
    expect(satoshis('1e-8')).toBe('1');
    const parsed = parseAmounts('{"value":123456789012.12345678,"n":0}') as { value: string };
    expect(parsed.value).toBe('12345678901212345678');
  });

  it('a verbosity-3 block: payment, taproot output, payout with change at net amounts', () => {
    const block = (parseAmounts(fixture('bitcoin/getblock-verbosity3.json')) as { result: { tx: UtxoTx[] } }).result;
    const reg = new WatchRegistry();
    const watch = (id: number, address: string) => {
      const p = parseUtxoAddress(BTC, address);
      reg.add({ id, watch_id: `w_${id}`, account_id: 1, network_environment_id: 1, network_slug: 'bitcoin', address: p.display, address_key: p.key, created_at: '', start_height: 0 });
    };
    watch(1, 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4');
    watch(2, 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0');
    watch(3, '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa');
    const hits = matchUtxoBlock(reg, 1, block.tx).map((h) => [h.watch.watchId, h.type, h.direction, h.amount, h.from, h.to]);
    expect(hits).toEqual([
      ['w_1', 'payment', 'in', '312500000', null, 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4'],
      ['w_1', 'payout', 'out', '1010000', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0'],
      ['w_1', 'other', 'in', '0', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4'],
      ['w_2', 'payment', 'in', '1000000', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0'],
      ['w_3', 'payment', 'in', '2099999999999999', null, '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa'],
    ]);
  });
});

describe('Tron', () => {
  it('addresses: T… and 41… forms of one account; checksums checked', () => {
    const usdt = parseTronAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
    expect(usdt).toEqual({ display: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', key: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c' });
    expect(parseTronAddress('41A614F803B6FD780986A42C78EC9C7F77E6DED13C')).toEqual(usdt);
    for (const bad of ['TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u', '42a614f803b6fd780986a42c78ec9c7f77e6ded13c', 'a614f803b6fd780986a42c78ec9c7f77e6ded13c', '']) {
      expect(() => parseTronAddress(bad), bad).toThrow(InvalidAddressError);
    }
  });

  it('a block: TRC-20 from the logs, TRX from the block, a reverted TRC-20 transfer as other', () => {
    const block = parseTronJson(fixture('tron/getblockbynum.json')) as { transactions: TronTx[] };
    const infos = parseTronJson(fixture('tron/gettransactioninfobyblocknum.json')) as TronTxInfo[];
    const reg = new WatchRegistry();
    const to = parseTronAddress('414fd7f7e2d9c1f6b0f3c8a5e1b2d3c4a5b6c7d8e9');
    reg.add({ id: 1, watch_id: 'w_1', account_id: 1, network_environment_id: 1, network_slug: 'tron', address: to.display, address_key: to.key, created_at: '', start_height: 0 });
    const hits = matchTronBlock(reg, 1, block.transactions, infos).map((h) => [h.txHash.slice(0, 4), h.type, h.direction, h.token, h.amount, h.logIndex, h.to]);
    expect(hits).toEqual([
      ['c3b7', 'payment', 'in', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', '25000000', 0, to.display],
      ['d4c8', 'payment', 'in', null, '12000000', null, to.display],
      ['e5d9', 'other', 'in', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', '0', null, to.display],
    ]);
  });
});

describe('config', () => {
  const net = (env: Record<string, unknown>, family = 'utxo') => ({ networks: [{ slug: 'ltc', name: 'Litecoin', family, environments: [{ slug: 'main', upstreams: ['http://127.0.0.1:1/'], ...env }] }] });
  it('a utxo environment needs address prefixes unless its slug is one of Bitcoin\'s', () => {
    expect(() => parseConfig(net({}))).toThrow(/environments\[0\]\.address_format: required/);
    expect(() => parseConfig(net({ address_format: { bech32: 'ltc', pub_key_hash: 48, script_hash: 50 } }))).not.toThrow();
    expect(() => parseConfig(net({ address_format: { bech32: 'ltc', pub_key_hash: 48, script_hash: 50 } }, 'evm'))).toThrow(/only for the utxo family/);
  });
  it('the built-in catalog has Bitcoin and Tron', () => {
    const c = parseConfig({});
    expect(c.networks.find((n) => n.slug === 'bitcoin')).toMatchObject({ family: 'utxo' });
    expect(c.networks.find((n) => n.slug === 'tron')).toMatchObject({ family: 'tron' });
  });
});

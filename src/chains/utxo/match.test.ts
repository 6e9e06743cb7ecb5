import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WatchRegistry } from '../../watch/registry.js';
import { parseUtxoAddress } from './address.js';
import { parseAmounts } from './chain.js';
import { matchUtxoBlock, satoshis, type UtxoTx } from './match.js';

const fixture = (path: string) => readFileSync(new URL(`../../../test/fixtures/${path}`, import.meta.url), 'utf8');

const BTC = { bech32: 'bc', pub_key_hash: 0, script_hash: 5 };

describe('UTXO amounts and blocks', () => {
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
      reg.add({ id, watch_id: `w_${id}`, account_id: 1, network_environment_id: 1, network_slug: 'bitcoin', address: p.display, address_key: p.key, created_at: '', start_height: 0, holder: 'merchant' as const, order_open: 0, order_held: 0 });
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

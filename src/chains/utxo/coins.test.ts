import { describe, expect, it } from 'vitest';
import { parseAmounts } from './chain.js';
import { findCoins, type UtxoNode } from './coins.js';
import { parseUtxoAddress } from './address.js';

const BTC = { bech32: 'bc', pub_key_hash: 0, script_hash: 5 };
const A = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
const B = '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa';
const script = (address: string) => parseUtxoAddress(BTC, address).key;

/** Bitcoin Core's answers, through the adapter's amount parser (values in satoshis). */
function node(txs: Record<string, Array<[address: string, btc: string]>>, spent: Set<string>): UtxoNode & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async batch<T>(requests: Array<[string, unknown[]]>): Promise<T[]> {
      calls.push(`${requests[0]![0]} x${requests.length}`);
      return requests.map(([method, params]) => {
        const [txid, n] = params as [string, number];
        if (method === 'getrawtransaction') {
          const vout = txs[txid]!.map(([address, btc], i) => `{"n":${i},"value":${btc},"scriptPubKey":{"hex":"${script(address)}"}}`);
          return parseAmounts(`{"txid":"${txid}","hex":"00${txid}","vout":[${vout.join(',')}]}`) as T;
        }
        return (spent.has(`${txid}:${n}`) ? null : { value: '1' }) as T;
      });
    },
  };
}

describe('finding the merchant\'s coins', () => {
  it('outputs of the funding transactions that pay an order address and are unspent; one transaction paying two orders is asked once', async () => {
    const t1 = '11'.repeat(32);
    const t2 = '22'.repeat(32);
    const n = node({ [t1]: [[B, '0.1'], [A, '1.23456789']], [t2]: [[A, '0.5'], [B, '2']] }, new Set([`${t2}:0`]));
    const coins = await findCoins(n, BTC, [
      { address: A, index: 4, txHashes: [t1, t2] },
      { address: B, index: 9, txHashes: [t2.toUpperCase()] },
    ]);
    expect(coins.map((c) => [c.txid, c.vout, c.amountSats, c.index, c.rawTx])).toEqual([
      [t1, 0, 10_000_000n, 9, `00${t1}`],
      [t1, 1, 123_456_789n, 4, `00${t1}`],
      [t2, 1, 200_000_000n, 9, `00${t2}`],
    ]);
    expect(n.calls).toEqual(['getrawtransaction x2', 'gettxout x4']);
    expect(await findCoins(n, BTC, [])).toEqual([]);
  });
});

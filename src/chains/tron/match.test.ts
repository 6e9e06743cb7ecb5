import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WatchRegistry } from '../../watch/registry.js';
import { parseTronAddress } from './address.js';
import { parseTronJson } from './chain.js';
import { hasContractCalls, matchTronBlock, tronTxSucceeded, type TronTx, type TronTxInfo } from './match.js';

const fixture = (path: string) => readFileSync(new URL(`../../../test/fixtures/${path}`, import.meta.url), 'utf8');

describe('Tron blocks', () => {
  it('a block: TRC-20 from the logs, TRX from the block, a reverted TRC-20 transfer as other', () => {
    const block = parseTronJson(fixture('tron/getblockbynum.json')) as { transactions: TronTx[] };
    const infos = parseTronJson(fixture('tron/gettransactioninfobyblocknum.json')) as TronTxInfo[];
    const reg = new WatchRegistry();
    const to = parseTronAddress('414fd7f7e2d9c1f6b0f3c8a5e1b2d3c4a5b6c7d8e9');
    reg.add({ id: 1, watch_id: 'w_1', account_id: 1, network_environment_id: 1, network_slug: 'tron', address: to.display, address_key: to.key, created_at: '', start_height: 0, holder: 'merchant' as const, order_open: 0, order_held: 0 });
    const hits = matchTronBlock(reg, 1, block.transactions, infos).map((h) => [h.txHash.slice(0, 4), h.type, h.direction, h.token, h.amount, h.logIndex, h.to]);
    expect(hits).toEqual([
      ['c3b7', 'payment', 'in', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', '25000000', 0, to.display],
      ['d4c8', 'payment', 'in', null, '12000000', null, to.display],
      ['e5d9', 'other', 'in', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', '0', null, to.display],
    ]);
  });

  it('the same block gives nothing on another environment or with no watch of its addresses', () => {
    const block = parseTronJson(fixture('tron/getblockbynum.json')) as { transactions: TronTx[] };
    const infos = parseTronJson(fixture('tron/gettransactioninfobyblocknum.json')) as TronTxInfo[];
    const reg = new WatchRegistry();
    const to = parseTronAddress('414fd7f7e2d9c1f6b0f3c8a5e1b2d3c4a5b6c7d8e9');
    reg.add({ id: 1, watch_id: 'w_1', account_id: 1, network_environment_id: 1, network_slug: 'tron', address: to.display, address_key: to.key, created_at: '', start_height: 0, holder: 'merchant' as const, order_open: 0, order_held: 0 });
    expect(matchTronBlock(reg, 2, block.transactions, infos)).toEqual([]);
    expect(matchTronBlock(new WatchRegistry(), 1, block.transactions, infos)).toEqual([]);
  });

  it('a transaction without a result succeeded; only a succeeded contract call needs the block\'s logs', () => {
    const tx = (type: string, ret?: string): TronTx => ({ txID: 'aa', ...(ret ? { ret: [{ contractRet: ret }] } : {}), raw_data: { contract: [{ type, parameter: { value: {} } }] } });
    expect([tronTxSucceeded(tx('TransferContract')), tronTxSucceeded(tx('TransferContract', 'SUCCESS')), tronTxSucceeded(tx('TransferContract', 'REVERT'))]).toEqual([true, true, false]);
    expect(hasContractCalls([tx('TransferContract')])).toBe(false);
    expect(hasContractCalls([tx('TriggerSmartContract', 'REVERT')])).toBe(false);
    expect(hasContractCalls([tx('TransferContract'), tx('TriggerSmartContract')])).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { toChecksumAddress } from './address.js';
import { matchEvmBlock, TRANSFER_TOPIC, valueHitTxs, withReverted, type EvmLog, type EvmTx } from './match.js';
import { WatchRegistry } from '../../watch/registry.js';

describe('matching', () => {
  const reg = new WatchRegistry();
  const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
  let id = 0;
  const watch = (envId: number, accountId: number, address: string) => reg.add({
    id: ++id, watch_id: `w_${id}`, account_id: accountId, network_environment_id: envId, network_slug: 'eth',
    address: toChecksumAddress(address), address_key: address.toLowerCase(), created_at: '', start_height: 0, holder: 'merchant' as const, order_open: 0, order_held: 0,
  });
  watch(1, 1, addr(1));
  watch(1, 2, addr(1)); // a second account watching the same address
  watch(1, 1, addr(2));
  watch(2, 1, addr(3)); // another environment

  const tx = (hash: string, from: string, to: string | null, value: bigint): EvmTx => ({ hash, from, to, value: `0x${value.toString(16)}` });
  const transfer = (txHash: string, token: string, from: string, to: string, amount: bigint, logIndex: number): EvmLog => ({
    address: token, transactionHash: txHash, logIndex: `0x${logIndex.toString(16)}`, data: `0x${amount.toString(16).padStart(64, '0')}`,
    topics: [TRANSFER_TOPIC, `0x${from.slice(2).padStart(64, '0')}`, `0x${to.slice(2).padStart(64, '0')}`],
  });

  it('classifies payments, payouts and other hits; one event per watch', () => {
    const token = addr(0xabc);
    const hits = matchEvmBlock(reg, 1, [
      tx('0xa', addr(9), addr(1), 5n), // native in to a doubly watched address
      tx('0xb', addr(2), addr(1), 7n), // both sides watched
      tx('0xc', addr(9), token, 0n), // token transfer 9 -> 2
      tx('0xd', addr(2), token, 0n), // call from 2 moving nothing of 2's: other
      tx('0xe', addr(3), addr(9), 1n), // addr(3) is watched on env 2 only
    ], [transfer('0xc', token, addr(9), addr(2), 1000n, 4)]);
    expect(hits.map((h) => [h.txHash, h.watch.watchId, h.type, h.direction, h.token, h.amount, h.logIndex])).toEqual([
      ['0xa', 'w_1', 'payment', 'in', null, '5', null],
      ['0xa', 'w_2', 'payment', 'in', null, '5', null],
      ['0xb', 'w_3', 'payout', 'out', null, '7', null],
      ['0xb', 'w_1', 'payment', 'in', null, '7', null],
      ['0xb', 'w_2', 'payment', 'in', null, '7', null],
      ['0xc', 'w_3', 'payment', 'in', toChecksumAddress(token), '1000', 4],
      ['0xd', 'w_3', 'other', 'out', null, '0', null],
    ]);
  });

  it('receipts are asked for native value hits only; a reverted one becomes `other` on the same side', () => {
    const token = addr(0xabc);
    const hits = matchEvmBlock(reg, 1, [
      tx('0xAA', addr(2), addr(1), 5n), // value, both sides watched: reverted
      tx('0xbb', addr(9), addr(2), 6n), // value: succeeded
      tx('0xcc', addr(9), token, 0n), // token transfer: no receipt needed
      tx('0xdd', addr(2), token, 0n), // other already
    ], [transfer('0xcc', token, addr(9), addr(2), 1000n, 0)]);
    expect(valueHitTxs(hits)).toEqual(['0xAA', '0xbb']);
    const after = withReverted(hits, new Set(['0xaa']));
    expect(after.map((h) => [h.txHash, h.watch.watchId, h.type, h.direction, h.amount])).toEqual([
      ['0xAA', 'w_3', 'other', 'out', '0'],
      ['0xAA', 'w_1', 'other', 'in', '0'],
      ['0xAA', 'w_2', 'other', 'in', '0'],
      ['0xbb', 'w_3', 'payment', 'in', '6'],
      ['0xcc', 'w_3', 'payment', 'in', '1000'],
      ['0xdd', 'w_3', 'other', 'out', '0'],
    ]);
    expect(withReverted(hits, new Set())).toEqual(hits);
  });

  it('ignores ERC-721 transfers (four topics) and unwatched addresses; removal takes effect', () => {
    const nft = { ...transfer('0xf', addr(7), addr(9), addr(1), 1n, 0), topics: [TRANSFER_TOPIC, `0x${'0'.repeat(24)}${addr(9).slice(2)}`, `0x${'0'.repeat(24)}${addr(1).slice(2)}`, '0x01'] };
    expect(matchEvmBlock(reg, 1, [tx('0xf', addr(9), addr(7), 0n)], [nft])).toEqual([]);
    const r = new WatchRegistry();
    const row = { id: 1, watch_id: 'w_x', account_id: 1, network_environment_id: 1, network_slug: 'eth', address: addr(5), address_key: addr(5), created_at: '', start_height: 0, holder: 'merchant' as const, order_open: 0, order_held: 0 };
    r.add(row);
    expect(matchEvmBlock(r, 1, [tx('0x1', addr(9), addr(5), 1n)], [])).toHaveLength(1);
    r.remove(row);
    expect(matchEvmBlock(r, 1, [tx('0x1', addr(9), addr(5), 1n)], [])).toEqual([]);
    expect(r.watchedEnvIds()).toEqual([]);
  });
});

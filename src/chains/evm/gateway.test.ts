import { describe, expect, it } from 'vitest';
import { SubscribeParamsError } from '../gateway.js';
import { evmCachePlan, evmLogsQuery, evmMethods, evmProbe, evmWebSocket, normaliseEvmSubscribe } from './gateway.js';

const view = { head: 100, finalized: 36 };

describe('EVM method classes', () => {
  it('by-hash reads and reads at a block number may go to a lagging node; sends are never hedged', () => {
    expect(evmMethods.classOf('eth_blockNumber', [])).toEqual({ needsHead: true, idempotent: true, retry: true });
    expect(evmMethods.classOf('eth_getTransactionReceipt', ['0xab']).needsHead).toBe(false);
    expect(evmMethods.classOf('eth_getBlockByNumber', ['0x10', false]).needsHead).toBe(false);
    expect(evmMethods.classOf('eth_getBalance', ['0x0', '0x10']).needsHead).toBe(false);
    expect(evmMethods.classOf('eth_getBalance', ['0x0', 'latest']).needsHead).toBe(true);
    expect(evmMethods.classOf('eth_sendRawTransaction', ['0x02']).idempotent).toBe(false);
    expect(evmMethods.classOf('eth_newFilter', [{}]).idempotent).toBe(false);
  });

  it('a null may lag only for lookups of what a node may not have seen yet', () => {
    expect(evmMethods.nullMayLag('eth_getTransactionReceipt')).toBe(true);
    expect(evmMethods.nullMayLag('eth_call')).toBe(false);
    expect(evmMethods.isStandard('eth_call')).toBe(true);
    expect(evmMethods.isStandard('made_up')).toBe(false);
  });

  it('reads a log query range, with tags from the view, and rewrites it for a chunk', () => {
    expect(evmLogsQuery.range([{ fromBlock: '0x0' }], view)).toEqual({ from: 0, to: 100 });
    expect(evmLogsQuery.range([{ fromBlock: 'earliest', toBlock: 'finalized' }], view)).toEqual({ from: 0, to: 36 });
    expect(evmLogsQuery.range([{ blockHash: '0xab' }], view)).toBeUndefined();
    expect(evmLogsQuery.range([{ fromBlock: '0x0' }], undefined)).toBeUndefined();
    expect(evmLogsQuery.withRange([{ address: '0x1', fromBlock: '0x0', toBlock: '0x99' }], 16, 31)).toEqual([{ address: '0x1', fromBlock: '0x10', toBlock: '0x1f' }]);
  });
});

describe('EVM cache plan', () => {
  it('plans only what cannot change', () => {
    expect(evmCachePlan.decide('eth_getBlockByNumber', ['latest', false], view)).toBeUndefined();
    expect(evmCachePlan.decide('eth_getBlockByNumber', ['0x25', false], view)).toBeUndefined();
    expect(evmCachePlan.decide('eth_getBlockByNumber', ['0x24', false], view)).toEqual({ height: 36, resultBlock: 'block' });
    expect(evmCachePlan.decide('eth_call', [{ to: '0x0' }, '0x10'], view)?.height).toBe(16);
    expect(evmCachePlan.decide('eth_call', [{ to: '0x0' }, '0x010'], view)).toBeUndefined();
    expect(evmCachePlan.decide('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x24' }], view)?.height).toBe(36);
    expect(evmCachePlan.decide('eth_getLogs', [{ fromBlock: '0x1', toBlock: 'latest' }], view)).toBeUndefined();
    expect(evmCachePlan.decide('eth_chainId', [], undefined)).toBeDefined();
    expect(evmCachePlan.decide('eth_blockNumber', [], view)).toBeUndefined();
  });

  it('caches a by-hash answer only once its block is final, under that block', () => {
    const tx = evmCachePlan.decide('eth_getTransactionReceipt', ['0xab'], view)!;
    expect(evmCachePlan.finalOf(tx, null, view)).toBeUndefined();
    expect(evmCachePlan.finalOf(tx, { blockNumber: '0x25', blockHash: '0xAA' }, view)).toBeUndefined();
    expect(evmCachePlan.finalOf(tx, { blockNumber: '0x24', blockHash: '0xAA' }, view)).toEqual({ height: 36, hash: '0xaa' });
  });
});

describe('EVM probe', () => {
  it('reads version, head and finalized from the batch, and the head alone from the fallback', () => {
    const batch = JSON.stringify([{ id: 1, result: 'Geth/v1' }, { id: 2, result: '0x64' }, { id: 3, result: { number: '0x24' } }]);
    expect(evmProbe.read(200, batch)).toEqual({ version: 'Geth/v1', head: 100, finalized: 36 });
    expect(() => evmProbe.read(200, '{"error":"batch refused"}')).toThrow();
    expect(() => evmProbe.read(500, batch)).toThrow();
    expect(evmProbe.fallback!.read(200, '{"id":2,"result":"0x10"}')).toEqual({ version: null, head: 16 });
    expect(JSON.parse(evmProbe.blockHash!.request(255).body!).params).toEqual(['0xff', false]);
    expect(evmProbe.blockHash!.read('{"result":{"hash":"0xAB"}}')).toBe('0xab');
  });
});

describe('eth_subscribe', () => {
  const A = '0x' + 'Ab'.repeat(20);
  const T = '0x' + 'CD'.repeat(32);

  it('the same filter written two ways is one feed', () => {
    const a = normaliseEvmSubscribe(['logs', { address: A, topics: [T, null] }]);
    const b = normaliseEvmSubscribe(['logs', { address: [A.toLowerCase()], topics: [T.toLowerCase()] }]);
    expect(JSON.stringify(a.params)).toBe(JSON.stringify(b.params));
    expect(normaliseEvmSubscribe(['logs']).params).toEqual(['logs', {}]);
  });

  it('names what is wrong', () => {
    const msg = (p: unknown) => { try { normaliseEvmSubscribe(p); return ''; } catch (e) { expect(e).toBeInstanceOf(SubscribeParamsError); return (e as Error).message; } };
    expect(msg([])).toMatch(/subscription type/);
    expect(msg(['syncing'])).toMatch(/unsupported subscription type "syncing"/);
    expect(msg(['newHeads', {}])).toMatch(/takes no filter/);
    expect(msg(['logs', { fromBlock: '0x1' }])).toMatch(/unsupported key "fromBlock"/);
    expect(msg(['logs', { topics: ['0x12'] }])).toMatch(/topic/);
    expect(msg(['logs', { topics: [null, null, null, null, null] }])).toMatch(/at most 4/);
  });

  it('gives clients hex ids and polls only newHeads and logs', () => {
    expect(evmWebSocket.newId()).toMatch(/^0x[0-9a-f]{32}$/);
    expect(evmWebSocket.polling?.types).toEqual(['newHeads', 'logs']);
  });
});

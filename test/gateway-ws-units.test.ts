import { describe, expect, it } from 'vitest';
import { Feed, FeedError, normaliseSubscribe } from '../src/gateway/ws/feed.js';

const A = '0x' + 'Ab'.repeat(20);
const T = '0x' + 'CD'.repeat(32);

describe('eth_subscribe params', () => {
  it('the same filter written two ways is one feed key', () => {
    const a = normaliseSubscribe(['logs', { address: A, topics: [T, null] }]);
    const b = normaliseSubscribe(['logs', { address: [A.toLowerCase()], topics: [T.toLowerCase()] }]);
    expect(JSON.stringify(a.params)).toBe(JSON.stringify(b.params));
    expect(normaliseSubscribe(['logs']).params).toEqual(['logs', {}]);
  });

  it('names what is wrong', () => {
    const msg = (p: unknown) => { try { normaliseSubscribe(p); return ''; } catch (e) { expect(e).toBeInstanceOf(FeedError); return (e as Error).message; } };
    expect(msg([])).toMatch(/subscription type/);
    expect(msg(['syncing'])).toMatch(/unsupported subscription type "syncing"/);
    expect(msg(['newHeads', {}])).toMatch(/takes no filter/);
    expect(msg(['logs', { fromBlock: '0x1' }])).toMatch(/unsupported key "fromBlock"/);
    expect(msg(['logs', { topics: ['0x12'] }])).toMatch(/topic/);
    expect(msg(['logs', { topics: [null, null, null, null, null] }])).toMatch(/at most 4/);
  });
});

describe('Feed', () => {
  const collect = (f: Feed) => {
    const got: string[] = [];
    f.subscribers.add({ id: '0x1', deliver: (j) => got.push(j), lost: () => {} });
    return got;
  };

  it('never sends a head or a log twice, and tracks the last block', () => {
    const heads = new Feed('newHeads', ['newHeads']);
    const got = collect(heads);
    heads.emit({ hash: '0xa', number: '0x10' });
    heads.emit({ hash: '0xa', number: '0x10' });
    heads.emit({ hash: '0xb', number: '0x11' });
    expect(got).toHaveLength(2);
    expect(heads.lastBlock).toBe(0x11);

    const logs = new Feed('logs', ['logs', {}]);
    const lg = collect(logs);
    const log = { blockHash: '0xa', blockNumber: '0x10', logIndex: '0x0' };
    logs.emit(log);
    logs.emit(log);
    logs.emit({ ...log, removed: true }); // a reorg taking it back is news
    expect(lg).toHaveLength(2);
  });

  it('holds live notifications while a backfill sends older ones first', () => {
    const f = new Feed('newHeads', ['newHeads']);
    const got = collect(f);
    f.hold();
    f.emit({ hash: '0xc', number: '0x3' });
    f.emit({ hash: '0xa', number: '0x1' }, true);
    f.emit({ hash: '0xb', number: '0x2' }, true);
    f.release();
    expect(got.map((j) => JSON.parse(j).number)).toEqual(['0x1', '0x2', '0x3']);
  });
});

import { describe, expect, it } from 'vitest';
import { Feed } from './feed.js';

const KIND = { subscribe: 'sub', unsubscribe: 'unsub', notification: 'note' };

describe('Feed', () => {
  const collect = (f: Feed) => {
    const got: string[] = [];
    f.subscribers.add({ id: '0x1', deliver: (j) => got.push(j), lost: () => {} });
    return got;
  };

  it('never sends a head or a log twice, and tracks the last block', () => {
    const heads = new Feed(KIND, 'newHeads', ['newHeads']);
    const got = collect(heads);
    heads.emit({ hash: '0xa', number: '0x10' });
    heads.emit({ hash: '0xa', number: '0x10' });
    heads.emit({ hash: '0xb', number: '0x11' });
    expect(got).toHaveLength(2);
    expect(heads.lastBlock).toBe(0x11);

    const logs = new Feed(KIND, 'logs', ['logs', {}]);
    const lg = collect(logs);
    const log = { blockHash: '0xa', blockNumber: '0x10', logIndex: '0x0' };
    logs.emit(log);
    logs.emit(log);
    logs.emit({ ...log, removed: true }); // a reorg taking it back is news
    expect(lg).toHaveLength(2);
  });

  it('holds live notifications while a backfill sends older ones first', () => {
    const f = new Feed(KIND, 'newHeads', ['newHeads']);
    const got = collect(f);
    f.hold();
    f.emit({ hash: '0xc', number: '0x3' });
    f.emit({ hash: '0xa', number: '0x1' }, true);
    f.emit({ hash: '0xb', number: '0x2' }, true);
    f.release();
    expect(got.map((j) => JSON.parse(j).number)).toEqual(['0x1', '0x2', '0x3']);
  });
});

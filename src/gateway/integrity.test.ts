import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { answerKey, canonical, isFixedBlock } from './integrity.js';

const net = (integrity: unknown[], upstreams = ['http://127.0.0.1:1', 'http://127.0.0.1:2', 'http://127.0.0.1:3'], family = 'evm') => ({
  networks: [{ slug: 'n', name: 'N', family, environments: [{ slug: 'main', upstreams }], integrity }],
});

describe('integrity policy config', () => {
  it('is off by default and fills its defaults', () => {
    expect(parseConfig(net([])).networks[0]!.integrity).toEqual([]);
    expect(parseConfig({ networks: [{ slug: 'n', name: 'N', environments: [{ slug: 'main' }] }] }).networks[0]!.integrity).toBeUndefined();
    expect(parseConfig(net([{ methods: ['eth_call'], k: 3, m: 2 }])).networks[0]!.integrity).toEqual([
      { methods: ['eth_call'], k: 3, m: 2, on_disagreement: 'majority', when: 'always' },
    ]);
  });

  it('refuses m over k, a method in two policies, fewer upstreams than m, and REST families', () => {
    expect(() => parseConfig(net([{ methods: ['eth_call'], k: 2, m: 3 }]))).toThrow(/m must be at most k/);
    expect(() => parseConfig(net([{ methods: ['eth_call'], k: 2, m: 2 }, { methods: ['eth_call'], k: 3, m: 2 }]))).toThrow(/eth_call is in more than one integrity policy/);
    expect(() => parseConfig(net([{ methods: ['eth_call'], k: 3, m: 2 }], ['http://127.0.0.1:1']))).toThrow(/environment main has 1 upstream\(s\), fewer than m = 2/);
    expect(() => parseConfig(net([{ methods: ['GET /ledgers'], k: 2, m: 2 }], undefined, 'stellar'))).toThrow(/stellar network has no JSON-RPC methods/);
  });
});

describe('integrity comparison', () => {
  it('compares results by a canonical form: keys in any order, hex in any case', () => {
    expect(canonical({ b: '0xABcd', a: [1, { y: null, x: 'Text' }] })).toBe(canonical({ a: [1, { x: 'Text', y: null }], b: '0xabcd' }));
    expect(canonical('0x01')).not.toBe(canonical('0x1'));
    expect(canonical('Text')).not.toBe(canonical('text'));
    expect(answerKey('{"jsonrpc":"2.0","id":1,"result":{"B":"0xAA","a":1}}')).toBe(answerKey('{"id":2,"result":{"a":1,"B":"0xaa"},"jsonrpc":"2.0"}'));
    expect(answerKey('{"jsonrpc":"2.0","id":1,"result":null}')).toBe('rnull');
  });

  it('compares errors by code only, and takes anything else for no answer', () => {
    expect(answerKey('{"id":1,"error":{"code":-32000,"message":"header not found"}}')).toBe(answerKey('{"id":1,"error":{"code":-32000,"message":"missing trie node"}}'));
    expect(answerKey('{"id":1,"error":{"code":3,"message":"execution reverted"}}')).not.toBe(answerKey('{"id":1,"result":"0x"}'));
    expect(answerKey('not json')).toBeUndefined();
    expect(answerKey('[{"id":1,"result":1}]')).toBeUndefined();
    expect(answerKey('{"id":1}')).toBeUndefined();
  });

  it('takes numbers, hashes, earliest and finalized for a fixed block; latest, pending and safe not', () => {
    for (const v of ['0x1e', '0x0', 'earliest', 'finalized', `0x${'ab'.repeat(32)}`, { blockHash: `0x${'cd'.repeat(32)}` }, { blockNumber: '0x5' }]) expect(isFixedBlock(v)).toBe(true);
    for (const v of ['latest', 'pending', 'safe', undefined, null, 5, { blockNumber: 'latest' }, '0xzz']) expect(isFixedBlock(v)).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { ErrorClassifier } from './index.js';
import { parseConfig } from '../../config/index.js';

const answer = (code: number, message: string, id: unknown = 1) => Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }));

describe('the JSON-RPC error table (docs/gateway.md)', () => {
  const table = new ErrorClassifier();

  it.each([
    [-32000, 'internal error', 'upstream'],
    [-32000, 'header not found', 'upstream'],
    [-32000, 'missing trie node 9f2c… (path )', 'upstream'],
    [-32005, 'daily request count exceeded, request rate limited', 'upstream'],
    [429, 'Too Many Requests', 'upstream'],
    [-32000, 'request timeout', 'upstream'],
    [-32603, 'capacity exceeded', 'upstream'],
    [3, 'execution reverted: not owner', 'caller'],
    [-32000, 'execution reverted', 'caller'],
    [-32602, 'invalid argument 0: hex string without 0x prefix', 'caller'],
    [-32600, 'invalid request', 'caller'],
    [-32005, 'query returned more than 10000 results', 'caller'],
    [-32000, 'nonce too low', 'caller'],
    [-32601, 'the method debug_traceCall does not exist/is not available', 'method'],
  ] as const)('%i %s: %s', (code, message, cls) => {
    expect(table.classify(code, message)).toBe(cls);
  });

  it('parses only answers that hold an error, and judges a batch by its worst element', () => {
    expect(table.judge(Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x1"}'))).toBeUndefined();
    expect(table.judge(answer(3, 'execution reverted'))).toBeUndefined();
    expect(table.judge(answer(-32000, 'header not found'))).toEqual({ class: 'upstream', detail: 'JSON-RPC -32000 header not found' });
    const batch = Buffer.from(JSON.stringify([{ jsonrpc: '2.0', id: 1, result: '0x1' }, { jsonrpc: '2.0', id: 2, error: { code: -32005, message: 'rate limit' } }]));
    expect(table.judge(batch)?.class).toBe('upstream');
    // Learning is per method: a batch's -32601 is answered as it is.
    expect(table.judge(Buffer.from(JSON.stringify([{ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'method not found' } }])))).toBeUndefined();
    // JSON-RPC 1.0 (Bitcoin Core) sends `"error": null` with every result.
    expect(table.judge(Buffer.from('{"result":"00ab","error": null,"id":1}'))).toBeUndefined();
    expect(table.judge(Buffer.from('{"result":null,"error":{"code":-28,"message":"Loading block index..."},"id":1}'))?.class).toBe('upstream');
    // Key order is the node's.
    expect(table.judge(Buffer.from('{"error":{"code":-32005,"message":"limit"},"id":1,"jsonrpc":"2.0"}'))?.class).toBe('upstream');
    expect(table.judge(Buffer.from('{"jsonrpc":"2.0","id":"error","result":"0xrr"}'))).toBeUndefined();
    // A result that merely contains the word is not an error.
    expect(table.judge(Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"calls":[{"error":"execution reverted"}]}}'))).toBeUndefined();
  });

  it('a network\'s own rules come first', () => {
    const own = new ErrorClassifier([{ message: 'nonce too low', class: 'upstream' }, { code: -32000, message: 'header not found', class: 'caller' }]);
    expect(own.classify(-32000, 'nonce too low')).toBe('upstream');
    expect(own.classify(-32000, 'header not found')).toBe('caller');
    expect(own.classify(-32000, 'internal error')).toBe('upstream');
  });

  it('config: error_classes need a code or a valid pattern; upstream_methods name the network\'s upstreams', () => {
    const net = (extra: object) => ({ networks: [{ slug: 'eth', name: 'Eth', environments: [{ slug: 'main', upstreams: ['http://127.0.0.1:1'] }], ...extra }] });
    expect(() => parseConfig(net({ error_classes: [{ class: 'upstream' }] }), 'x')).toThrow(/code, message or both/);
    expect(() => parseConfig(net({ error_classes: [{ message: '(', class: 'upstream' }] }), 'x')).toThrow(/regular expression/);
    expect(() => parseConfig(net({ upstream_methods: { 'http://127.0.0.1:2': { allow: ['eth_*'] } } }), 'x')).toThrow(/key 1 is not one of the network's upstream URLs/);
    const ok = parseConfig(net({ error_classes: [{ code: -32099, class: 'upstream' }], upstream_methods: { 'http://127.0.0.1:1': { deny: ['trace_*'] } } }), 'x');
    expect(ok.networks[0]!.upstream_methods).toEqual({ 'http://127.0.0.1:1': { deny: ['trace_*'] } });
    expect(ok.gateway.upstream_deadline_ms).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import { MAX_METHOD_LENGTH, parseRpc } from './jsonrpc.js';

const body = (v: unknown) => Buffer.from(JSON.stringify(v));

describe('parseRpc: method names', () => {
  it(`takes a name of ${MAX_METHOD_LENGTH} characters and refuses a longer one, saying why`, () => {
    const ok = 'm'.repeat(MAX_METHOD_LENGTH);
    expect(parseRpc(body({ jsonrpc: '2.0', id: 1, method: ok }))).toMatchObject({ kind: 'single', call: { method: ok } });
    expect(parseRpc(body({ jsonrpc: '2.0', id: 1, method: `${ok}m` }))).toEqual({
      kind: 'invalid', id: 1, message: `invalid request: method name longer than ${MAX_METHOD_LENGTH} characters`,
    });
  });

  it('refuses a long name inside a batch for that element only', () => {
    const parsed = parseRpc(body([{ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }, { jsonrpc: '2.0', id: 2, method: 'x'.repeat(100_000) }]));
    expect(parsed.kind).toBe('batch');
    if (parsed.kind !== 'batch') return;
    expect(parsed.calls.map((c) => c.method)).toEqual(['eth_chainId']);
    expect(parsed.rejected).toEqual([{ jsonrpc: '2.0', id: 2, error: { code: -32600, message: `invalid request: method name longer than ${MAX_METHOD_LENGTH} characters` } }]);
  });

  it('keeps the plain answer for other invalid requests', () => {
    expect(parseRpc(body({ jsonrpc: '2.0', id: 3 }))).toEqual({ kind: 'invalid', id: 3, message: 'invalid request' });
    expect(parseRpc(body({ jsonrpc: '2.0', id: 3, method: '' }))).toEqual({ kind: 'invalid', id: 3, message: 'invalid request' });
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { globMatcher, MethodRouting } from './methods.js';

/** The old matcher: the glob as a regular expression, for comparison on small inputs only. */
function asRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
}

describe('globMatcher', () => {
  it('matches as `*` = any run of characters', () => {
    const m = globMatcher('*get*Logs*');
    expect(m('eth_getLogs')).toBe(true);
    expect(m('getLogs')).toBe(true);
    expect(m('eth_getFilterLogs')).toBe(true);
    expect(m('eth_Logsget')).toBe(false);
    expect(globMatcher('debug_*')('debug_traceCall')).toBe(true);
    expect(globMatcher('debug_*')('eth_debug_x')).toBe(false);
    expect(globMatcher('eth_call')('eth_call')).toBe(true);
    expect(globMatcher('eth_call')('eth_calls')).toBe(false);
    expect(globMatcher('*')('')).toBe(true);
    expect(globMatcher('a*a')('a')).toBe(false);
    expect(globMatcher('ab*bc')('abc')).toBe(false);
    expect(globMatcher('*ab*ab')('xabab')).toBe(true);
  });

  it('agrees with the regular expression it replaces', () => {
    const alphabet = fc.constantFrom('a', 'b', '*', '_', '.');
    fc.assert(fc.property(fc.string({ unit: alphabet, maxLength: 8 }), fc.string({ unit: fc.constantFrom('a', 'b', '_', '.'), maxLength: 12 }), (glob, text) => {
      expect(globMatcher(glob)(text)).toBe(asRegExp(glob).test(text));
    }), { numRuns: 2000 });
  });

  it('answers for a hostile name against a many-star glob (a backtracking regular expression never did)', () => {
    // 'a'×200k against *a*a*a*b: the old `^.*a.*a.*a.*b$` backtracks for hours on this.
    const name = 'a'.repeat(200_000);
    expect(globMatcher('*a*a*a*b')(name)).toBe(false);
    expect(globMatcher('*get*Logs*')(`get${'x'.repeat(900_000)}`)).toBe(false);
  });
});

describe('MethodRouting', () => {
  it('deny wins over allow', () => {
    const r = new MethodRouting({ allow: ['eth_*'], deny: ['*Logs'] });
    expect(r.serves('eth_call')).toBe(true);
    expect(r.serves('eth_getLogs')).toBe(false);
    expect(r.serves('net_version')).toBe(false);
    expect(new MethodRouting(undefined).restricted).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { SubscribeParamsError } from '../gateway.js';
import { SOLANA_ERROR_RULES, solanaCachePlan, solanaMethods, solanaProbe, solanaWebSocket } from './gateway.js';

const view = { head: 1000, finalized: 960 };
const SIG = '5'.repeat(88);
const ADDRESS = '11111111111111111111111111111111';

describe('Solana method classes', () => {
  it('a transaction is sent once: no hedge, no second upstream', () => {
    expect(solanaMethods.classOf('sendTransaction', [])).toEqual({ needsHead: true, idempotent: false, retry: false });
    expect(solanaMethods.classOf('getSlot', [])).toEqual({ needsHead: true, idempotent: true, retry: true });
    expect(solanaMethods.classOf('getTransaction', [SIG]).needsHead).toBe(false);
    expect(solanaMethods.nullMayLag('getTransaction')).toBe(true);
    expect(solanaMethods.isStandard('getProgramAccounts')).toBe(true);
    expect(solanaMethods.isStandard('eth_call')).toBe(false);
  });

  it('the node\'s own troubles fail over; skipped or unavailable slots are relayed', () => {
    const classOf = (code: number) => SOLANA_ERROR_RULES.find((r) => r.code === code)?.class;
    expect([classOf(-32005), classOf(-32016)]).toEqual(['upstream', 'upstream']);
    expect([classOf(-32004), classOf(-32007), classOf(-32009)]).toEqual(['caller', 'caller', 'caller']);
  });
});

describe('Solana cache plan', () => {
  it('only what a finalized slot holds, asked at finalized', () => {
    expect(solanaCachePlan.decide('getBlock', [960], view)).toEqual({ height: 960, resultBlock: 'block' });
    expect(solanaCachePlan.decide('getBlock', [961], view)).toBeUndefined();
    expect(solanaCachePlan.decide('getBlock', [900, { commitment: 'confirmed' }], view)).toBeUndefined();
    expect(solanaCachePlan.decide('getBlock', [900], undefined)).toBeUndefined();
    expect(solanaCachePlan.decide('getBalance', [ADDRESS], view)).toBeUndefined();
    expect(solanaCachePlan.decide('getTransaction', [SIG, { commitment: 'processed' }], view)).toBeUndefined();
    const tx = solanaCachePlan.decide('getTransaction', [SIG, { encoding: 'json' }], view)!;
    expect(solanaCachePlan.finalOf(tx, { slot: 950 }, view)).toEqual({ height: 950, hash: undefined });
    expect(solanaCachePlan.finalOf(tx, { slot: 970 }, view)).toBeUndefined();
    expect(solanaCachePlan.finalOf(tx, null, view)).toBeUndefined();
    const block = solanaCachePlan.decide('getBlock', [960], view)!;
    expect(solanaCachePlan.finalOf(block, { blockhash: 'Abc' }, view)).toEqual({ height: 960, hash: 'Abc' });
  });
});

describe('Solana probe', () => {
  it('reads getHealth, the version and the confirmed and finalized slots of one node', () => {
    const ok = JSON.stringify([{ id: 1, result: 'ok' }, { id: 2, result: { 'solana-core': '2.2.1' } }, { id: 3, result: 1000 }, { id: 4, result: 968 }]);
    expect(solanaProbe.read(200, ok)).toEqual({ version: '2.2.1', head: 1000, finalized: 968, unhealthy: undefined });
    const behind = JSON.stringify([{ id: 1, error: { code: -32005, message: 'Node is behind by 200 slots' } }, { id: 3, result: 800 }]);
    expect(solanaProbe.read(200, behind).unhealthy).toBe('Node is behind by 200 slots');
    expect(() => solanaProbe.read(200, '{"error":{}}')).toThrow();
  });
});

describe('Solana PubSub', () => {
  const kind = (name: string) => solanaWebSocket.kinds.find((k) => k.subscribe === `${name}Subscribe`)!;

  it('has the five kinds with their unsubscribes and notifications, and numeric ids', () => {
    expect(solanaWebSocket.kinds.map((k) => [k.subscribe, k.unsubscribe, k.notification])).toContainEqual(['slotSubscribe', 'slotUnsubscribe', 'slotNotification']);
    expect(solanaWebSocket.kinds).toHaveLength(5);
    expect(typeof solanaWebSocket.newId()).toBe('number');
    expect(solanaWebSocket.polling).toBeUndefined();
  });

  it('normalises params into a feed and names what is wrong', () => {
    expect(solanaWebSocket.normalise(kind('slot'), undefined)).toEqual({ type: 'slot', params: [] });
    expect(solanaWebSocket.normalise(kind('account'), [ADDRESS, { commitment: 'confirmed' }])).toEqual({ type: 'account', params: [ADDRESS, { commitment: 'confirmed' }] });
    expect(solanaWebSocket.normalise(kind('logs'), [{ mentions: [ADDRESS] }]).type).toBe('logs');
    const msg = (name: string, p: unknown) => { try { solanaWebSocket.normalise(kind(name), p); return ''; } catch (e) { expect(e).toBeInstanceOf(SubscribeParamsError); return (e as Error).message; } };
    expect(msg('account', ['0xabc'])).toMatch(/base58 address/);
    expect(msg('signature', [ADDRESS])).toMatch(/signature/);
    expect(msg('slot', [1])).toMatch(/no parameters/);
    expect(msg('logs', ['some'])).toMatch(/mentions/);
    expect(msg('program', [ADDRESS, 'x'])).toMatch(/config object/);
  });
});

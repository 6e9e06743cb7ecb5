import { describe, expect, it } from 'vitest';
import { nextOrder } from './transition.js';
import type { OrderRow } from './orders.js';

const order: OrderRow = {
  id: 7, payment_id: 'pay_x', account_id: 1, order_id: 'o-1', request_hash: 'h', network_environment_id: 1, network: 'eth', asset: 'native',
  decimals: 18, address: '0xabc', address_key: '0xabc', derivation_index: null, watch_id: 'w_1', owns_watch: 1, amount_raw: '100',
  received_raw: '0', status: 'pending', reason: null, late: 0, overpaid: 0, lifecycle: 'pending', aml: null, seq: 0,
  expires_at: '2026-01-01T01:00:00.000Z', expires_ms: 1_767_229_200_000, monitor_until_ms: 1_767_315_600_000, open: 1,
  webhook_url: null, metadata: null, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
  held: 0, price_amount: null, price_currency: null, rate: null, rate_source: null, rate_at: null,
} as OrderRow;
const at = Date.parse('2026-01-01T00:10:00.000Z');

describe('nextOrder (the state machine step)', () => {
  it('appends the status to the lifecycle, bumps seq and stamps the time', () => {
    const seen = nextOrder(order, { status: 'seen', txHash: '0x1', receivedRaw: 60n, overpaid: false }, at);
    expect(seen).toMatchObject({ status: 'seen', lifecycle: 'pending>seen', seq: 1, received_raw: '60', overpaid: 0, open: 1, updated_at: '2026-01-01T00:10:00.000Z' });
    const paid = nextOrder(seen, { status: 'paid', txHash: '0x1', aml: { risk_level: 'low' } as never, receivedRaw: 120n, overpaid: true, close: true }, at);
    expect(paid).toMatchObject({ lifecycle: 'pending>seen>paid', seq: 2, overpaid: 1, open: 0, aml: '{"risk_level":"low"}' });
  });

  it('a failed or expired order keeps its reason unless the move gives one; other statuses clear it', () => {
    const expired = nextOrder(order, { status: 'expired', txHash: null, reason: 'partial' }, at);
    expect(expired.reason).toBe('partial');
    expect(nextOrder(expired, { status: 'expired', txHash: null }, at).reason).toBe('partial');
    expect(nextOrder(expired, { status: 'underpaid', txHash: null }, at).reason).toBeNull();
  });

  it('late sticks once set; aml null clears, undefined keeps; the late window moves only when given', () => {
    const late = nextOrder(order, { status: 'seen', txHash: null, late: true }, at);
    expect(nextOrder(late, { status: 'underpaid', txHash: null }, at).late).toBe(1);
    const screened = { ...order, aml: '{"risk_level":"high"}' };
    expect(nextOrder(screened, { status: 'underpaid', txHash: null }, at).aml).toBe(screened.aml);
    expect(nextOrder(screened, { status: 'aml_check', txHash: null, aml: null }, at).aml).toBeNull();
    expect(nextOrder(order, { status: 'expired', txHash: null }, at).monitor_until_ms).toBe(order.monitor_until_ms);
    expect(nextOrder(order, { status: 'expired', txHash: null, monitorUntilMs: 5 }, at).monitor_until_ms).toBe(5);
  });

  it('does not change the order it was given', () => {
    const copy = { ...order };
    nextOrder(order, { status: 'failed', txHash: null, reason: 'canceled', close: true }, at);
    expect(order).toEqual(copy);
  });
});

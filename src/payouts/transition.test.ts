import { describe, expect, it } from 'vitest';
import { IllegalMoveError, nextLine, PAYOUT_TRANSITIONS, webhookBody } from './transition.js';
import { PAYOUT_STATUSES } from '../wire/payouts.js';
import type { LineRow, PayoutRow } from './rows.js';

const line: LineRow = {
  id: 3, payout_pk: 1, account_id: 1, line_no: 1, network_environment_id: 1, network: 'eth', asset: 'native', decimals: 18,
  address: '0xAbC', address_key: '0xabc', amount_raw: '1000', price_amount: null, price_currency: null, rate: null, rate_source: null, rate_at: null,
  reference: 'r-1', status: 'awaiting_payment', lifecycle: 'awaiting_payment', seq: 0, watch_id: 'w_1', expected_tx: null, recorded_txs: null,
  tx_hash: null, event_id: null, block_height: null, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
};
const at = Date.parse('2026-01-01T00:10:00.000Z');

describe('nextLine (the payout state machine step)', () => {
  it('every status is in the table, and only canceled is final', () => {
    expect(Object.keys(PAYOUT_TRANSITIONS).sort()).toEqual([...PAYOUT_STATUSES].sort());
    expect(PAYOUT_STATUSES.filter((s) => PAYOUT_TRANSITIONS[s].length === 0)).toEqual(['canceled']);
  });

  it('sent records the transfer; a reorg back to awaiting_payment forgets it; completed can go back too', () => {
    const sent = nextLine(line, { status: 'sent', match: { txHash: '0x1', eventId: 9, blockHeight: 12 } }, at);
    expect(sent).toMatchObject({ status: 'sent', tx_hash: '0x1', event_id: 9, block_height: 12, seq: 1, lifecycle: 'awaiting_payment>sent', updated_at: '2026-01-01T00:10:00.000Z' });
    const completed = nextLine(sent, { status: 'completed', watchId: null }, at);
    expect(completed).toMatchObject({ status: 'completed', tx_hash: '0x1', watch_id: null, seq: 2 });
    const back = nextLine(completed, { status: 'awaiting_payment', match: null, watchId: 'w_2' }, at);
    expect(back).toMatchObject({ status: 'awaiting_payment', tx_hash: null, event_id: null, block_height: null, watch_id: 'w_2', lifecycle: 'awaiting_payment>sent>completed>awaiting_payment' });
  });

  it('refuses moves the table does not have', () => {
    expect(() => nextLine(line, { status: 'completed' }, at)).toThrow(IllegalMoveError);
    expect(() => nextLine({ ...line, status: 'canceled' }, { status: 'awaiting_payment' }, at)).toThrow(IllegalMoveError);
    expect(() => nextLine({ ...line, status: 'sent' }, { status: 'canceled' }, at)).toThrow(/a sent line cannot become canceled/);
  });

  it('an address given moves a refund on and is kept; the line given is not changed', () => {
    const copy = { ...line };
    const waiting = { ...line, status: 'awaiting_address', address: null, address_key: null };
    expect(nextLine(waiting, { status: 'awaiting_payment', address: { display: '0xDeF', key: '0xdef' } }, at)).toMatchObject({ address: '0xDeF', address_key: '0xdef' });
    expect(line).toEqual(copy);
  });

  it('webhook bodies: refund.<status> with the order, payout.<status> with the line', () => {
    const payout = { payout_id: 'rf_x', kind: 'refund', webhook_url: null } as PayoutRow;
    const r = JSON.parse(webhookBody({ payout, order: { payment_id: 'pay_1', order_id: 'o-1' }, assetSymbol: 'ETH' }, line, 'rf_x_1_0'));
    expect(r).toMatchObject({ event: 'refund.awaiting_payment', type: 'refund', refund_id: 'rf_x', payment_id: 'pay_1', order_id: 'o-1', amount: '0.000000000000001' });
    const p = JSON.parse(webhookBody({ payout: { ...payout, payout_id: 'po_y', kind: 'payout' }, assetSymbol: 'ETH' }, line, 'po_y_1_0'));
    expect(p).toMatchObject({ event: 'payout.awaiting_payment', type: 'payout_line', payout_id: 'po_y', line: 1 });
    expect(p.type).not.toBe('payout');
  });
});

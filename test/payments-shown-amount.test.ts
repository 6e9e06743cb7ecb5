import { describe, expect, it } from 'vitest';
import { covers, fromBaseUnits } from '../src/payments/amounts.js';
import { priceToBaseUnits } from '../src/payments/fiat.js';
import { DISPLAY_DECIMALS, displayDecimals, isOverpaid, roundUp, shownRaw } from '../src/payments/shown-amount.js';

// What the checkout asks a customer to pay (src/payments/shown-amount.ts): a fiat-priced
// order's amount rounded UP to what the asset's wallets show; the order keeps its exact amount.

describe('the amount a customer is shown', () => {
  it('19.99 EUR at 3000 EUR/ETH: the exact amount is 0.006663333333333334 ETH, the customer is asked 0.006664', () => {
    const exact = priceToBaseUnits('19.99', '3000', 18);
    expect(fromBaseUnits(exact, 18)).toBe('0.006663333333333334');
    const order = { amount_raw: exact.toString(), decimals: 18, rate: '3000' };
    const shown = shownRaw(order, 'ETH', exact);
    expect(fromBaseUnits(shown, 18)).toBe('0.006664');
    // Paying it covers the order with no tolerance at all, and it is not an overpayment.
    expect(covers(shown, exact, 0)).toBe(true);
    expect(isOverpaid(order, 'ETH', shown)).toBe(false);
    // Overpaid is a whole display step (10^12 wei) or more above the exact amount.
    expect(isOverpaid(order, 'ETH', shown + 1n)).toBe(false);
    expect(isOverpaid(order, 'ETH', exact + 10n ** 12n - 1n)).toBe(false);
    expect(isOverpaid(order, 'ETH', exact + 10n ** 12n)).toBe(true);
    // Still a payment short of the exact amount is short.
    expect(covers(exact - 1n, exact, 0)).toBe(false);
  });

  it('rounds up, never down, and leaves an amount already on the step alone', () => {
    expect(roundUp(6_663_333_333_333_334n, 18, 6)).toBe(6_664_000_000_000_000n);
    expect(roundUp(6_663_000_000_000_001n, 18, 6)).toBe(6_664_000_000_000_000n);
    expect(roundUp(6_663_000_000_000_000n, 18, 6)).toBe(6_663_000_000_000_000n);
    expect(roundUp(1n, 18, 6)).toBe(1_000_000_000_000n);
    expect(roundUp(21_728_261n, 6, 2)).toBe(21_730_000n);
    // No rounding at or past the asset's own decimals.
    expect(roundUp(51_481n, 8, 8)).toBe(51_481n);
    for (let i = 0; i < 2000; i++) {
      const raw = BigInt(Math.floor(Math.random() * 1e15)) * 1000n + BigInt(i);
      const up = roundUp(raw, 18, 6);
      expect(up >= raw && up - raw < 10n ** 12n && up % 10n ** 12n === 0n, String(raw)).toBe(true);
    }
  });

  it('per asset: whole satoshis, 6 decimals of ETH, cents of a stablecoin; never more than the asset has', () => {
    expect(displayDecimals('BTC', 8, '97123.45')).toBe(8);
    expect(displayDecimals('ETH', 18, '3000')).toBe(6);
    expect(displayDecimals('eth', 18, '3000')).toBe(6);
    expect(displayDecimals('USDT', 6, '0.92')).toBe(2);
    expect(displayDecimals('USDT', 18, '0.92')).toBe(2);
    expect(displayDecimals('TRX', 6, '0.25')).toBe(6);
    expect(displayDecimals('XLM', 7, '0.3')).toBe(7);
    for (const [symbol, d] of Object.entries(DISPLAY_DECIMALS)) expect(displayDecimals(symbol, 1, '1'), symbol).toBe(Math.min(d, 1));
    // 50 USD at 97123.45 USD/BTC: 0.00051481 BTC, already whole satoshis.
    const btc = priceToBaseUnits('50', '97123.45', 8);
    expect(shownRaw({ amount_raw: btc.toString(), decimals: 8, rate: '97123.45' }, 'BTC', btc)).toBe(btc);
    // 19.99 EUR at 0.92 EUR/USDT: 21.728261 USDT exact, 21.73 shown (at most a cent more).
    const usdt = priceToBaseUnits('19.99', '0.92', 6);
    expect(fromBaseUnits(shownRaw({ amount_raw: usdt.toString(), decimals: 6, rate: '0.92' }, 'USDT', usdt), 6)).toBe('21.73');
  });

  it('an asset not in the table: a step worth at most a thousandth of the currency unit at the order\'s rate', () => {
    // 2500 EUR per unit: 10^-7 × 2500 = 0.00025 ≤ 0.001, 10^-6 × 2500 = 0.0025 > 0.001.
    expect(displayDecimals('NEWCOIN', 18, '2500')).toBe(7);
    expect(displayDecimals('NEWCOIN', 18, '0.001')).toBe(0);
    expect(displayDecimals('NEWCOIN', 18, '0.5')).toBe(3);
    expect(displayDecimals('NEWCOIN', 4, '2500')).toBe(4);
    // Priced in the asset: nothing to round, the merchant's digits are theirs.
    expect(displayDecimals('NEWCOIN', 18, null)).toBe(18);
  });

  it('an order priced in the asset is shown exactly as the merchant set it', () => {
    const order = { amount_raw: '12345678901234567', decimals: 18, rate: null };
    expect(shownRaw(order, 'ETH', 12_345_678_901_234_567n)).toBe(12_345_678_901_234_567n);
    expect(isOverpaid(order, 'ETH', 12_345_678_901_234_568n)).toBe(true);
  });
  it('paid in parts as the page asks (a part off the step, then the shown rest): covered, never overpaid, whatever the first part', () => {
    const cases: Array<[string, string, number, string]> = [['19.99', '3000', 18, 'ETH'], ['19.99', '0.92', 6, 'USDT'], ['7', '2500', 18, 'NEWCOIN'], ['50', '97123.45', 8, 'BTC'], ['3', '0.5', 0, 'ZERO']];
    for (const [price, rate, decimals, symbol] of cases) {
      const exact = priceToBaseUnits(price, rate, decimals);
      const order = { amount_raw: exact.toString(), decimals, rate };
      for (let i = 0; i < 500; i++) {
        const first = i < 3 ? [1n, exact - 1n, exact / 2n + 1n][i]! : BigInt(Math.floor(Math.random() * Number(exact)));
        if (first <= 0n || first >= exact) continue;
        const total = first + shownRaw(order, symbol, exact - first);
        expect(covers(total, exact, 0), `${symbol} ${first}`).toBe(true);
        expect(isOverpaid(order, symbol, total), `${symbol} ${first}`).toBe(false);
      }
      expect(isOverpaid(order, symbol, shownRaw(order, symbol, exact)), symbol).toBe(false);
    }
  });
});

import { describe, expect, it } from 'vitest';
import type { WatchLookup, WatchRef } from '../family.js';
import { matchStellarPayments, stroops } from './chain.js';

type HorizonPayment = Parameters<typeof matchStellarPayments>[2][number];

const A = 'GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H';
const B = 'GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7';
const C = 'GCEZWKCA5VLDNRLN3RPRJMRZOX3Z6G5CHCGSNFHEYVXM3XOJMDS674JZ';
const ISSUER = 'GDUKMGUGDZQK6YHYA5Z6AY2G4XDSZPSZ3SW5UN3ARVMO6QSRDWP5YLEX';

/** Watches by address on environment 1. */
function lookup(watched: Record<string, string>): WatchLookup {
  const refs = new Map<string, WatchRef[]>(Object.entries(watched).map(([address, watchId]) => [address, [{ watchId, accountId: 1, network: 'xlm', address }]]));
  return { lookup: (envId, key) => (envId === 1 ? refs.get(key) : undefined), size: (envId) => (envId === 1 ? refs.size : 0) };
}

const pay = (p: Partial<HorizonPayment>): HorizonPayment => ({ type: 'payment', transaction_hash: 'aa', transaction_successful: true, from: A, to: B, amount: '1.0000000', asset_type: 'native', ...p } as HorizonPayment);

describe('Stellar payments matched to watches', () => {
  it('a native payment: a payment hit for the receiver, a payout for the sender, in stroops, no token', () => {
    const hits = matchStellarPayments(lookup({ [A]: 'wa', [B]: 'wb' }), 1, [pay({ amount: '10.5000000' })]);
    expect(hits.map((h) => [h.watch.watchId, h.type, h.direction, h.from, h.to, h.token, h.amount, h.logIndex])).toEqual([
      ['wa', 'payout', 'out', A, B, null, '105000000', null],
      ['wb', 'payment', 'in', A, B, null, '105000000', null],
    ]);
  });

  it('an issued asset is CODE:ISSUER; a path payment sends one asset and delivers another', () => {
    const [issued] = matchStellarPayments(lookup({ [B]: 'wb' }), 1, [pay({ asset_type: 'credit_alphanum4', asset_code: 'USDC', asset_issuer: ISSUER })]);
    expect(issued!.token).toBe(`USDC:${ISSUER}`);
    const path = pay({
      type: 'path_payment_strict_send', asset_type: 'credit_alphanum4', asset_code: 'USDC', asset_issuer: ISSUER, amount: '2.0000000',
      source_asset_type: 'native', source_amount: '20.0000000',
    });
    const hits = matchStellarPayments(lookup({ [A]: 'wa', [B]: 'wb' }), 1, [path]);
    expect(hits.map((h) => [h.type, h.token, h.amount])).toEqual([['payout', null, '200000000'], ['payment', `USDC:${ISSUER}`, '20000000']]);
  });

  it('an account creation funds the new account from its funder', () => {
    const hits = matchStellarPayments(lookup({ [C]: 'wc' }), 1, [pay({ type: 'create_account', from: undefined, to: undefined, funder: A, account: C, starting_balance: '5.0000000' })]);
    expect(hits.map((h) => [h.type, h.from, h.to, h.amount])).toEqual([['payment', A, C, '50000000']]);
  });

  it('failed transactions, other operations, unwatched addresses and other environments give nothing', () => {
    const reg = lookup({ [B]: 'wb' });
    expect(matchStellarPayments(reg, 1, [pay({ transaction_successful: false })])).toEqual([]);
    expect(matchStellarPayments(reg, 1, [pay({ type: 'change_trust' })])).toEqual([]);
    expect(matchStellarPayments(reg, 1, [pay({ to: C })])).toEqual([]);
    expect(matchStellarPayments(reg, 2, [pay({})])).toEqual([]);
  });

  it('amounts: seven decimals to stroops exactly, beyond 2^53 too', () => {
    expect(stroops('0.0000001')).toBe('1');
    expect(stroops('1')).toBe('10000000');
    expect(stroops('922337203685.4775807')).toBe('9223372036854775807');
    expect(stroops(undefined)).toBe('0');
  });
});

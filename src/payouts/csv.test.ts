import { describe, expect, it } from 'vitest';
import { MAX_PAYOUT_LINES } from '../wire/payouts.js';
import { addDecimals, CsvError, parsePayoutCsv, totalsOf } from './csv.js';

describe('payouts CSV', () => {
  it('reads RFC 4180 records: quoted commas and quotes, CRLF, a BOM, columns in any order, blank lines skipped', () => {
    const text = '\uFEFFAmount,network,Address,reference\r\n'
      + '1.5,ltc-mainnet,ltc1qa,"order ""7"", shipped"\r\n'
      + '\r\n'
      + '2,ltc-mainnet,ltc1qb,two\n';
    const { lines, fileLines } = parsePayoutCsv(text);
    expect(lines).toEqual([
      { network: 'ltc-mainnet', address: 'ltc1qa', amount: '1.5', reference: 'order "7", shipped' },
      { network: 'ltc-mainnet', address: 'ltc1qb', amount: '2', reference: 'two' },
    ]);
    // The second record is on the file's fourth line (the blank third is skipped).
    expect(fileLines).toEqual([2, 4]);
    // A quoted line break belongs to its record: the next record's number counts it.
    expect(() => parsePayoutCsv('network,address,amount\n"x\ny",a,1\nx,y,0\n')).toThrow(/^line 4: amount/);
  });

  it('a currency makes the amount a fiat price', () => {
    const { lines } = parsePayoutCsv('network,asset,address,amount,currency\neth-mainnet,USDC,0xabc,19.99,EUR\n');
    expect(lines).toEqual([{ network: 'eth-mainnet', asset: 'USDC', address: '0xabc', price_amount: '19.99', price_currency: 'EUR' }]);
  });

  it('names the line and the field of what is wrong', () => {
    const bad = (text: string) => { try { parsePayoutCsv(text); return 'accepted'; } catch (e) { expect(e).toBeInstanceOf(CsvError); return (e as CsvError).message; } };
    expect(bad('')).toMatch(/the file is empty/);
    expect(bad('network,address\n')).toMatch(/no "amount" column/);
    expect(bad('network,address,amount,colour\nx,y,1,red\n')).toMatch(/line 1: unknown column "colour"/);
    expect(bad('network,address,amount\n')).toMatch(/a header and no lines/);
    expect(bad('network,address,amount\nx,y,1\nx,y,0\n')).toMatch(/^line 3: amount: must be a positive decimal/);
    expect(bad('network,address,amount\nx,y,1e5\n')).toMatch(/^line 2: amount/);
    expect(bad('network,address,amount\nx,,1\n')).toMatch(/^line 2: address: is empty/);
    expect(bad('network,address,amount\nx,"a b",1\n')).toMatch(/^line 2: address: must not contain spaces/);
    expect(bad('network,address,amount,currency\nx,y,1,eur\n')).toMatch(/^line 2: currency: must be an ISO 4217 code/);
    expect(bad('network,address,amount,reference\nx,y,1,"a\u001b[2Jb"\n')).toMatch(/^line 2: reference: .*no control characters/);
    expect(bad('network,address,amount\nx,y\n')).toMatch(/^line 2: has 2 fields, the header 3/);
    expect(bad('network,address,amount\nx,"y,1\n')).toMatch(/^line 2: a quoted field is not closed/);
    expect(bad(`network,address,amount\n${'x,y,1\n'.repeat(MAX_PAYOUT_LINES + 1)}`)).toMatch(/at most 1000/);
    expect(parsePayoutCsv(`network,address,amount\n${'x,y,1\n'.repeat(MAX_PAYOUT_LINES)}`).lines).toHaveLength(MAX_PAYOUT_LINES);
  });

  it('sums decimals exactly, per network and unit', () => {
    expect(addDecimals('0.1', '0.2')).toBe('0.3');
    expect(addDecimals('1.50', '1.50')).toBe('3');
    expect(addDecimals('100', '0.000000000000000001')).toBe('100.000000000000000001');
    expect(addDecimals('10.0', '0')).toBe('10');
    const { lines } = parsePayoutCsv('network,asset,address,amount,currency\nn,,a,0.1,\nn,,b,0.2,\nn,USDC,c,5,\nn,USDC,d,5,EUR\n');
    expect(totalsOf(lines)).toEqual([
      { network: 'n', unit: 'native', lines: 2, total: '0.3' },
      { network: 'n', unit: 'USDC', lines: 1, total: '5' },
      { network: 'n', unit: 'EUR', lines: 1, total: '5' },
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { InvalidAddressError } from '../address.js';
import { parseTronAddress } from './address.js';

describe('Tron addresses', () => {
  it('addresses: T… and 41… forms of one account; checksums checked', () => {
    const usdt = parseTronAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
    expect(usdt).toEqual({ display: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', key: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c' });
    expect(parseTronAddress('41A614F803B6FD780986A42C78EC9C7F77E6DED13C')).toEqual(usdt);
    for (const bad of ['TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u', '42a614f803b6fd780986a42c78ec9c7f77e6ded13c', 'a614f803b6fd780986a42c78ec9c7f77e6ded13c', '']) {
      expect(() => parseTronAddress(bad), bad).toThrow(InvalidAddressError);
    }
  });


});

import { describe, expect, it } from 'vitest';
import { parseStellarAddress } from './address.js';
import { stellarAccount } from '../../../test/helpers/fake-horizon.js';

describe('Stellar addresses', () => {

  it('Stellar StrKey account ids: version byte and CRC16', () => {
    const ok = 'GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H';
    expect(parseStellarAddress(ok).display).toBe(ok);
    expect(() => parseStellarAddress(`${ok.slice(0, 10)}A${ok.slice(11)}`)).toThrow(/checksum/);
    // A valid StrKey of another kind (a secret seed, S...) is not an account id.
    expect(() => parseStellarAddress('SBZVMB74Z76QZ3ZOY7UTDFYKMEGKW5XFJEB6PFKBF4UYSSWHG4EDH7PY')).toThrow(/Stellar account id/);
  });
});

describe('Stellar addresses: forms and round trip', () => {
  const ok = 'GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H';
  it('lower case and surrounding space read as the same account; display and key are its upper-case StrKey', () => {
    expect(parseStellarAddress(` ${ok.toLowerCase()} `)).toEqual({ display: ok, key: ok });
    expect(parseStellarAddress(parseStellarAddress(ok).display)).toEqual(parseStellarAddress(ok));
  });

  it('random account ids (an independent encoder) round-trip', () => {
    for (let i = 0; i < 20; i++) {
      const a = stellarAccount();
      expect(parseStellarAddress(a)).toEqual({ display: a, key: a });
    }
  });

  it('wrong length or alphabet: the message says what an account id is', () => {
    for (const bad of ['', ok.slice(0, 55), `${ok}A`, `${ok.slice(0, 55)}1`, `M${ok.slice(1)}`]) {
      expect(() => parseStellarAddress(bad), bad).toThrow(/Stellar account id/);
    }
  });
});

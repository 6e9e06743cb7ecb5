import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hotp, matchTotp, otpauthUri, secretFromBase32, totp, totpStep } from './totp.js';

// TOTP against RFC 6238's own vectors (against oathtool: test/totp.test.ts).

describe('RFC 6238 Appendix B (SHA-1)', () => {
  const secret = Buffer.from('12345678901234567890', 'ascii');
  const rows: Array<[number, string]> = [
    [59, '94287082'], [1111111109, '07081804'], [1111111111, '14050471'],
    [1234567890, '89005924'], [2000000000, '69279037'], [20000000000, '65353130'],
  ];
  it.each(rows)('T = %i s gives %s (8 digits, as the RFC prints them)', (seconds, code) => {
    expect(totp(secret, seconds * 1000, 8)).toBe(code);
    // The 6-digit code apps show is the same number's low six digits.
    expect(totp(secret, seconds * 1000)).toBe(code.slice(2));
  });

  it('RFC 4226 Appendix D HOTP values', () => {
    const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
    expect(expected.map((_, i) => hotp(secret, i))).toEqual(expected);
  });
});

describe('matching', () => {
  const secret = randomBytes(20);
  const now = 1_700_000_015_000;

  it('accepts the steps either side of now and says which step matched', () => {
    for (const d of [-1, 0, 1]) expect(matchTotp(secret, totp(secret, now + d * 30_000), now)).toBe(totpStep(now) + d);
  });

  it('refuses two steps away, wrong lengths and other secrets', () => {
    expect(matchTotp(secret, totp(secret, now + 60_000), now)).toBeUndefined();
    expect(matchTotp(secret, totp(secret, now - 60_000), now)).toBeUndefined();
    const code = totp(secret, now);
    expect(matchTotp(secret, `${code}0`, now)).toBeUndefined();
    expect(matchTotp(secret, code.slice(1), now)).toBeUndefined();
    expect(matchTotp(secret, '', now)).toBeUndefined();
    // Bytes, not characters, are compared: a non-ASCII code is no code (it threw before).
    expect(matchTotp(secret, `${code.slice(0, 5)}é`, now)).toBeUndefined();
    expect(matchTotp(secret, '１２３４５６', now)).toBeUndefined();
    expect(matchTotp(randomBytes(20), code, now)).toBeUndefined();
  });

  it('the otpauth URI carries the secret in base32 and the parameters apps read', () => {
    const uri = new URL(otpauthUri(secret, 'a@example.com', 'rpcctl'));
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe('/rpcctl:a@example.com');
    expect(Buffer.from(secretFromBase32(uri.searchParams.get('secret')!)).equals(secret)).toBe(true);
    expect(Object.fromEntries(uri.searchParams)).toMatchObject({ issuer: 'rpcctl', algorithm: 'SHA1', digits: '6', period: '30' });
  });
});

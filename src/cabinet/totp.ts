import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { base32nopad } from '@scure/base';

/**
 * TOTP (RFC 6238 over RFC 4226's HOTP) on node:crypto: HMAC-SHA-1, 6 digits, 30-second steps,
 * as every authenticator app reads an otpauth:// URI. It is the few lines below rather than a
 * library because the sign-in needs the matched step (to refuse a code twice) and a
 * comparison in constant time over the whole window, which is easier to see here than to
 * check in someone else's API; test/totp.test.ts holds it to the RFC's vectors and to oathtool.
 */

export const TOTP_STEP_S = 30;
export const TOTP_DIGITS = 6;
/** Steps accepted either side of now: a phone's clock a little off, a code typed at the turn. */
export const TOTP_WINDOW = 1;

/** RFC 4226 section 5.3: HMAC of the counter, dynamic truncation, the low `digits` decimal digits. */
export function hotp(secret: Uint8Array, counter: number, digits = TOTP_DIGITS): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', secret).update(msg).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const bin = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(bin % 10 ** digits).padStart(digits, '0');
}

export const totpStep = (nowMs: number) => Math.floor(nowMs / 1000 / TOTP_STEP_S);

export function totp(secret: Uint8Array, nowMs: number, digits = TOTP_DIGITS): string {
  return hotp(secret, totpStep(nowMs), digits);
}

const DIGITS = new RegExp(`^\\d{${TOTP_DIGITS}}$`);

/**
 * The step whose code `code` is, within the window around `nowMs`, or undefined. Every step of
 * the window is computed and compared in constant time, so the time taken says nothing about
 * which digits or which step matched.
 */
export function matchTotp(secret: Uint8Array, code: string, nowMs: number): number | undefined {
  // Only digits reach the comparison: it compares bytes, and a non-ASCII character is several.
  if (!DIGITS.test(code)) return undefined;
  const given = Buffer.from(code);
  const now = totpStep(nowMs);
  let matched: number | undefined;
  for (let step = now - TOTP_WINDOW; step <= now + TOTP_WINDOW; step++) {
    const same = timingSafeEqual(Buffer.from(hotp(secret, step)), given);
    if (same && matched === undefined) matched = step;
  }
  return matched;
}

/** 160 random bits, the HMAC-SHA-1 key length RFC 4226 recommends. */
export function newTotpSecret(): Uint8Array {
  return randomBytes(20);
}

export const secretToBase32 = (secret: Uint8Array) => base32nopad.encode(secret);
export const secretFromBase32 = (text: string) => base32nopad.decode(text.replace(/[\s=]/g, '').toUpperCase());

/** The key URI authenticator apps scan (Google Authenticator's format, which all of them read). */
export function otpauthUri(secret: Uint8Array, account: string, issuer: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  // encodeURIComponent, not URLSearchParams: some apps show a form-encoded space as "+".
  const q = `secret=${secretToBase32(secret)}&issuer=${encodeURIComponent(issuer)}&algorithm=SHA1&digits=${TOTP_DIGITS}&period=${TOTP_STEP_S}`;
  return `otpauth://totp/${label}?${q}`;
}

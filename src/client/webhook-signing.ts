import { createHmac } from 'node:crypto';
import { safeEqualHex, type Body } from './signing.js';

/** X-Signature of an outbound webhook: HMAC-SHA256 over `{timestamp}.{raw body}`. */
export function signWebhook(secret: string, timestamp: number | string, body: Body): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

export interface VerifyWebhookOptions {
  secret: string;
  timestamp: string | number | undefined;
  signature: string | undefined;
  body: Body;
  /** Reject deliveries whose timestamp is further than this from now (seconds); 0 disables. */
  toleranceSeconds?: number;
  now?: number;
}

export type WebhookVerdict = { ok: true } | { ok: false; reason: string };

export function verifyWebhook(opts: VerifyWebhookOptions): WebhookVerdict {
  if (opts.signature === undefined || opts.signature === '') return { ok: false, reason: 'missing X-Signature' };
  if (opts.timestamp === undefined || !/^\d+$/.test(String(opts.timestamp))) return { ok: false, reason: 'missing or invalid X-Timestamp' };
  const tolerance = opts.toleranceSeconds ?? 300;
  if (tolerance > 0) {
    const now = opts.now ?? Math.floor(Date.now() / 1000);
    if (Math.abs(now - Number(opts.timestamp)) > tolerance) return { ok: false, reason: 'timestamp outside tolerance' };
  }
  const expected = signWebhook(opts.secret, opts.timestamp, opts.body);
  return safeEqualHex(expected, opts.signature.toLowerCase()) ? { ok: true } : { ok: false, reason: 'signature mismatch' };
}

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalString, sha256Hex, sign, verify, signedPath, signWebhook, verifyWebhook } from './index.js';

const vectors = JSON.parse(readFileSync(new URL('../../test/fixtures/signatures.json', import.meta.url), 'utf8')) as {
  cases: Array<{ name: string; secret: string; timestamp: number; method: string; request_target: string; body: string; body_sha256: string; canonical_string: string; signature: string }>;
};
const webhookVectors = JSON.parse(readFileSync(new URL('../../test/fixtures/webhook-signatures.json', import.meta.url), 'utf8')) as {
  cases: Array<{ name: string; secret: string; timestamp: number; body: string; signed_input: string; signature: string }>;
};

describe('Public API request signing', () => {
  it('has vectors to check', () => expect(vectors.cases.length).toBeGreaterThanOrEqual(7));

  for (const v of vectors.cases) {
    it(`reproduces "${v.name}"`, () => {
      const input = { secret: v.secret, timestamp: v.timestamp, method: v.method, path: v.request_target, body: v.body };
      expect(sha256Hex(v.body)).toBe(v.body_sha256);
      expect(canonicalString(input)).toBe(v.canonical_string);
      expect(sign(input)).toBe(v.signature);
      expect(verify({ ...input, signature: v.signature })).toBe(true);
    });
  }

  it('signs body bytes exactly: re-serialised JSON does not verify', () => {
    const v = vectors.cases.find((c) => c.name.startsWith('Body with whitespace'))!;
    const reserialised = JSON.stringify(JSON.parse(v.body));
    expect(verify({ secret: v.secret, timestamp: v.timestamp, method: v.method, path: v.request_target, body: reserialised, signature: v.signature })).toBe(false);
  });

  it('hashes a Uint8Array body the same as its UTF-8 string', () => {
    const v = vectors.cases.find((c) => c.name.includes('non-ASCII'))!;
    expect(sign({ secret: v.secret, timestamp: v.timestamp, method: v.method, path: v.request_target, body: Buffer.from(v.body, 'utf8') })).toBe(v.signature);
  });

  it('rejects a wrong, truncated or differently-cased-method signature', () => {
    const v = vectors.cases[0]!;
    const input = { secret: v.secret, timestamp: v.timestamp, method: v.method, path: v.request_target, body: v.body };
    expect(verify({ ...input, signature: v.signature.slice(0, -1) })).toBe(false);
    expect(verify({ ...input, signature: `${v.signature.slice(0, -1)}0` === v.signature ? `${v.signature.slice(0, -1)}1` : `${v.signature.slice(0, -1)}0` })).toBe(false);
    expect(verify({ ...input, secret: 'other', signature: v.signature })).toBe(false);
    // The method is uppercased before signing: `get` signs the same as `GET`.
    expect(sign({ ...input, method: 'get' })).toBe(v.signature);
  });

  it('drops host, query and fragment from the signed path', () => {
    expect(signedPath('https://api.example/v1/endpoints/usage?days=7')).toBe('/v1/endpoints/usage');
    expect(signedPath('/v1/account#x')).toBe('/v1/account');
  });
});

describe('outbound webhook signing', () => {
  for (const v of webhookVectors.cases) {
    it(`reproduces "${v.name}"`, () => {
      expect(signWebhook(v.secret, v.timestamp, v.body)).toBe(v.signature);
      expect(verifyWebhook({ secret: v.secret, timestamp: String(v.timestamp), signature: v.signature, body: v.body, now: v.timestamp })).toEqual({ ok: true });
    });
  }

  it('refuses a tampered body, a stale timestamp and a missing signature', () => {
    const v = webhookVectors.cases[0]!;
    expect(verifyWebhook({ secret: v.secret, timestamp: v.timestamp, signature: v.signature, body: `${v.body} `, now: v.timestamp }).ok).toBe(false);
    expect(verifyWebhook({ secret: v.secret, timestamp: v.timestamp, signature: v.signature, body: v.body, now: v.timestamp + 301 })).toEqual({ ok: false, reason: 'timestamp outside tolerance' });
    expect(verifyWebhook({ secret: v.secret, timestamp: v.timestamp, signature: undefined, body: v.body }).ok).toBe(false);
  });
});

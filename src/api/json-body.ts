import { HttpError } from './http.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lenientUtf8 = new TextDecoder('utf-8');

/**
 * The JSON object of a request body. Text that is not valid Unicode (bytes that are not UTF-8,
 * `\ud800` escapes without their pair) is refused naming the field, instead of being stored
 * as U+FFFD or as a string no other system can encode.
 */
export function parseJsonBody(body: Buffer): unknown {
  let text: string;
  let badBytes = false;
  try {
    text = strictUtf8.decode(body);
  } catch {
    badBytes = true;
    text = lenientUtf8.decode(body);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, badBytes ? 'Request body is not valid UTF-8' : 'Malformed JSON body');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new HttpError(400, 'Request body must be a JSON object');
  const where = findIllFormed(value, '', badBytes);
  if (where !== undefined) {
    throw new HttpError(400, `${where.path || 'body'}: ${where.kind === 'bytes' ? 'not valid UTF-8' : 'not valid Unicode (lone surrogate)'}`);
  }
  if (badBytes) throw new HttpError(400, 'Request body is not valid UTF-8');
  return value;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

interface IllFormed { path: string; kind: 'bytes' | 'surrogate' }

function check(s: string, path: string, badBytes: boolean): IllFormed | undefined {
  if (LONE_SURROGATE.test(s)) return { path, kind: 'surrogate' };
  // Invalid bytes were decoded as U+FFFD; the first string holding one is where they were.
  if (badBytes && s.includes('\ufffd')) return { path, kind: 'bytes' };
  return undefined;
}

function findIllFormed(value: unknown, path: string, badBytes: boolean): IllFormed | undefined {
  if (typeof value === 'string') return check(value, path, badBytes);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findIllFormed(value[i], `${path}[${i}]`, badBytes);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const keyPath = path ? `${path}.${k}` : k;
      const inKey = check(k, keyPath, badBytes);
      if (inKey) return inKey;
      const found = findIllFormed(v, keyPath, badBytes);
      if (found) return found;
    }
  }
  return undefined;
}

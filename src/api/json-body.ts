import { jsonDeeperThan, MAX_JSON_DEPTH } from '../util/json-depth.js';
import { HttpError } from './http.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lenientUtf8 = new TextDecoder('utf-8');

/**
 * The JSON object of a request body. Text that is not valid Unicode (bytes that are not UTF-8,
 * `\ud800` escapes without their pair) is refused naming the field, instead of being stored
 * as U+FFFD or as a string no other system can encode.
 */
export function parseJsonBody(body: Buffer): unknown {
  if (jsonDeeperThan(body)) throw new HttpError(400, `Request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
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

/**
 * The first ill-formed string (value or key), in document order. Walked with an explicit stack
 * rather than recursion: the depth check above bounds nesting, but this must not depend on it.
 */
function findIllFormed(root: unknown, rootPath: string, badBytes: boolean): IllFormed | undefined {
  const stack: Array<{ value: unknown; path: string }> = [{ value: root, path: rootPath }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      const found = check(value, path, badBytes);
      if (found) return found;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${path}[${i}]` });
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      // A key is checked just before its value, as text like any other string.
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i]!;
        const keyPath = path ? `${path}.${k}` : k;
        stack.push({ value: v, path: keyPath }, { value: k, path: keyPath });
      }
    }
  }
  return undefined;
}

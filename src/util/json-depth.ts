/**
 * How deep a JSON request body may nest. Real requests stay within a dozen levels; what is
 * deeper is an attack on whatever walks the value recursively (JSON.stringify, validators,
 * upstream nodes), so it is refused before anything parses it.
 */
export const MAX_JSON_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * True when a JSON text nests arrays/objects deeper than `max`, found by one pass, no recursion
 * and no parse: brackets inside strings are text. Bytes or a string alike: the characters that
 * matter are ASCII, and UTF-8 never puts ASCII bytes inside a multi-byte character. Malformed
 * JSON is left to the parser; only its depth is judged here.
 */
export function jsonDeeperThan(json: Uint8Array | string, max = MAX_JSON_DEPTH): boolean {
  // Each level takes at least one byte: a short text cannot be too deep.
  if (json.length <= max) return false;
  // Two copies of one loop: a shared accessor would cost more than the scan (the gateway's hot path).
  return typeof json === 'string' ? stringDeeperThan(json, max) : bytesDeeperThan(json, max);
}

function bytesDeeperThan(json: Uint8Array, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json[i]!;
    if (c === QUOTE) {
      // Straight to the closing quote; an escaped character is skipped whole.
      for (i++; i < json.length; i++) {
        const d = json[i]!;
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

function stringDeeperThan(json: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < json.length; i++) {
        const d = json.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

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
 * True when a JSON text nests arrays/objects deeper than `max`, found by one pass over the
 * bytes, no recursion and no parse: brackets inside strings are text. UTF-8 never puts these
 * ASCII bytes inside a multi-byte character, so bytes are scanned as they came. Malformed JSON
 * is left to the parser; only its depth is judged here.
 */
export function jsonDeeperThan(body: Uint8Array, max = MAX_JSON_DEPTH): boolean {
  // Each level takes at least one byte: a short body cannot be too deep.
  if (body.length <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const b = body[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) {
      inString = true;
    } else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

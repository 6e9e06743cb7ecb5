import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { RpcctlError } from '../util/errors.js';
import { pathKey } from '../util/zod.js';

/** A config that cannot be used: unreadable, invalid, a variable it names unset, a secret given twice. */
export class ConfigError extends RpcctlError {
  readonly code = 'E_CONFIG';
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * The config's secrets that may also come from a file (`<key>_file`), as Kubernetes Secrets
 * mounted as volumes and systemd credentials (`LoadCredential=`) provide them. A path here is
 * the secret's place in the config; the file form is its last key with `_file` appended.
 */
export const SECRET_FIELDS: readonly string[] = [
  'store.url',
  'redis.url',
  'metrics.token',
  'payments.aml.http.api_key',
];

/** The variables the service reads secrets from, each with a `<NAME>_FILE` form. */
export const SECRET_VARIABLES: readonly string[] = ['RPCCTL_DATABASE_URL', 'RPCCTL_REDIS_URL', 'RPCCTL_MASTER_KEY'];

/** `${NAME}`, `${NAME:-default}`; `$${` is a literal `${`. Names as POSIX shells take them. */
const REFERENCE = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const WHOLE_REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$/;

export interface Interpolated {
  value: unknown;
  /**
   * Where a value was one reference alone (`port: ${PORT}`): the text a variable gave may stand
   * for a number or a boolean there, which the schema decides (see `coerceAt`).
   */
  whole: Array<Array<string | number>>;
}

/**
 * Replaces variable references in every string of a parsed config (never in keys). Done on the
 * parsed tree rather than the file's text, so a value holding quotes, `#` or newlines cannot
 * change the file's structure. A variable that is not set and has no default is refused with
 * its name and where the config names it; its value is never part of a message.
 */
export function interpolate(raw: unknown, env: NodeJS.ProcessEnv, source: string): Interpolated {
  const whole: Interpolated['whole'] = [];
  const walk = (v: unknown, path: Array<string | number>): unknown => {
    if (typeof v === 'string') {
      if (!v.includes('${')) return v;
      if (WHOLE_REFERENCE.test(v)) whole.push(path);
      return v.replace(REFERENCE, (match, name: string | undefined, fallback: string | undefined) => {
        if (name === undefined) return '${';
        const value = env[name];
        // `:-` as in the shell: an empty variable takes the default too.
        if (value !== undefined && (value !== '' || fallback === undefined)) return value;
        if (fallback !== undefined) return fallback;
        throw new ConfigError(`${source}: ${pathText(path)} names the environment variable ${name}, which is not set (set it, or give a default: \${${name}:-value})`);
      });
    }
    if (Array.isArray(v)) return v.map((x, i) => walk(x, [...path, i]));
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, [...path, k])]));
    }
    return v;
  };
  return { value: walk(raw, []), whole };
}

/**
 * A whole-reference value at `path` as the number or boolean its text spells, in place; false
 * when it spells neither (the schema's own message then stands).
 */
export function coerceAt(root: unknown, path: ReadonlyArray<PropertyKey>): boolean {
  let parent: unknown = root;
  for (const p of path.slice(0, -1)) {
    if (parent === null || typeof parent !== 'object') return false;
    parent = (parent as Record<PropertyKey, unknown>)[p];
  }
  if (parent === null || typeof parent !== 'object') return false;
  const key = path.at(-1)!;
  const text = (parent as Record<PropertyKey, unknown>)[key];
  if (typeof text !== 'string') return false;
  let value: number | boolean;
  if (text === 'true' || text === 'false') value = text === 'true';
  else if (/^-?\d+(\.\d+)?$/.test(text.trim())) value = Number(text);
  else return false;
  (parent as Record<PropertyKey, unknown>)[key] = value;
  return true;
}

/**
 * Moves each `<secret>_file` of the config into its secret (read from the file, one trailing
 * newline dropped, as `echo` and `kubectl create secret --from-file` leave one). Both forms at
 * once is refused naming both: which one wins would be a guess.
 */
export function readSecretFiles(raw: unknown, source: string, read: (file: string) => string = readSecret): unknown {
  for (const field of SECRET_FIELDS) {
    const keys = field.split('.');
    let parent: unknown = raw;
    for (const k of keys.slice(0, -1)) parent = parent !== null && typeof parent === 'object' ? (parent as Record<string, unknown>)[k] : undefined;
    if (parent === null || typeof parent !== 'object' || Array.isArray(parent)) continue;
    const obj = parent as Record<string, unknown>;
    const key = keys.at(-1)!;
    const fileKey = `${key}_file`;
    if (!(fileKey in obj)) continue;
    if (key in obj) throw new ConfigError(`${source}: ${field} and ${field}_file are both set: give one`);
    const file = obj[fileKey];
    if (typeof file !== 'string' || file === '') throw new ConfigError(`${source}: ${field}_file: must be a file path`);
    delete obj[fileKey];
    obj[key] = readFrom(file, `${source}: ${field}_file`, read);
  }
  return raw;
}

/**
 * The environment with each secret variable's `<NAME>_FILE` read into `<NAME>`; the input is
 * left as it was. Both set is refused naming both.
 */
export function secretsFromFiles(env: NodeJS.ProcessEnv, read: (file: string) => string = readSecret): NodeJS.ProcessEnv {
  let out = env;
  for (const name of SECRET_VARIABLES) {
    const file = env[`${name}_FILE`];
    if (file === undefined || file === '') continue;
    if (env[name] !== undefined && env[name] !== '') throw new ConfigError(`${name} and ${name}_FILE are both set: give one`);
    if (out === env) out = { ...env };
    out[name] = readFrom(file, `${name}_FILE`, read);
  }
  return out;
}

function readFrom(file: string, what: string, read: (file: string) => string): string {
  let text: string;
  try {
    text = read(file);
  } catch (err) {
    // The path is named (it is no secret), the system's reason given; never the contents.
    throw new ConfigError(`${what}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const value = text.replace(/\r?\n$/, '');
  if (value === '') throw new ConfigError(`${what}: ${file} is empty`);
  return value;
}

/** A secret is a URL or a key: a file larger than this is not one (a wrong path, a log file). */
export const MAX_SECRET_FILE_BYTES = 64 * 1024;

/**
 * A regular file only, read to at most MAX_SECRET_FILE_BYTES. A reload reads these on the
 * event loop, so a FIFO with no writer (its open would block), `/dev/zero` or `/dev/stdin`
 * (never at an end) or a huge file must be refused, not waited on or read into memory.
 */
function readSecret(file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) throw new Error('not a regular file');
    const buf = Buffer.alloc(MAX_SECRET_FILE_BYTES + 1);
    let length = 0;
    for (let n; length < buf.length && (n = readSync(fd, buf, length, buf.length - length, null)) > 0;) length += n;
    if (length > MAX_SECRET_FILE_BYTES) throw new Error(`larger than ${MAX_SECRET_FILE_BYTES / 1024} KiB`);
    return buf.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

function pathText(path: ReadonlyArray<string | number>): string {
  if (path.length === 0) return 'the config';
  return path.reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${pathKey(p)}` : pathKey(p)), '');
}

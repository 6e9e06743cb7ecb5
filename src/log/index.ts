import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger } from 'pino';

export const LOG_FORMATS = ['json', 'text'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  format: LogFormat;
  level?: LogLevel;
  /** Where lines go; stderr by default. */
  stream?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Colours in the text format (a terminal without NO_COLOR). */
  color?: boolean;
}

/**
 * Field names that would carry a secret if a caller ever passed one; pino replaces their values
 * before a line is written. The first defence is not logging them at all.
 */
const REDACT = [
  'secret', '*.secret', 'api_key_secret', 'signature', '*.signature', 'password', '*.password', 'authorization',
  'headers.authorization', 'headers["x-signature"]', 'headers["x-api-key"]', 'headers.cookie', '*.headers.authorization',
  '*.headers["x-signature"]', '*.headers.cookie', 'url', '*.url', 'upstream_url',
];

/**
 * The service's structured logger: one JSON object per line (`json`), or pino-pretty's
 * readable lines (`text`). Every line has `time`, `level`, `msg` and, where it belongs to a
 * part of the service, `component`.
 */
export function createLogger(o: LoggerOptions): Logger {
  const children = new Set<WeakRef<Logger>>();
  const root = makeLogger(o, (child) => children.add(new WeakRef(child as unknown as Logger)));
  CHILDREN.set(root, children);
  return root;
}

/** Every child of a logger made here, for `setLogLevel`: a pino child keeps the level it was made with. */
const CHILDREN = new WeakMap<Logger, Set<WeakRef<Logger>>>();

/** A new level for a logger made by `createLogger` and every child of it (a config reload). */
export function setLogLevel(root: Logger, level: LogLevel): void {
  root.level = level;
  const children = CHILDREN.get(root);
  if (!children) return;
  for (const ref of children) {
    const c = ref.deref();
    if (c) c.level = level;
    else children.delete(ref);
  }
}

function makeLogger(o: LoggerOptions, onChild: (child: unknown) => void): Logger {
  const stream = o.stream ?? process.stderr;
  const opts = {
    level: o.level ?? 'info', base: undefined, onChild, redact: { paths: REDACT, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  if (o.format === 'json') return pino(opts, { write: (s: string) => stream.write(s) } as DestinationStream);
  return pino({ ...opts, hooks: { logMethod: oneLineAccess } }, pretty({
    destination: stream, sync: true, colorize: o.color ?? false, translateTime: 'SYS:HH:MM:ss.l', ignore: 'component',
    messageFormat: '{if component}{component}: {end}{msg}',
  }));
}

/** An access line's fields (`msg: "request"`), as the API and the gateway write them. */
interface AccessFields {
  method?: string; route?: string; status?: number; duration_ms?: number; key_prefix?: string; account_id?: number; network?: string;
}

/** `GET /v1/account 200 18.2 ms key 0cd2a3ae account 1`: an access line read at a glance. */
export function accessSummary(f: AccessFields): string {
  return [f.method, f.route, f.status, f.duration_ms === undefined ? undefined : `${f.duration_ms} ms`, f.network,
    f.key_prefix && `key ${f.key_prefix}`, f.account_id !== undefined && `account ${f.account_id}`].filter((v) => v !== undefined && v !== false && v !== '').join(' ');
}

/**
 * In the text format an access line is one line at `info` (pino-pretty would print each field
 * on a line of its own: eight lines per API call); `debug` shows the fields (request id, client
 * address) as well. The JSON format keeps every field on the one line.
 */
function oneLineAccess(this: Logger, args: Parameters<Logger['info']>, method: (...a: unknown[]) => void): void {
  const [fields, msg] = args as unknown[];
  if (msg === 'request' && typeof fields === 'object' && fields !== null && !this.isLevelEnabled('debug')) {
    return method.call(this, accessSummary(fields as AccessFields));
  }
  method.apply(this, args as unknown[]);
}

/**
 * The `(line) => void` shape the parts of the service were written against, on top of the
 * structured logger: `part: message` becomes `{component: part, msg: message}`, and lines that
 * report a failure are warnings, as are lines marked `part: warn: message`. New code logs through the Logger with fields instead.
 */
export function lineLogger(logger: Logger, fixedLevel?: 'info' | 'warn'): (line: string) => void {
  return (line: string) => {
    const m = /^([a-z][a-z-]*): ([\s\S]*)$/.exec(line);
    const component = m?.[1];
    let msg = m ? m[2]! : line;
    // `part: warn: message` says its level itself (a disagreement is no failure by its words).
    const marked = msg.startsWith('warn: ');
    if (marked) msg = msg.slice(6);
    const level = fixedLevel ?? (marked || /\b(fail(ed|ure)?|error|crash(ed)?|cannot|lost|refused)\b/i.test(msg) ? 'warn' : 'info');
    if (component) logger[level]({ component }, msg);
    else logger[level](msg);
  };
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's `X-Request-Id` when it is a sane token, else a new random one. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && SAFE_REQUEST_ID.test(given)) return given;
  return randomBytes(8).toString('hex');
}

export function parseLogFormat(value: string | undefined, isTTY: boolean): LogFormat {
  if (value === undefined || value === '') return isTTY ? 'text' : 'json';
  if ((LOG_FORMATS as readonly string[]).includes(value)) return value as LogFormat;
  throw new Error(`--log-format must be one of ${LOG_FORMATS.join(', ')} (got "${value}")`);
}

export function parseLogLevel(value: string | undefined): LogLevel {
  if (value === undefined || value === '') return 'info';
  if ((LOG_LEVELS as readonly string[]).includes(value)) return value as LogLevel;
  throw new Error(`--log-level must be one of ${LOG_LEVELS.join(', ')} (got "${value}")`);
}

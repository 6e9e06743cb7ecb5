import { readFileSync } from 'node:fs';
import type { CommandImpl } from '../action.js';
import { withApi } from '../context.js';
import { CliError, EXIT, usageError, type CliIO } from '../io.js';
import { readAll } from '../stdin.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

async function bodyOf(io: CliIO, opts: { data?: string; input?: string }): Promise<string | undefined> {
  if (opts.data !== undefined) return opts.data;
  if (opts.input === undefined) return undefined;
  if (opts.input === '-') return readAll(io.stdin);
  try {
    return readFileSync(opts.input, 'utf8');
  } catch (err) {
    throw usageError(`--input: ${(err as Error).message}`);
  }
}

export const api: CommandImpl<{ method: string; path: string; data?: string; input?: string }> = async (io, opts) => {
  const method = opts.method.toUpperCase();
  if (!METHODS.has(method)) throw usageError(`unknown HTTP method "${opts.method}" (one of: ${[...METHODS].join(', ')})`);
  const path = opts.path.startsWith('/') ? opts.path : `/${opts.path}`;
  const body = await bodyOf(io, opts);
  await withApi(io, opts, async ({ api: client, out }) => {
    // raw(): every status comes back (after the client's 429/connection retries) to be printed.
    const res = await client.raw(method, path, { body });
    if (res.text !== '') {
      // Pretty for people; exactly the bytes received for scripts.
      if (res.json !== undefined && (out.isTTY || out.jq !== undefined)) out.printJson(res.json);
      else out.printRaw(res.text);
    }
    if (res.status >= 200 && res.status < 300) return;
    const error = (res.json as { error?: unknown } | undefined)?.error;
    const message = `${typeof error === 'string' ? error : 'request failed'} (HTTP ${res.status})`;
    throw new CliError(message, res.status === 401 || res.status === 403 ? EXIT.auth : EXIT.error);
  });
};

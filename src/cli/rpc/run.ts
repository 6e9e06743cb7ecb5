import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent, request } from 'undici';
import type { CommandImpl } from '../action.js';
import { envValue, timeoutMsOf, withApi } from '../context.js';
import { interruptOf } from '../interrupt.js';
import { spinnerOf } from '../spinner.js';
import { ProfileStore } from '../profiles.js';
import type { GlobalOptions } from '../globals.js';
import { resolveEndpoint } from '../endpoint-ref.js';
import { CliError, EXIT, usageError, type CliIO } from '../io.js';
import { Output } from '../output.js';
import { escapeControl } from '../format.js';
import { networkReason } from '../../client/network-reason.js';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * RFC 6761: `localhost` and names under `.localhost` are loopback. The system resolver often
 * does not know `rpc-eth-mainnet.localhost`, so answer for it; the URL (and so the Host header
 * the gateway routes on) stays as it is.
 */
export function loopbackLookup(hostname: string, options: { all?: boolean } | number, callback: LookupCallback): void {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) {
    if (typeof options === 'object' && options.all) return callback(null, [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]);
    return callback(null, '127.0.0.1', 4);
  }
  dnsLookup(hostname, options as { all: true }, callback as never);
}

export function parseParams(text: string | undefined): unknown {
  if (text === undefined) return [];
  let params: unknown;
  try {
    params = JSON.parse(text);
  } catch (err) {
    throw usageError(`params must be JSON (an array or an object): ${(err as Error).message}`);
  }
  if (typeof params !== 'object' || params === null) throw usageError('params must be a JSON array or object, e.g. \'["latest", false]\'');
  return params;
}

interface JsonRpcResponse {
  jsonrpc?: string;
  id?: unknown;
  result?: unknown;
  error?: { code?: number; message?: string; data?: unknown };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Where the call goes. A URL and (with a known gateway) a uuid need no lookup, so they cost no
 * Public API call and work with gateway access alone; ids and names are resolved through the API.
 */
async function endpointUrl(io: CliIO, opts: GlobalOptions, ref: string): Promise<string> {
  if (/^https?:\/\//i.test(ref)) {
    try {
      return new URL(ref).href;
    } catch {
      throw usageError(`"${ref}" is not a URL`);
    }
  }
  if (UUID.test(ref)) {
    const profiles = await ProfileStore.open(io.env);
    const name = opts.profile ?? profiles.selected();
    const gateway = envValue(io.env, 'RPCCTL_GATEWAY_URL') ?? (name ? profiles.get(name)?.gateway_url : undefined);
    if (gateway) return `${gateway.replace(/\/+$/, '')}/${ref.toLowerCase()}`;
  }
  return (await withApi(io, opts, ({ api }) => resolveEndpoint(api, ref))).url;
}

/** Loopback hosts: a gateway there is the `rpcctl serve` on this machine, whose log says more. */
function isLocal(url: string): boolean {
  const host = new URL(url).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\./.test(host);
}

/** Where the cause of a failed upstream call is: never in the answer (upstream URLs hold provider keys). */
const UPSTREAM_HINT = 'the gateway does not tell clients about its upstreams; the cause (host and error) is in the log of `rpcctl serve` on this machine';

/**
 * Not retried: a JSON-RPC POST may not be idempotent (eth_sendRawTransaction), and the
 * gateway's 429 means "this second is full" — the caller decides whether to try again.
 * The call ends within --timeout; Ctrl-C ends it at once with 130, as a shell expects.
 */
export const rpc: CommandImpl<{ ref: string; method: string; params?: string }> = async (io, opts) => {
  const { method } = opts;
  const params = parseParams(opts.params);
  const timeoutMs = timeoutMsOf(opts);
  const endpoint = { url: await endpointUrl(io, opts, opts.ref) };
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  const dispatcher = new Agent({ connect: { lookup: loopbackLookup as never } });
  const interrupt = interruptOf(io);
  const timeout = AbortSignal.timeout(timeoutMs);
  // The spinner clears its line when the call ends, so an error after it starts a line of its own.
  const endSpinner = spinnerOf(io.stderr).start(`${method} ${new URL(endpoint.url).host}`);
  let status: number;
  let text: string;
  try {
    const res = await request(endpoint.url, {
      method: 'POST', body, dispatcher, signal: AbortSignal.any([interrupt.signal, timeout]),
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      headersTimeout: timeoutMs, bodyTimeout: timeoutMs,
    });
    status = res.statusCode;
    text = await res.body.text();
  } catch (err) {
    if (interrupt.signal.aborted) throw new CliError('', EXIT.interrupted);
    // undici's own headers/body timeout is the same --timeout: whichever of the two fires first.
    const undiciTimeout = ['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'].includes(String((err as { code?: unknown }).code));
    if (timeout.aborted || undiciTimeout) throw new CliError(`no answer from ${endpoint.url} within ${timeoutMs / 1000} s (wait longer with --timeout SECONDS)`);
    throw new CliError(`cannot reach ${endpoint.url}: ${networkReason(err)}`);
  } finally {
    endSpinner();
    interrupt.dispose();
    await dispatcher.close();
  }
  let reply: JsonRpcResponse | undefined;
  try {
    reply = JSON.parse(text) as JsonRpcResponse;
  } catch {
    reply = undefined;
  }
  const out = new Output(io, opts);
  if (out.json && reply) out.printJson(reply);
  // The gateway's 403 (IP not allowed, endpoint paused) is an access refusal, as on the API.
  const exitCode = status === 401 || status === 403 ? EXIT.auth : EXIT.error;
  const hint = status === 502 && isLocal(endpoint.url) ? `\n  ${UPSTREAM_HINT}` : '';
  if (reply?.error) {
    const e = reply.error;
    // The node's words, escaped: they reach the terminal.
    throw new CliError(`${escapeControl(String(e.message ?? 'JSON-RPC error'))} (code ${e.code ?? '?'}, HTTP ${status})${e.data === undefined ? '' : `: ${escapeControl(JSON.stringify(e.data))}`}${hint}`, exitCode);
  }
  if (status < 200 || status >= 300 || !reply || !('result' in reply)) {
    throw new CliError(`${endpoint.url} answered HTTP ${status}${text ? `: ${escapeControl(text.slice(0, 300))}` : ''}${hint}`, exitCode);
  }
  // A bare string (a block number, a hash) prints without quotes, for `$(rpcctl rpc ...)`.
  if (!out.json) typeof reply.result === 'string' ? out.print(escapeControl(reply.result)) : out.printJson(reply.result);
};

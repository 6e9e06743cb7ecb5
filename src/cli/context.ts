import type { ApiClient } from '../client/api-client.js';
import { CliError, EXIT, type CliIO } from './io.js';
import { Output } from './output.js';
import { noProfile, ProfileStore } from './profiles.js';
import type { GlobalOptions } from './globals.js';
import { VERSION } from './version.js';
import { spinnerOf } from './spinner.js';
import { interruptOf } from './interrupt.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

/** An environment variable that is set and not empty (`PUBLIC_API_BASE= rpcctl ...` unsets it). */
export function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  return env[name] || undefined;
}

export interface Credentials {
  baseUrl: string;
  apiKey: string;
  secret: string;
  /** The profile the key came from; null when it came from the environment. */
  profile: string | null;
}

/**
 * Who this invocation acts as. Key and secret always come as a pair from one place:
 * `--profile` > `PUBLIC_API_KEY` + `PUBLIC_API_SECRET` > the profile chosen with `profile use`
 * > the profile named `default`. The base URL: `--base-url` > the `--profile` profile >
 * `PUBLIC_API_BASE` > the selected profile > the built-in default. The secret is never a flag.
 */
export async function resolveCredentials(io: CliIO, opts: GlobalOptions): Promise<Credentials> {
  const env = io.env;
  const envKey = envValue(env, 'PUBLIC_API_KEY');
  const envSecret = envValue(env, 'PUBLIC_API_SECRET');
  const envBase = envValue(env, 'PUBLIC_API_BASE');
  const fromEnv = !opts.profile && (envKey !== undefined || envSecret !== undefined);
  if (fromEnv && (!envKey || !envSecret)) {
    throw new CliError(`${envKey ? 'PUBLIC_API_SECRET' : 'PUBLIC_API_KEY'} is not set, but ${envKey ? 'PUBLIC_API_KEY' : 'PUBLIC_API_SECRET'} is: set both, or neither to use a profile`, EXIT.auth);
  }
  // Only open the profile file when something is still missing: scripts with env credentials
  // and a base URL need no config dir at all.
  const needProfile = opts.profile !== undefined || !fromEnv || (!opts.baseUrl && !envBase);
  const store = needProfile ? await ProfileStore.open(env) : undefined;

  if (opts.profile) {
    const p = store!.get(opts.profile);
    if (!p) throw noProfile(opts.profile);
    return { baseUrl: opts.baseUrl ?? p.base_url, apiKey: p.api_key, secret: p.secret, profile: opts.profile };
  }
  const selectedName = store?.selected();
  const selected = selectedName ? store!.get(selectedName) : undefined;
  const baseUrl = opts.baseUrl ?? envBase ?? selected?.base_url ?? DEFAULT_BASE_URL;
  if (fromEnv) return { baseUrl, apiKey: envKey!, secret: envSecret!, profile: null };
  if (!selected) {
    throw new CliError('no credentials: run `rpcctl init`, or `rpcctl profile add`, or set PUBLIC_API_KEY and PUBLIC_API_SECRET', EXIT.auth);
  }
  return { baseUrl, apiKey: selected.api_key, secret: selected.secret, profile: selectedName! };
}

/** `--timeout`'s default: long enough for a Retry-After wait, short enough to notice a hang. */
export const DEFAULT_TIMEOUT_SECONDS = 60;

export function timeoutMsOf(opts: GlobalOptions): number {
  const value = opts.timeout ?? String(DEFAULT_TIMEOUT_SECONDS);
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new CliError(`--timeout must be a number of seconds above 0, got "${value}"`, EXIT.usage);
  return Math.round(seconds * 1000);
}

/**
 * A client for this invocation. With `io`, slow calls are never silent: a spinner on a
 * terminal after 300 ms, a note before each retry wait, and each call (retries included)
 * ends within --timeout.
 */
/** The hint a "cannot reach" error gets: the usual cause on a developer's machine. */
export const NOT_RUNNING_HINT = '(is `rpcctl serve` running?)';

export async function clientFor(creds: Credentials, io?: CliIO, opts: GlobalOptions = {}, signal?: AbortSignal): Promise<ApiClient> {
  checkBaseUrl(creds.baseUrl);
  // Loaded here, not at the top: commands that only read local files (`profile list`) never need undici.
  const { ApiClient } = await import('../client/api-client.js');
  const callTimeoutMs = timeoutMsOf(opts);
  const spinner = io ? spinnerOf(io.stderr) : undefined;
  // Retries stay on (the client's default: 3, honouring Retry-After up to 30 s).
  return new ApiClient({
    baseUrl: creds.baseUrl, apiKey: creds.apiKey, secret: creds.secret, userAgent: `rpcctl/${VERSION}`, callTimeoutMs,
    timeoutMs: Math.min(callTimeoutMs, 30_000), signal,
    hooks: spinner && {
      call: (method, path) => spinner.start(`${method} ${path}`),
      retry: (r) => {
        // Quick reconnects (under a second) are the spinner's business; a real wait gets a note.
        if (r.reason === 'rate-limited') spinner.note(`rate limited, retrying in ${Math.ceil(r.waitMs / 1000)} s`);
        else if (r.waitMs >= 1000) spinner.note(`cannot reach ${creds.baseUrl}: ${r.error}; retrying in ${Math.ceil(r.waitMs / 1000)} s`);
      },
    },
  });
}

export function checkBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(`base URL "${value}" is not a URL (example: ${DEFAULT_BASE_URL})`, EXIT.usage);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`base URL "${value}" must be http or https`, EXIT.usage);
  return value;
}

export interface ApiContext {
  api: ApiClient;
  out: Output;
  credentials: Credentials;
}

/**
 * Runs `fn` with a signed client for this invocation and an Output for its flags; closes the
 * client afterwards. The one call a command group needs to talk to the Public API.
 */
export async function withApi<T>(io: CliIO, opts: GlobalOptions, fn: (ctx: ApiContext) => Promise<T>): Promise<T> {
  const credentials = await resolveCredentials(io, opts);
  // Ctrl-C ends the call in flight and the command with 130, as `rpc` and a shell expect; a
  // command that runs until interrupted (`events --follow`) ends by itself (0) on the same signal.
  const interrupt = interruptOf(io);
  try {
    const api = await clientFor(credentials, io, opts, interrupt.signal);
    try {
      return await fn({ api, out: new Output(io, opts), credentials });
    } catch (err) {
      if (interrupt.signal.aborted) throw new CliError('', EXIT.interrupted);
      throw err;
    } finally {
      await api.close();
    }
  } finally {
    interrupt.dispose();
  }
}

import type { CreateEndpointInput, Endpoint, RequestLogEntry, UsageDays } from '../../client/types.js';
import { AbortedError, ApiError, NetworkError, TimeoutError } from '../../client/errors.js';
import { interruptOf, sleep } from '../interrupt.js';
import { positiveInt } from '../watch/run.js';
import { printCall } from './view.js';
import { escapeControl } from '../format.js';
import { isValidIp } from '../../util/ip.js';
import type { CommandImpl } from '../action.js';
import { withApi, type ApiContext } from '../context.js';
import { resolveEndpoint } from '../endpoint-ref.js';
import { CliError, usageError } from '../io.js';
import type { Output, Style } from '../output.js';
import { confirmOrYes } from '../prompts.js';

function statusStyle(e: Endpoint): Style {
  return e.status === 'active' ? 'green' : 'yellow';
}

function renderEndpoint(out: Output, e: Endpoint): void {
  if (out.json) return out.printJson(e);
  out.fields([
    ['id', e.id], ['uuid', e.uuid], ['name', e.name], ['status', e.status, statusStyle(e)],
    ['network', `${e.network_name} (${e.network_slug})`], ['environment', `${e.env_slug} (id ${e.network_environment_id})`],
    ['url', e.url], ['rps limit', e.rps_limit], ['plan', e.plan_id], ['created', out.at(e.created_at)],
    ['node version', e.version ?? 'unknown'], ['block height', e.block_height ?? 'unknown'],
    ['allowed ips', e.allowed_ips.length ? e.allowed_ips.join(out.isTTY ? ', ' : ',') : 'any'],
  ]);
}

export const list: CommandImpl = (io, opts) => withApi(io, opts, async ({ api, out }) => {
  const { endpoints } = await api.listEndpoints();
  if (out.json) return out.printJson(endpoints);
  out.table(endpoints, [
    { header: 'ID', value: (e) => e.id, keep: true },
    { header: 'NAME', value: (e) => e.name, keep: true },
    { header: 'NETWORK', value: (e) => `${e.network_slug}-${e.env_slug}` },
    { header: 'STATUS', value: (e) => e.status, style: statusStyle },
    { header: 'IPS', value: (e) => (e.allowed_ips.length ? e.allowed_ips.length : 'any') },
    { header: 'URL', value: (e) => e.url },
  ], 'No endpoints yet. Create one: rpcctl endpoints create --name NAME --network SLUG --env SLUG (choices: rpcctl networks)');
});

export const get: CommandImpl<{ ref: string }> = (io, opts) => withApi(io, opts, async ({ api, out }) => {
  renderEndpoint(out, await resolveEndpoint(api, opts.ref));
});

export const create: CommandImpl<{ name: string; network?: string; env?: string; environmentId?: string }> = (io, opts) => {
  const bySlug = opts.network !== undefined || opts.env !== undefined;
  if (bySlug === (opts.environmentId !== undefined)) throw usageError('give either --network and --env, or --environment-id');
  if (bySlug && (!opts.network || !opts.env)) throw usageError('--network and --env go together');
  const envId = Number(opts.environmentId);
  if (!bySlug && (!Number.isSafeInteger(envId) || envId < 1)) throw usageError(`--environment-id must be a positive integer, got "${opts.environmentId}"`);
  // One call: the API takes the slugs, checks the plan, and refuses a name in use (409), so
  // nothing is looked up first.
  return withApi(io, opts, async ({ api, out }) => {
    const input: CreateEndpointInput = bySlug
      ? { name: opts.name, network_slug: opts.network!, env_slug: opts.env! }
      : { name: opts.name, network_environment_id: envId };
    const { endpoint } = await api.createEndpoint(input).catch(async (err: unknown) => {
      throw err instanceof ApiError ? await createHint(api, err, opts.network) : err;
    });
    if (out.json) return out.printJson(endpoint);
    out.print(endpoint.url);
    out.note(`Created endpoint ${endpoint.id} (${escapeControl(endpoint.name)}) on ${endpoint.network_slug}-${endpoint.env_slug}. Try: rpcctl rpc ${endpoint.id} eth_blockNumber`);
  });
};

/**
 * The API's refusal, with what helps: the rename for a name in use; for a network the plan
 * does not offer, the ones it does (looked up only then: a create that works is one call).
 */
async function createHint(api: ApiContext['api'], err: ApiError, slug: string | undefined): Promise<Error> {
  if (err.status === 409) {
    const id = /\(id (\d+)\)/.exec(err.message)?.[1];
    return new CliError(`${err.message.replace(/ \(HTTP 409\)$/, '')}${id ? ` (rpcctl endpoints rename ${id} NEW_NAME)` : ''}`);
  }
  if (err.status === 400 && slug !== undefined && /^network_slug: unknown network|^Network ".*" is not available on the/.test(err.message)) {
    const available = await api.availableNetworks().then((r) => r.networks.map((n) => n.slug).join(', ') || 'none', () => undefined);
    return usageError(`network "${slug}" is not available on your plan${available ? ` (available: ${available}; see: rpcctl networks)` : ''}`);
  }
  if (err.status === 400 && /^env_slug:/.test(err.message)) return usageError(err.message);
  return err;
}

export const rename: CommandImpl<{ ref: string; newName: string }> = (io, opts) => withApi(io, opts, async ({ api, out }) => {
  const current = await resolveEndpoint(api, opts.ref);
  const { endpoint } = await api.renameEndpoint(current.id, opts.newName);
  if (out.json) return out.printJson(endpoint);
  out.note(`Endpoint ${endpoint.id} is now named "${escapeControl(endpoint.name)}" (was "${escapeControl(current.name)}").`);
});

const setStatus = (target: 'active' | 'paused'): CommandImpl<{ ref: string }> => (io, opts) => withApi(io, opts, async ({ api, out }) => {
  const { id } = await resolveEndpoint(api, opts.ref);
  const { endpoint } = await api.setEndpointStatus(id, target);
  if (out.json) return out.printJson(endpoint);
  out.note(`Endpoint ${endpoint.id} (${escapeControl(endpoint.name)}) is ${out.c[statusStyle(endpoint)](endpoint.status)}.`);
});
export const pause = setStatus('paused');
export const resume = setStatus('active');

export const usage: CommandImpl<{ ref: string; days: string; chart?: boolean }> = (io, opts) => withApi(io, opts, async ({ api, out }) => {
  const endpoint = await resolveEndpoint(api, opts.ref);
  const { usage: u } = await api.endpointUsage(endpoint.id, Number(opts.days) as UsageDays);
  if (out.json) return out.printJson(u);
  // The usage view (and its chart library) only for the usage commands, not every one in this file.
  const { renderUsage } = await import('../usage-view.js');
  renderUsage(out, u, { title: `Endpoint ${endpoint.id} (${endpoint.name})`, chart: opts.chart });
});

function renderAllowlist(out: Output, e: Endpoint): void {
  if (out.json) return out.printJson(e);
  for (const ip of e.allowed_ips) out.print(ip);
  if (e.allowed_ips.length === 0) out.note(`Endpoint ${e.id} accepts calls from any IP.`);
}

function checkIps(ips: string[]): string[] {
  const bad = ips.filter((ip) => !isValidIp(ip));
  if (bad.length) throw usageError(`not an IPv4 or IPv6 address: ${bad.join(', ')} (ranges are not supported)`);
  return ips;
}

/** PATCH replaces the whole list, so add/remove read it first and send the result. */
const changeAllowlist = (change: (current: string[], ips: string[]) => string[], reportAbsent = false): CommandImpl<{ ref: string; ips: string[]; yes?: boolean }> => (io, opts) => {
  const ips = checkIps(opts.ips);
  return withApi(io, opts, async ({ api, out }) => {
    const current = await resolveEndpoint(api, opts.ref);
    if (reportAbsent) {
      const absent = ips.filter((ip) => !current.allowed_ips.includes(ip));
      if (absent.length) out.note(`Not on the list of endpoint ${current.id}: ${absent.join(', ')}`);
    }
    const next = change(current.allowed_ips, ips);
    // An empty list means no restriction at all: emptying it by removal must be meant.
    if (next.length === 0 && current.allowed_ips.length > 0) {
      await confirmOrYes(io, opts, `That removes the last allowed IP: endpoint ${current.id} (${current.name}) will accept calls from any IP. Continue?`);
    }
    const { endpoint } = await api.setAllowedIps(current.id, next);
    renderAllowlist(out, endpoint);
    warnIfLockedOut(out, endpoint);
  });
};

/** On this machine's own service the gateway sees this machine as loopback. */
const LOOPBACK = ['127.0.0.1', '::1'];

/**
 * A list without loopback on a local service refuses this machine's own calls (`rpcctl rpc`,
 * a dApp on localhost), which newcomers meet as a puzzling 403 after the README's example.
 */
function warnIfLockedOut(out: Output, e: Endpoint): void {
  if (e.allowed_ips.length === 0 || e.allowed_ips.some((ip) => LOOPBACK.includes(ip))) return;
  let host: string;
  try {
    host = new URL(e.url).hostname;
  } catch {
    return;
  }
  const local = host === 'localhost' || host.endsWith('.localhost') || host.startsWith('127.') || host === '[::1]';
  if (!local) return;
  out.note(`Warning: this machine (127.0.0.1) is not on the list: its own calls to endpoint ${e.id} (${escapeControl(e.name)}) are now refused (HTTP 403).`
    + ` Add it with: rpcctl endpoints allowlist add ${e.id} 127.0.0.1`);
}

export const allowlistShow: CommandImpl<{ ref: string }> = (io, opts) => withApi(io, opts, async ({ api, out }) => {
  renderAllowlist(out, await resolveEndpoint(api, opts.ref));
});
export const allowlistSet = changeAllowlist((_current, ips) => [...new Set(ips)]);
export const allowlistAdd = changeAllowlist((current, ips) => [...new Set([...current, ...ips])]);
export const allowlistRemove = changeAllowlist((current, ips) => current.filter((ip) => !ips.includes(ip)), true);

export const allowlistClear: CommandImpl<{ ref: string; yes?: boolean }> = (io, opts) => withApi(io, opts, async ({ api, out }) => {
  const current = await resolveEndpoint(api, opts.ref);
  await confirmOrYes(io, opts, `Allow calls to endpoint ${current.id} (${current.name}) from any IP?`);
  const { endpoint } = await api.setAllowedIps(current.id, []);
  renderAllowlist(out, endpoint);
});

/** Longest Retry-After the follower honours in one wait: the API's windows are a minute. */
const RATE_LIMIT_WAIT_CAP_MS = 65_000;

export const logs: CommandImpl<{ ref: string; follow?: boolean; status: 'all' | 'error'; method?: string; limit: string; interval: string }> = (io, opts) => {
  const limit = positiveInt('--limit', opts.limit, 1000)!;
  const intervalMs = Number(opts.interval) * 1000;
  if (!Number.isFinite(intervalMs) || intervalMs < 100) throw usageError(`--interval must be at least 0.1 seconds, got "${opts.interval}"`);
  return withApi(io, opts, async ({ api, out }) => {
    const endpoint = await resolveEndpoint(api, opts.ref);
    const filter = { status: opts.status, method: opts.method };
    // Newest first from the API; printed oldest first, as a log reads.
    const show = (calls: RequestLogEntry[]) => {
      for (let i = calls.length - 1; i >= 0; i--) printCall(out, calls[i]!);
    };
    const first = await api.endpointLogs(endpoint.id, { ...filter, limit });
    show(first.calls);
    if (first.kept_per_worker === 0) out.note('Request logs are off on this service (gateway.request_log_size is 0).');
    if (!opts.follow) {
      if (first.calls.length === 0 && !out.json) out.note(`No calls${opts.status === 'error' ? ' with errors' : ''} in the log of ${escapeControl(endpoint.name)} yet.`);
      return;
    }
    const interrupt = interruptOf(io);
    const signal = interrupt.signal;
    let cursor = first.cursor;
    out.note(`Following ${escapeControl(endpoint.name)}'s calls… (Ctrl-C to stop)`);
    try {
      while (!signal.aborted) {
        await sleep(intervalMs, signal);
        if (signal.aborted) break;
        try {
          const r = await api.endpointLogs(endpoint.id, { ...filter, limit: 1000, after: cursor }, { signal });
          // More than a page since the last poll: the oldest of them were not shown.
          if (r.next_before !== null) out.note(`(more calls came than one poll shows; some were left out: try a shorter --interval)`);
          show(r.calls);
          cursor = r.cursor;
        } catch (err) {
          // A restart or the account's API limit: said once per failed poll, and the next poll goes on from the same cursor.
          if (err instanceof ApiError && err.status === 429) {
            out.note(`${err.message} (the account's API limit); following again shortly`);
            await sleep(Math.min(RATE_LIMIT_WAIT_CAP_MS, (err.retryAfter ?? 1) * 1000), signal);
            continue;
          }
          if (!(err instanceof NetworkError || (err instanceof ApiError && err.status >= 500) || err instanceof TimeoutError)) throw err;
          out.note(`${err.message}; retrying (Ctrl-C to stop)`);
        }
      }
    } catch (err) {
      // Ctrl-C during a request or a wait is the way out, not a failure.
      if (!(err instanceof AbortedError)) throw err;
    } finally {
      interrupt.dispose();
    }
  });
};

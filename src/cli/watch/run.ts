import { AddressWatchClient, type WatchEvent, type WatchEventType } from '../../client/address-watch.js';
import { AbortedError, ApiError, NetworkError, TimeoutError } from '../../client/errors.js';
import type { CommandImpl } from '../action.js';
import { withApi, type ApiContext } from '../context.js';
import { interruptOf, sleep } from '../interrupt.js';
import { CliError, usageError, type CliIO } from '../io.js';
import type { GlobalOptions } from '../globals.js';
import { confirmOrYes, prompterFor } from '../prompts.js';
import { printEvent } from './view.js';
import type { Style } from '../output.js';

/** `withApi` with the Address Watch client the watch, events and webhook commands use. */
export function withWatch<T>(io: CliIO, opts: GlobalOptions, fn: (ctx: ApiContext & { watch: AddressWatchClient }) => Promise<T>): Promise<T> {
  return withApi(io, opts, (ctx) => fn({ ...ctx, watch: new AddressWatchClient(ctx.api) }));
}

/** A positive integer option, or a usage error naming it. */
export function positiveInt(name: string, value: string | undefined, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > max) {
    throw usageError(`${name} must be ${max === Number.MAX_SAFE_INTEGER ? 'a positive integer' : `an integer from 1 to ${max}`}, got "${value}"`);
  }
  return n;
}

export const add: CommandImpl<{ address: string; network: string }> = (io, opts) => withWatch(io, opts, async ({ watch, out }) => {
  const { ok: _ok, watch: w, created } = await watch.add(opts.network, opts.address);
  if (out.json) return out.printJson({ ...w, created });
  out.print(w.watch_id);
  out.note(created
    ? `Watching ${w.address} on ${w.network_slug} (${w.watch_id}). Events: rpcctl events --follow`
    : `Already watched: ${w.address} on ${w.network_slug} (${w.watch_id}); no slot used.`);
});

export const list: CommandImpl<{ network?: string; address?: string }> = (io, opts) => withWatch(io, opts, async ({ watch, out }) => {
  const rows = [];
  for await (const w of watch.all({ network_slug: opts.network, address: opts.address })) rows.push(w);
  if (out.json) return out.printJson(rows);
  out.table(rows, [
    // Narrow: the time is left out, then the address is cut (`watch list --json` has it whole).
    { header: 'WATCH ID', value: (w) => w.watch_id, keep: true },
    { header: 'NETWORK', value: (w) => w.network_slug, priority: 2 },
    { header: 'ADDRESS', value: (w) => w.address, priority: 1 },
    { header: 'CREATED', value: (w) => out.when(w.created_at), priority: -1 },
  ], 'No watched addresses. Add one: rpcctl watch add --network eth ADDRESS');
});

export const remove: CommandImpl<{ watchId: string; yes?: boolean }> = (io, opts) => withWatch(io, opts, async ({ watch, out }) => {
  const { watchId } = opts;
  if (!opts.yes) {
    prompterFor(io, 'add --yes to confirm'); // a script without --yes fails here, before any lookup
    // Only a person is asked, and a person should see which address goes; the lookup is
    // skipped with --yes (the DELETE answers 404 for an unknown id anyway).
    let found;
    for await (const w of watch.all()) if (w.watch_id === watchId) { found = w; break; }
    if (!found) throw new CliError(`no watch "${watchId}" (see: rpcctl watch list)`);
    await confirmOrYes(io, opts, `Stop watching ${found.address} on ${found.network_slug} (${found.watch_id})? Its events stay in the feed.`);
  }
  const { watch_id } = await watch.remove(watchId);
  if (out.json) return out.printJson({ watch_id });
  out.note(`Stopped watching ${watch_id}; its slot is free.`);
});

export const status: CommandImpl = (io, opts) => withWatch(io, opts, async ({ watch, out }) => {
  const { ok: _ok, ...a } = await watch.account();
  if (out.json) return out.printJson(a);
  const yesNo = (label: string, v: boolean): [string, string, Style] => [label, v ? 'yes' : 'no', v ? 'green' : 'yellow'];
  out.fields([
    ['slots', `${a.slots_used} of ${a.slots_total} used, ${a.slots_free} free`],
    yesNo('webhook configured', a.webhook_configured),
    yesNo('webhook enabled', a.webhook_enabled),
  ]);
  if (a.slots_total === 0) out.note('Your plan has no watched-address slots.');
  else if (!a.webhook_configured) out.note('No webhook yet: rpcctl webhook set --url URL');
});

/** The feed's page size limit. */
const MAX_PAGE = 500;
/** Longest Retry-After the follower honours in one wait: the API's windows are a minute. */
const RATE_LIMIT_WAIT_CAP_MS = 65_000;

export const events: CommandImpl<{ follow?: boolean; type?: WatchEventType; network?: string; after?: string; limit?: string; interval: string }> = (io, opts) => {
  const limit = positiveInt('--limit', opts.limit) ?? (opts.follow ? Infinity : 100);
  if (opts.after !== undefined && !/^\d{1,16}$/.test(opts.after)) throw usageError(`--after must be an event id, got "${opts.after}"`);
  const intervalMs = Number(opts.interval) * 1000;
  if (!Number.isFinite(intervalMs) || intervalMs < 100) throw usageError(`--interval must be at least 0.1 seconds, got "${opts.interval}"`);
  return withWatch(io, opts, async ({ api, watch, out }) => {
    const filter = { type: opts.type, network: opts.network };
    const page = (after: string | undefined, max: number) => watch.events({ ...filter, after, limit: Math.min(max, MAX_PAGE) });
    let after = opts.after;
    let printed = 0;
    const show = (list: WatchEvent[]) => {
      for (const e of list) printEvent(out, e);
      printed += list.length;
    };

    if (!opts.follow) {
      for (;;) {
        const r = await page(after, limit - printed);
        show(r.events);
        after = r.next_after ?? after;
        if (r.events.length === 0 || printed >= limit) break;
      }
      if (printed === 0 && !out.json) out.note('No events.');
      else if (printed >= limit && (await page(after, 1)).events.length > 0) out.note(`More events: rpcctl events --after ${after}`);
      return;
    }

    const interrupt = interruptOf(io);
    const signal = interrupt.signal;
    // Like `tail -F`: a service that goes away (a restart, a deploy) is waited for, with a
    // note, and the feed goes on from the same cursor, so no event is skipped or repeated.
    let lost: { since: number; attempt: number } | undefined;
    const call = async <T>(fn: () => Promise<T>): Promise<T | undefined> => {
      try {
        const result = await fn();
        if (lost) out.note(`reconnected to ${api.baseUrl} after ${Math.round((Date.now() - lost.since) / 1000)} s`);
        lost = undefined;
        return result;
      } catch (err) {
        // Other traffic on the account (another command, the app) can use up its per-minute
        // API limit: the follower waits as the 429's Retry-After says and goes on from its cursor.
        if (err instanceof ApiError && err.status === 429) {
          const waitMs = Math.min(RATE_LIMIT_WAIT_CAP_MS, (err.retryAfter ?? 1) * 1000);
          out.note(`${err.message} (the account's API limit); following again in ${Math.ceil(waitMs / 1000)} s (Ctrl-C to stop)`);
          await sleep(waitMs, signal);
          return undefined;
        }
        if (!(err instanceof NetworkError || (err instanceof ApiError && err.status >= 500) || err instanceof TimeoutError)) throw err;
        lost ??= { since: Date.now(), attempt: 0 };
        const waitMs = Math.min(30_000, 1000 * 2 ** lost.attempt++);
        out.note(`${err.message}; reconnecting in ${Math.round(waitMs / 1000)} s (Ctrl-C to stop)`);
        await sleep(waitMs, signal);
        return undefined;
      }
    };
    try {
      // Without --after only what arrives from now on; the feed says where that is.
      while (after === undefined && !signal.aborted) {
        const r = await call(() => watch.events({ after: 'latest' }, { signal }));
        if (r) {
          after = r.next_after ?? '0';
          break;
        }
      }
      out.note(`Waiting for events${after && after !== '0' ? ` after ${after}` : ''}… (Ctrl-C to stop)`);
      while (!signal.aborted && printed < limit) {
        const want = Math.min(limit - printed, MAX_PAGE);
        const r = await call(() => watch.events({ ...filter, after, limit: want }, { signal }));
        if (!r) continue;
        show(r.events);
        after = r.next_after ?? after;
        // A full page means more may be waiting: fetch again at once.
        if (r.events.length < want) await sleep(intervalMs, signal);
      }
    } catch (err) {
      // Ctrl-C during a request or a retry wait is the way out, not a failure.
      if (!(err instanceof AbortedError)) throw err;
    } finally {
      interrupt.dispose();
    }
  });
};

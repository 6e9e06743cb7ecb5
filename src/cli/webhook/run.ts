import { escapeControl } from '../format.js';
import type { DeliveryStatus, WatchEventType, WebhookEventFilters } from '../../client/address-watch.js';
import type { CommandImpl } from '../action.js';
import { envValue } from '../context.js';
import { aborted, interruptOf } from '../interrupt.js';
import { CliError, usageError, type CliIO } from '../io.js';
import type { GlobalOptions } from '../globals.js';
import { Output } from '../output.js';
import { ProfileStore, secretHint } from '../profiles.js';
import { readSecret } from '../prompts.js';
import { positiveInt, withWatch } from '../watch/run.js';
import { renderWebhook } from '../watch/view.js';
import { printDelivery } from './view.js';

export const get: CommandImpl = (io, opts) => withWatch(io, opts, async ({ watch, out }) => {
  const { ok: _ok, ...w } = await watch.webhook();
  renderWebhook(out, w);
  if (!out.json && w.url === null) out.note('No webhook yet: rpcctl webhook set --url URL');
});

/** A filter flag as commander gives it: absent, `--x` (true), `--x=a,b` (string) or `--no-x` (false). */
type FilterFlag = boolean | string | undefined;
type SetOptions = { url?: string; enable?: boolean; disable?: boolean; payment?: FilterFlag; payout?: FilterFlag; block?: FilterFlag };

/**
 * The `events` patch for PUT. The server keeps every key not sent, so a bare `--payment` must
 * send an empty network list too, or an earlier list would silently stay in force; `--no-x`
 * sends only the switch, keeping the list for when it is turned on again.
 */
export function filterPatch(opts: SetOptions): Partial<WebhookEventFilters> {
  const patch: Partial<WebhookEventFilters> = {};
  for (const kind of ['payment', 'payout', 'block'] as const) {
    const flag = opts[kind];
    if (flag === undefined) continue;
    patch[kind] = flag !== false;
    if (flag === true) patch[`${kind}_networks`] = [];
    if (typeof flag === 'string') {
      const networks = flag.split(',').map((s) => s.trim()).filter(Boolean);
      if (networks.length === 0) throw usageError(`--${kind}= needs network slugs, e.g. --${kind}=eth,polygon (or --${kind} alone for all)`);
      patch[`${kind}_networks`] = [...new Set(networks)];
    }
  }
  return patch;
}

export const set: CommandImpl<SetOptions> = (io, opts) => {
  const events = filterPatch(opts);
  return withWatch(io, opts, async ({ watch, out }) => {
    // PUT needs url and enabled every time: what was not given is read back, so `set --no-block` alone works.
    const current = opts.url !== undefined && (opts.enable || opts.disable) ? undefined : await watch.webhook();
    const url = opts.url ?? current?.url;
    if (!url) throw usageError('no webhook URL yet: give --url URL');
    // A first URL is switched on unless --disable: setting a URL means wanting deliveries.
    const enabled = opts.enable ? true : opts.disable ? false : current?.url ? current.enabled : true;
    const { ok: _ok, ...saved } = await watch.setWebhook({ url, enabled, ...(Object.keys(events).length ? { events } : {}) });
    renderWebhook(out, saved);
    if (!out.json) out.note(`Webhook saved${saved.enabled ? '' : ' (disabled: no deliveries are sent)'}. Try: rpcctl webhook test --type payment --network NETWORK`);
  });
};

export const test: CommandImpl<{ type: WatchEventType; network: string }> = (io, opts) => withWatch(io, opts, async ({ watch, out }) => {
  const { ok: _ok, ...queued } = await watch.testWebhook(opts.type, opts.network);
  if (out.json) return out.printJson(queued);
  out.print(queued.webhook_id);
  out.note(`Queued a test ${opts.type} delivery on ${opts.network}. See: rpcctl webhook deliveries`);
});

export const deliveries: CommandImpl<{ limit: string; status?: DeliveryStatus; event?: string; before?: string }> = (io, opts) => {
  const limit = positiveInt('--limit', opts.limit, 200);
  positiveInt('--event', opts.event);
  positiveInt('--before', opts.before);
  return withWatch(io, opts, async ({ watch, out }) => {
    const r = await watch.deliveries({ limit, status: opts.status, event_id: opts.event, before: opts.before });
    if (out.json) return out.printJson(r.deliveries);
    out.table(r.deliveries, [
      // On a narrow terminal the ids and the status stay whole; the error text and the type
      // are cut (widest first); the times, the network, then the attempts are left out (piped
      // output and --json keep all).
      { header: 'DELIVERY', value: (d) => d.delivery_id, keep: true },
      { header: 'WEBHOOK ID', value: (d) => d.webhook_id, keep: true },
      { header: 'TYPE', value: (d) => d.type },
      { header: 'NETWORK', value: (d) => d.network, priority: -2 },
      { header: 'STATUS', value: (d) => d.status, keep: true, style: (d) => (d.status === 'delivered' ? 'green' : d.status === 'pending' ? 'yellow' : 'red') },
      { header: 'ATTEMPTS', value: (d) => d.attempt_count, priority: -1 },
      { header: 'LAST', value: (d) => d.last_status_code ?? d.last_error ?? '' },
      { header: 'NEXT RETRY', value: (d) => out.when(d.next_retry_at), priority: -4 },
      { header: 'CREATED', value: (d) => out.when(d.created_at), priority: -3 },
    ], 'No deliveries yet. Send a sample: rpcctl webhook test --type payment --network NETWORK');
    if (r.next_before && r.deliveries.length === limit) out.note(`Older: rpcctl webhook deliveries --before ${r.next_before}`);
  });
};

export const redeliver: CommandImpl<{ deliveryId: string }> = (io, opts) => {
  const id = opts.deliveryId;
  positiveInt('delivery_id', id);
  return withWatch(io, opts, async ({ watch, out }) => {
    const { delivery } = await watch.redeliver(id);
    if (out.json) return out.printJson(delivery);
    out.note(`Delivery ${delivery.delivery_id} (${delivery.webhook_id}) queued again. See: rpcctl webhook deliveries`);
  });
};

export const listen: CommandImpl<{ port: string; host: string; forwardTo?: string }> = async (io, opts) => {
  const port = Number(opts.port);
  if (!/^\d+$/.test(opts.port) || port > 65535) throw usageError(`--port must be 0-65535, got "${opts.port}"`);
  if (opts.forwardTo !== undefined) checkHttpUrl('--forward-to', opts.forwardTo);
  const { secret, source } = await webhookSecret(io, opts);
  const out = new Output(io, opts);
  const { startWebhookReceiver } = await import('../../webhooks/listen.js');
  const interrupt = interruptOf(io);
  let explained = false;
  try {
    const receiver = await startWebhookReceiver({
      secret, host: opts.host, port, forwardTo: opts.forwardTo,
      onEvent: (r) => printDelivery(out, r.event, { webhookId: r.webhookId, attempt: r.attempt }),
      onRejected: (reason, headers) => {
        out.note(`rejected a delivery${headers['x-webhook-id'] ? ` (${escapeControl(String(headers['x-webhook-id']))})` : ''}: ${escapeControl(reason)}`);
        // A wrong secret fails every delivery the same way: say once where the right one comes from.
        if (reason === 'signature mismatch' && !explained) {
          explained = true;
          out.note(`  The secret in use (${secretHint(secret)}, ${source}) is not the one this account's deliveries are signed with.\n`
            + '  Get it with: rpcctl admin webhook-secret --account USER_ID (on the service\'s machine), then\n'
            + '  RPCCTL_WEBHOOK_SECRET=... rpcctl webhook listen; or, for a local service, rpcctl init --local saves it in the profile.');
        }
      },
      onForwarded: (f) => out.note(f.error
        ? `forward of ${f.webhookId ?? 'a delivery'} to ${f.url} failed: ${f.error}${f.retryInMs ? `; retrying in ${f.retryInMs / 1000} s` : ''}`
        : `forwarded ${f.webhookId ?? 'a delivery'} to ${f.url}: ${f.status} (${f.durationMs} ms)`),
    }).catch((err: NodeJS.ErrnoException) => {
      throw new CliError(err.code === 'EADDRINUSE' ? `port ${port} is in use (try --port 0 for a free one)` : `cannot listen on ${opts.host}:${port}: ${err.message}`);
    });
    out.note(`Listening on ${receiver.url} (secret ${secretHint(secret)}, ${source})${opts.forwardTo ? `, forwarding to ${opts.forwardTo}` : ''}. Ctrl-C to stop.`);
    out.note(`Point the webhook here: rpcctl webhook set --url ${receiver.url}`);
    await aborted(interrupt.signal);
    await receiver.close();
    out.note('Stopped.');
  } finally {
    interrupt.dispose();
  }
};

/**
 * The webhook signing secret: $RPCCTL_WEBHOOK_SECRET, else the profile's (saved by
 * `init --local`), else stdin. `source` names where it came from, for the mismatch hint.
 */
async function webhookSecret(io: CliIO, opts: GlobalOptions): Promise<{ secret: string; source: string }> {
  const fromEnv = envValue(io.env, 'RPCCTL_WEBHOOK_SECRET');
  if (fromEnv) return { secret: fromEnv, source: 'from $RPCCTL_WEBHOOK_SECRET' };
  const profiles = await ProfileStore.open(io.env);
  const name = opts.profile ?? profiles.selected();
  const saved = name ? profiles.get(name)?.webhook_secret : undefined;
  if (saved) return { secret: saved, source: `from profile "${name}"` };
  const secret = await readSecret(io, 'Webhook secret',
    'no webhook secret: set RPCCTL_WEBHOOK_SECRET or pipe it in; get it with rpcctl admin webhook-secret --account USER_ID (or, for a local service, rpcctl init --local saves it)');
  return { secret, source: 'from stdin' };
}

function checkHttpUrl(name: string, value: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch { /* reported below */ }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw usageError(`${name} must be an http(s) URL, got "${value}"`);
}

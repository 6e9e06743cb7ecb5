import { Writable } from 'node:stream';
import { AddressWatchClient } from '../../client/address-watch.js';
import { clientFor, resolveCredentials } from '../context.js';
import type { CliIO } from '../io.js';
import { ProfileStore } from '../profiles.js';
import type { GlobalOptions } from '../globals.js';
import type { DynamicKind } from '../completion-kinds.js';

/** A shell waits for this while the user waits for the prompt: give up quickly. */
const COMPLETION_TIMEOUT_SECONDS = '2';

/**
 * `rpcctl __complete KIND`: the values a completion script offers, one a line. Any failure
 * (no credentials, no service, a slow one) prints nothing: a completion never shows errors.
 */
export async function complete(io: CliIO, opts: GlobalOptions & { kind: DynamicKind }): Promise<void> {
  try {
    for (const value of await valuesOf(io, opts, opts.kind)) io.stdout.write(`${value}\n`);
  } catch {
    // silent by design
  }
}

async function valuesOf(io: CliIO, opts: GlobalOptions, kind: DynamicKind): Promise<string[]> {
  if (kind === 'profiles') return (await ProfileStore.open(io.env)).list().map(([name]) => name);
  // No spinner, no retry notes: stderr of a completion lands in the user's prompt.
  const quiet: CliIO = { ...io, stderr: new Writable({ write: (_c, _e, cb) => cb() }) };
  const api = await clientFor(await resolveCredentials(quiet, opts), quiet, { ...opts, timeout: COMPLETION_TIMEOUT_SECONDS });
  try {
    if (kind === 'endpoints') {
      const { endpoints } = await api.listEndpoints();
      // Names are what people type; ids too, for endpoints whose name is not unique.
      return [...new Set(endpoints.flatMap((e) => [e.name, String(e.id)]))].filter((v) => !/\s/.test(v));
    }
    if (kind === 'networks') {
      const { networks } = await api.availableNetworks();
      return networks.flatMap((n) => [n.slug, ...n.environment_kinds.slice(1).map((env) => `${n.slug}-${env}`)]);
    }
    if (kind === 'payments') {
      // The most recent orders: what `payments get|watch|cancel` is usually about.
      const { PaymentsClient } = await import('../../client/payments.js');
      return (await new PaymentsClient(api).list({ per_page: 50 })).payments.map((p) => p.payment_id);
    }
    if (kind === 'payouts') {
      // The most recent payouts: what `payouts show|approve|cancel|psbt|submit` is usually about.
      const { PayoutsClient } = await import('../../client/payouts.js');
      return (await new PayoutsClient(api).list({ per_page: 50 })).payouts.map((p) => p.payout_id);
    }
    const watch = new AddressWatchClient(api);
    const ids: string[] = [];
    for await (const w of watch.all()) ids.push(w.watch_id);
    return ids;
  } finally {
    await api.close();
  }
}

import { listStoredRates, RateInputError, setStoredRate } from '../../payments/rate-table.js';
import type { AdminOptions } from '../admin/run.js';
import { withStore } from '../admin/run.js';
import { usageError, type CliIO } from '../io.js';

type Opts = AdminOptions & { json?: boolean; color?: boolean };

/** `rpcctl admin rates set ASSET CURRENCY RATE`: the static provider's store table (a running serve reads it per order). */
export async function ratesSet(io: CliIO, opts: Opts & { asset: string; currency: string; rate: string }): Promise<void> {
  await withStore(io, opts as never, async (store, out, config) => {
    let row;
    try {
      row = await setStoredRate(store.db, opts.asset, opts.currency, opts.rate);
    } catch (err) {
      if (err instanceof RateInputError) throw usageError(err.message);
      throw err;
    }
    if (out.json) return out.printJson(row);
    out.note(`Set ${row.asset}/${row.currency} = ${row.rate} (${row.currency} per ${row.asset}); orders refuse it after ${config.payments.rates.ttl_s} s unless it is set again.`);
    if (config.payments.rates.provider !== 'static') out.note('Note: payments.rates.provider is "http": orders take their rates from the HTTP source, not this table.');
  });
}

/** `rpcctl admin rates list`: the store's rates (with whether they are still fresh) and the config's fixed ones. */
export async function ratesList(io: CliIO, opts: Opts): Promise<void> {
  await withStore(io, opts as never, async (store, out, config) => {
    const { ttl_s: ttl } = config.payments.rates;
    const stored = (await listStoredRates(store.db)).map((r) => ({
      pair: `${r.asset}/${r.currency}`, rate: r.rate, source: 'store', updated_at: r.updated_at as string | null,
      fresh: Date.now() - Date.parse(r.updated_at) <= ttl * 1000,
    }));
    // A stored pair hides the config's value for it.
    const fixed = Object.entries(config.payments.rates.static).filter(([pair]) => !stored.some((s) => s.pair === pair))
      .map(([pair, rate]) => ({ pair, rate, source: 'config', updated_at: null, fresh: true }));
    const rows = [...stored, ...fixed].sort((a, b) => a.pair.localeCompare(b.pair));
    if (out.json) return out.printJson({ provider: config.payments.rates.provider, ttl_s: ttl, rates: rows });
    out.table(rows, [
      { header: 'PAIR', value: (r) => r.pair, keep: true },
      { header: 'RATE', value: (r) => r.rate },
      { header: 'SOURCE', value: (r) => r.source },
      { header: 'UPDATED', value: (r) => r.updated_at ? out.when(r.updated_at) : '' },
      { header: 'FRESH', value: (r) => (r.fresh ? 'yes' : `no (older than ${ttl} s)`) },
    ]);
  });
}

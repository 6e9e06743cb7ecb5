import type { Config } from '../config/index.js';
import { CHANNELS, type Store } from '../store/index.js';
import type { Supervisor } from '../runtime/supervisor.js';
import type { AddressWatch } from '../watch/service.js';
import { EnvironmentChains } from '../watch/chains.js';
import type { Webhooks } from '../webhooks/service.js';
import { Finality } from '../payments/holds.js';
import type { RateSource } from '../payments/rates.js';
import type { PayoutDeps } from './context.js';
import { complete, matchTransfers, releaseHeld, takeBack } from './tracking.js';
import { chainTransactions } from './chain-transactions.js';
import type { PayoutTransactions } from './transactions.js';

export interface PayoutsOptions {
  store: Store;
  config: Config;
  log: (line: string) => void;
  addressWatch: AddressWatch;
  webhooks: Pick<Webhooks, 'kick'>;
  supervisor: Supervisor;
  /** Rates for lines priced in fiat and for the approval threshold (payments' source). */
  rates: RateSource;
  /** What builds PSBTs and checks and sends signed transactions (default: the chain families', chains/payouts.ts). */
  transactions?: PayoutTransactions;
}

export interface Payouts {
  deps: PayoutDeps;
  rates: RateSource;
  chains: EnvironmentChains;
  transactions: PayoutTransactions;
  /** One pass: take-backs, matches, completions, holds ended; the number of lines moved or let go. */
  step(nowMs?: number): Promise<number>;
  kick(): void;
  stop(): Promise<void>;
}

/** The supervised task that tracks refund and payout lines (docs/operations.md). */
export const PAYOUTS_TASK = 'payouts-tick';

/**
 * Refunds and payouts tracked to final: one supervised task, woken by recorded blocks (this
 * instance's scanners, and the others' through the store's notifications) like the payments
 * engine, polling every `payments.tick_ms` as the safety net.
 */
export function startPayouts(o: PayoutsOptions): Payouts {
  const watch = o.addressWatch;
  const deps: PayoutDeps = {
    store: o.store, config: o.config,
    watches: { added: (row) => watch.watchAdded(row), removed: (row) => watch.watchRemoved(row) },
    onDeliveries: () => o.webhooks.kick(),
  };
  const chains = new EnvironmentChains();
  const finality = new Finality(chains, o.log);
  let again = false;
  const step = async (nowMs = Date.now()): Promise<number> => {
    // Take-backs first: a transfer a reorg removed and the chain mined again then matches anew.
    return (await takeBack(deps)) + (await matchTransfers(deps)) + (await complete(deps, finality, nowMs)) + (await releaseHeld(deps, finality, nowMs));
  };
  o.supervisor.every(PAYOUTS_TASK, o.config.payments.tick_ms, async () => {
    do {
      again = false;
      if ((await step()) > 0) again = true;
    } while (again);
  });
  const kick = () => {
    again = true;
    o.supervisor.kick(PAYOUTS_TASK);
  };
  const unhook = watch.onRecorded(kick);
  const unlisten = o.store.notifications.on(CHANNELS.events, kick, kick);
  return {
    deps, rates: o.rates, chains, step, kick, transactions: o.transactions ?? chainTransactions(o.store, chains),
    stop: async () => {
      unhook();
      unlisten();
      await o.supervisor.cancel(PAYOUTS_TASK);
      await chains.close();
    },
  };
}

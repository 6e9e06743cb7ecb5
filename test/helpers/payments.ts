import { expect } from 'vitest';
import type { Received, Receiver } from './receiver.js';
import type { Merchant } from './service.js';

type Ev = Record<string, any>;

/**
 * Payment-order steps the end-to-end suites share. `ctx` is read at each call: the receiver
 * and merchant are made in a suite's beforeAll.
 */
export function paymentOrders(ctx: () => { rx: Receiver; m: Merchant }, network: string, opts: { waitMs?: number; quietMs?: number } = {}) {
  const { waitMs = 20_000, quietMs = 400 } = opts;
  const json = (o: unknown) => JSON.stringify(o);
  const hooksOf = (id: string, all: Received[] = ctx().rx.received) => all.filter((r) => JSON.parse(r.body).payment_id === id);
  return {
    hooksOf,
    /** Each webhook of order `id` as [event, tx_hash, reason, amount_received_raw]. */
    seq: (id: string) => hooksOf(id).map((r) => {
      const b = JSON.parse(r.body);
      return [b.event, b.tx_hash, b.reason, b.amount_received_raw];
    }),
    /** Waits for order `id`'s `n`th webhook, then a quiet moment: nothing more follows. */
    async settle(id: string, n: number) {
      await ctx().rx.waitFor((all) => hooksOf(id, all).length >= n, waitMs);
      await new Promise((r) => setTimeout(r, quietMs));
    },
    async create(body: Record<string, unknown>): Promise<Ev> {
      const { rx, m } = ctx();
      const r = await m.call('POST', '/v1/payments', json({ network_slug: network, webhook_url: rx.url, ...body }));
      expect(r.status, json(r.body)).toBe(200);
      return r.body.payment as Ev;
    },
    get: async (id: string): Promise<Ev> => (await ctx().m.call('GET', `/v1/payments/${id}`)).body.payment as Ev,
  };
}

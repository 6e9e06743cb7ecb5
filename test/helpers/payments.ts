import { expect } from 'vitest';
import { signatureValid, type Received, type Receiver } from './receiver.js';
import type { Merchant } from './service.js';

type Ev = Record<string, any>;

/** A fake node the suites mine on (two confirmations: a block on top confirms). */
interface Miner<T> {
  mine(txs: T[]): unknown;
  orphan(depth: number): unknown;
}

/**
 * Payment-order steps the end-to-end suites share. `ctx` is read at each call: the receiver
 * and merchant are made in a suite's beforeAll.
 */
export function paymentOrders(ctx: () => { rx: Receiver; m: Merchant }, network: string, opts: { waitMs?: number; quietMs?: number } = {}) {
  const { waitMs = 20_000, quietMs = 400 } = opts;
  const json = (o: unknown) => JSON.stringify(o);
  const hooksOf = (id: string, all: Received[] = ctx().rx.received) => all.filter((r) => JSON.parse(r.body).payment_id === id);
  /** Waits for order `id`'s `n`th webhook, then a quiet moment: nothing more follows. */
  const settle = async (id: string, n: number) => {
    await ctx().rx.waitFor((all) => hooksOf(id, all).length >= n, waitMs);
    await new Promise((r) => setTimeout(r, quietMs));
  };
  return {
    hooksOf,
    /** Each webhook of order `id` as [event, tx_hash, reason, amount_received_raw]. */
    seq: (id: string) => hooksOf(id).map((r) => {
      const b = JSON.parse(r.body);
      return [b.event, b.tx_hash, b.reason, b.amount_received_raw];
    }),
    settle,
    /**
     * Mines `txs` (unconfirmed: order `id` reaches its `seen`th webhook), then a block on top
     * (confirmed: its `confirmed`th).
     */
    async confirm<T>(node: Miner<T>, id: string, txs: T[], seen: number, confirmed: number) {
      node.mine(txs);
      await settle(id, seen);
      node.mine([]);
      await settle(id, confirmed);
    },
    /** The last two blocks replaced by a longer chain without them: the `n`th webhook is a signed `underpaid`, reason reorg. */
    async reorgOut<T>(node: Miner<T>, id: string, n: number, secret: string) {
      node.orphan(2);
      for (let i = 0; i < 3; i++) node.mine([]);
      await settle(id, n);
      const hook = hooksOf(id)[n - 1]!;
      expect(JSON.parse(hook.body)).toMatchObject({ event: 'underpaid', tx_hash: null, reason: 'reorg', amount_received_raw: '0' });
      expect(signatureValid(secret, hook)).toBe(true);
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

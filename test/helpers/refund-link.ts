import type { Address } from 'viem';
import { expect } from 'vitest';
import { startAnvil, type Anvil } from './anvil.js';
import { startTestService, type Merchant, type TestService } from './service.js';

/** BIP32 test vector 1's master xpub: order addresses nobody on anvil holds. */
const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
const json = (o: unknown) => JSON.stringify(o);

export interface RefundLinkWorld {
  anvil: Anvil;
  t: TestService;
  m: Merchant;
  /** A paid order of `paid` ETH refunded by `amount` through a refund link: the link's URL. */
  refundLink(orderId: string, paid: string, amount: string): Promise<{ url: string; refundId: string; paymentId: string }>;
  /** The merchant's wallet pays `eth` to `to` (one block; `confirmations` more make it final). */
  pay(to: string, eth: bigint): Promise<void>;
  /** The refund's status as the API shows it, once it is `status`. */
  waitForRefund(paymentId: string, refundId: string, status: string): Promise<void>;
  stop(): Promise<void>;
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A service on anvil (two confirmations: a refund is seen `sent` before `completed`) whose merchant is "Corner <Shop>". */
export async function startRefundLinkWorld(opts: { displayName: string }): Promise<RefundLinkWorld> {
  const anvil = await startAnvil();
  const t = await startTestService({
    networks: [{ slug: 'anvil', name: 'Anvil', family: 'evm', environments: [{ slug: 'local', upstreams: [anvil.url], confirmations: 2 }] }],
    api: { trusted_proxies: ['127.0.0.1'] },
    payments: { aml: { provider: 'none' }, tick_ms: 50, rates: { static: { 'ETH/USD': '2000' } } },
  }, { watch: { pollMs: 100, delivery: { pollMs: 100 } } });
  const m = await t.merchant({ plan: 'pro' });
  expect((await m.call('PUT', '/v1/payments/settings', json({ xpubs: { evm: XPUB }, display_name: opts.displayName }))).status).toBe(200);
  const payer = anvil.accounts[1]! as Address;
  const pay = async (to: string, wei: bigint) => {
    const hash = await anvil.wallet.sendTransaction({ account: payer, to: to as Address, value: wei, chain: null });
    await anvil.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  };
  return {
    anvil, t, m, pay,
    async refundLink(orderId, paid, amount) {
      const created = await m.call('POST', '/v1/payments', json({ order_id: orderId, network_slug: 'anvil', amount: paid }));
      expect(created.status, json(created.body)).toBe(200);
      const paymentId = created.body.payment.payment_id as string;
      await pay(created.body.payment.address, BigInt(Math.round(Number(paid) * 1e6)) * 10n ** 12n);
      await anvil.test.mine({ blocks: 2 });
      await waitFor(`${paymentId} paid`, async () => (await m.call('GET', `/v1/payments/${paymentId}`)).body.payment.status === 'paid');
      const r = await m.call('POST', `/v1/payments/${paymentId}/refunds`, json({ amount }));
      expect(r.status, json(r.body)).toBe(200);
      return { url: r.body.refund.refund_link.url as string, refundId: r.body.refund.refund_id as string, paymentId };
    },
    async waitForRefund(paymentId, refundId, status) {
      let last: unknown;
      await waitFor(`${refundId} ${status}`, async () => {
        const list = (await m.call('GET', `/v1/payments/${paymentId}/refunds`)).body.refunds as Array<{ refund_id: string; status: string }>;
        last = list.find((x) => x.refund_id === refundId);
        return (last as { status?: string } | undefined)?.status === status;
      }).catch((err: Error) => {
        throw new Error(`${err.message}; last ${JSON.stringify(last)}`);
      });
    },
    async stop() {
      await t.stop();
      await anvil.stop();
    },
  };
}

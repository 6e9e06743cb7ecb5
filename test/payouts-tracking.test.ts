import { type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAccount, webhookSecretOf } from '../src/store/index.js';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { signatureValid, startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';
import { until } from './helpers/wait.js';

/**
 * A payout paid from a test wallet on anvil goes `sent`; a reorg (evm_revert to before the
 * transfer, then a longer chain) takes it back to `awaiting_payment`; paid again it is `sent`,
 * then `completed` at anvil's `finalized` block: each step a signed `payout.<status>` webhook, in order.
 */
const CUSTOMER = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const json = (o: unknown) => JSON.stringify(o);

let anvil: Anvil;
let t: TestService;
let rx: Receiver;
let m: Merchant;
let secret: string;

beforeAll(async () => {
  [anvil, rx] = await Promise.all([startAnvil(), startReceiver()]);
  t = await startTestService({
    networks: [
      { slug: 'anvil', name: 'Anvil', family: 'evm', environments: [{ slug: 'local', upstreams: [anvil.url], confirmations: 1 }] },
      // A network whose node never answers: its lines never reach a final block.
      { slug: 'down', name: 'Down', family: 'evm', environments: [{ slug: 'local', upstreams: ['http://127.0.0.1:9'], confirmations: 1 }] },
    ],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
    payments: { aml: { provider: 'none' }, tick_ms: 50 },
  }, { watch: { pollMs: 100, delivery: { pollMs: 100 } } });
  m = await t.merchant({ plan: 'pro' });
  secret = webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!);
  expect((await m.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: true }))).status).toBeLessThan(300);
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await Promise.all([anvil?.stop(), rx?.close()]);
});

const line = async (id: string) => (await m.call('GET', `/v1/payouts/${id}`)).body.payout.lines[0];
const statusIs = (id: string, status: string) => until(async () => ((await line(id)).status === status ? line(id) : undefined));
const hooks = (id: string) => rx.received.filter((r) => JSON.parse(r.body).payout_id === id);

describe('a payout tracked to final on anvil, through a reorg', () => {
  it('sent; a reorg takes it back; paid again, sent and completed; it takes no watch slot', async () => {
    const created = await m.call('POST', '/v1/payouts', json({ lines: [{ network: 'anvil', address: CUSTOMER, amount: '0.5', reference: 'r-1' }] }));
    expect(created.status, json(created.body)).toBe(200);
    const id = created.body.payout.payout_id;
    // A smaller transfer and one of another asset's amount do not match.
    const [payer] = anvil.accounts as [Address];
    const snapshot = await anvil.test.request({ method: 'evm_snapshot' } as never) as Hex;
    await anvil.wallet.sendTransaction({ account: payer, to: CUSTOMER, value: 100_000_000_000_000_000n, chain: null });
    const hash = await anvil.wallet.sendTransaction({ account: payer, to: CUSTOMER, value: 500_000_000_000_000_000n, chain: null });
    const sent = await statusIs(id, 'sent');
    expect(sent.tx_hash).toBe(hash);
    // Watched while it is tracked, in no slot.
    expect((await m.call('GET', '/v1/address-watch/account')).body.slots_used).toBe(0);
    // The chain forgets both transfers: a longer chain without them.
    await anvil.test.request({ method: 'evm_revert', params: [snapshot] } as never);
    await anvil.test.mine({ blocks: 3 });
    const back = await statusIs(id, 'awaiting_payment');
    expect(back).toMatchObject({ tx_hash: null });
    expect(back.payment_request.uri).toMatch(/^ethereum:/);
    const again = await anvil.wallet.sendTransaction({ account: payer, to: CUSTOMER, value: 600_000_000_000_000_000n, chain: null });
    expect((await statusIs(id, 'sent')).tx_hash).toBe(again);
    // anvil's `finalized` block is 64 under its head.
    await anvil.test.mine({ blocks: 70 });
    const done = await statusIs(id, 'completed');
    expect(done.payment_request).toBeNull();
    // Held a second finality window past final (a deeper reorg would still take it back), then it goes.
    expect((await m.call('GET', '/v1/address-watch/addresses')).body.total).toBe(1);
    await anvil.test.mine({ blocks: 70 });
    await until(async () => ((await m.call('GET', '/v1/address-watch/addresses')).body.total === 0 ? true : undefined));
    await rx.waitFor(() => hooks(id).length >= 5, 20_000);
    const events = hooks(id).map((r) => JSON.parse(r.body));
    expect(events.map((b) => [b.event, b.tx_hash])).toEqual([
      ['payout.awaiting_payment', null], ['payout.sent', hash], ['payout.awaiting_payment', null], ['payout.sent', again], ['payout.completed', again],
    ]);
    expect(events.every((b) => b.type === 'payout_line' && b.reference === 'r-1')).toBe(true);
    expect(hooks(id).every((r) => signatureValid(secret, r))).toBe(true);
  }, 90_000);

  it('a line goes completed even behind more than 500 older sent lines that never reach a final block', async () => {
    // 501 lines on the network that never answers, set `sent` as a transfer would (reaching it
    // through that network's scanner needs a node); they stay sent, ahead of the one on anvil.
    const lines = Array.from({ length: 501 }, (_, i) => ({ network: 'down', address: `0x${(i + 1).toString(16).padStart(40, '0')}`, amount: '0.01', reference: `d-${i}` }));
    const stuck = await m.call('POST', '/v1/payouts', json({ lines }));
    expect(stuck.status, json(stuck.body).slice(0, 500)).toBe(200);
    const marked = await t.store.db.updateTable('payout_lines').set({ status: 'sent', block_height: 1 })
      .where('payout_pk', '=', (await t.store.db.selectFrom('payouts').select('id').where('payout_id', '=', stuck.body.payout.payout_id).executeTakeFirstOrThrow()).id)
      .executeTakeFirst();
    expect(Number(marked.numUpdatedRows)).toBe(501);
    const created = await m.call('POST', '/v1/payouts', json({ lines: [{ network: 'anvil', address: CUSTOMER, amount: '0.25', reference: 'r-2' }] }));
    const id = created.body.payout.payout_id;
    const [payer] = anvil.accounts as [Address];
    await anvil.wallet.sendTransaction({ account: payer, to: CUSTOMER, value: 250_000_000_000_000_000n, chain: null });
    // At once after the answer: the payout's answer waits until its network's scanner knows
    // where it starts (no scanner runs on it: the first case's watch went), as an order's and a
    // watch's do. It did not, and this transfer was missed on PostgreSQL in 3 of 4 runs.
    await statusIs(id, 'sent');
    await anvil.test.mine({ blocks: 70 });
    expect((await statusIs(id, 'completed')).status).toBe('completed');
  }, 90_000);
});

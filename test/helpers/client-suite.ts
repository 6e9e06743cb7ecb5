import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evmAddressAt } from '../../src/chains/evm/derive.js';
import { PaymentsClient, type Payment, type PaymentSettings } from '../../src/client/payments.js';
import { PayoutsClient, RefundsClient } from '../../src/client/payouts.js';
import type { WebhookDelivery } from '../../src/client/address-watch.js';
import {
  createMerchant, freePort, lastJsonLine, PAYOUT_ADDRESS, readmeBlocks, repoRoot, scratch, SOLANA_WALLET, startServe, TEST_XPUB, waitForPort,
  type ClientMerchant, type IntegrationReport, type LanguageHarness, type Serve,
} from './clients.js';
import { describeUnless, itUnless } from './skips.js';

/** One program (a compile included); a test runs several, so its own limit is larger. */
const RUN_MS = 120_000;
const TEST_MS = 360_000;

/**
 * The same checks for each client library: its unit tests, an integration program against a
 * real `rpcctl serve`, and every README example run as written. Skipped, saying why, when the
 * language's toolchain is not installed.
 */
export function describeClientLibrary(h: LanguageHarness): void {
  const title = h.toolchain.available ? `${h.name} client library` : `${h.name} client library (SKIPPED: ${h.toolchain.reason})`;
  describeUnless(!h.toolchain.available && h.toolchain.reason, title, () => {
    let serve: Serve;
    let work: ReturnType<typeof scratch>;
    beforeAll(async () => {
      serve = await startServe();
      work = scratch(`rpcctl-${h.dir}-`);
    }, 60_000);
    afterAll(async () => {
      await serve?.stop();
      work?.remove();
    });

    const run = (spec: { cmd: string; args: string[]; cwd: string; env?: Record<string, string> }, env: Record<string, string> = {}) =>
      execa(spec.cmd, spec.args, { cwd: spec.cwd, env: { ...spec.env, ...env }, reject: false, all: true, timeout: RUN_MS });

    it(`unit tests (${h.dir}) reproduce the signature and webhook vectors`, async () => {
      const r = await run(h.unit());
      expect(r.exitCode, r.all).toBe(0);
      for (const line of h.unitPassed) expect(r.all).toMatch(line);
    }, TEST_MS);

    const installTitle = `installs from a clone as its README says${h.install.toolchain.available ? '' : ` (SKIPPED: ${h.install.toolchain.reason})`}`;
    itUnless(!h.install.toolchain.available && h.install.toolchain.reason, installTitle, async () => {
      const block = readmeBlocks(join(repoRoot, 'clients', h.dir, 'README.md')).find((b) => b.info === 'sh from-repo');
      expect(block, 'the README has a `sh from-repo` install block').toBeDefined();
      // A copy stands for the reader's clone: building a package writes into its source tree.
      const clone = work.sub(`clone-${h.dir}`);
      cpSync(join(repoRoot, 'clients', h.dir), join(clone, 'clients', h.dir), { recursive: true });
      const lines = block!.code.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
        .map((l) => l.replaceAll('/path/to/rpcctl', clone));
      expect(lines.length).toBeGreaterThan(0);
      const project = work.sub(`project-${h.dir}`);
      const r = await run({ cmd: 'sh', args: ['-ec', h.install.script(lines, project)], cwd: project, env: h.install.env });
      expect(r.exitCode, r.all).toBe(0);
      expect(r.stdout).toContain('rpcctl client installed');
    }, TEST_MS);

    it('integration: endpoint (allowlist, rename), watch, payment order (settings, create twice, get, list, cancel twice), refund refused, payout (create, list, get, cancel), wallets.solana and a referenced Solana order, verified real webhook deliveries to its own loopback receiver, redelivery', async () => {
      const m = await createMerchant(serve);
      try {
        const r = await run(h.integration(), m.env);
        expect(r.exitCode, r.all).toBe(0);
        const report = lastJsonLine<IntegrationReport>(r.stdout);
        // What the program says it did, checked from the service's side with the TypeScript client.
        const { endpoint } = await m.ts.getEndpoint(report.endpoint_id);
        expect(endpoint).toMatchObject({ name: `${h.dir}-it-renamed`, status: 'paused', allowed_ips: ['203.0.113.7', '2001:db8::1'] });
        expect(report.renamed).toBe(`${h.dir}-it-renamed`);
        expect(report.allowed_ips).toEqual(['203.0.113.7', '2001:db8::1']);
        expect(report.bad_request.status).toBe(400);
        expect(report.bad_request.error).toMatch(/allowed_ips/);
        // The same error codes as the TypeScript client's, from real answers of the service.
        expect(report.bad_request.code).toBe('E_VALIDATION');
        expect(report.not_found).toEqual({ status: 404, code: 'E_NOT_FOUND' });
        const watches = await m.ts.request<{ addresses: Array<{ watch_id: string }> }>('GET', '/v1/address-watch/addresses');
        expect(watches.addresses.map((w) => w.watch_id)).toContain(report.watch_id);
        const solana = await m.ts.request<{ addresses: Array<{ watch_id: string; network_slug: string; address: string }> }>('GET', '/v1/address-watch/addresses?network_slug=solana');
        // The library's watch of the key, and its Solana order's watch of its reference.
        expect(solana.addresses).toEqual([
          expect.objectContaining({ watch_id: report.solana_watch_id, network_slug: 'solana', address: SOLANA_WALLET }),
          expect.objectContaining({ network_slug: 'solana', address: report.solana.reference }),
        ]);
        expect(report.event).toMatchObject({ id: report.webhook_id, type: 'payment', direction: 'in', network: 'eth', test: true });
        expect(report.wrong_secret_refused).toBe(true);
        await expectDelivered(m, report.webhook_id);

        // Payments: the xpub is stored; one order was made (the identical second create, sent
        // again within its second, was re-signed and answered the same order); it is canceled.
        const payments = new PaymentsClient(m.ts);
        const settings: PaymentSettings = await payments.settings();
        expect(settings.xpubs.evm).toBe(TEST_XPUB);
        expect(settings.derived.evm).toEqual({ first_address: evmAddressAt(TEST_XPUB, 0), next_index: 1 });
        expect(report.payment.created_again).toBe(false);
        const { payment } = await payments.get(report.payment.payment_id);
        expect(payment).toMatchObject<Partial<Payment>>({
          order_id: report.payment.order_id, address: evmAddressAt(TEST_XPUB, 0), derivation_index: 0, network: 'eth',
          status: 'failed', reason: 'canceled', lifecycle: 'pending>failed', metadata: { lang: h.dir },
        });
        expect(report.payment.address).toBe(payment.address);
        expect((await payments.list({ network: 'eth' })).total).toBe(1);
        expect(report.payment_event).toMatchObject({
          id: `${payment.payment_id}_1`, product: 'payments', type: 'payment_order', event: 'failed', status: 'failed',
          payment_id: payment.payment_id, order_id: payment.order_id, reason: 'canceled', lifecycle: 'pending>failed',
        });
        await expectDelivered(m, `${payment.payment_id}_1`);

        // Refunds and payouts: the canceled order has nothing to refund, and the TypeScript
        // client is refused the same way; the one-line payout is canceled, its webhook verified.
        const tsRefused = await new RefundsClient(m.ts).create(payment.payment_id, { address: PAYOUT_ADDRESS }).catch((e: unknown) => e as { status: number; code: string; message: string });
        expect(report.refund_refused).toEqual({ status: 409, code: 'E_API', error: (tsRefused as { message: string }).message });
        expect(tsRefused).toMatchObject({ status: 409, code: 'E_API' });
        expect(report.refund_refused.error).toMatch(/nothing received/);
        const { payout } = await new PayoutsClient(m.ts).get(report.payout.payout_id);
        expect(payout).toMatchObject({ status: 'canceled', approval: 'not_needed', line_count: 1 });
        expect(payout.lines).toEqual([expect.objectContaining({
          line: 1, status: 'canceled', network: 'eth', address: PAYOUT_ADDRESS, amount: '0.001', reference: `${h.dir}-it-payout`, lifecycle: 'awaiting_payment>canceled',
        })]);
        expect(report.payout).toEqual({ payout_id: payout.payout_id, listed: true, status: 'canceled', awaiting_total: [1, 0] });
        expect((await new PayoutsClient(m.ts).list({ status: 'canceled' })).total).toBe(1);
        expect(report.payout_event).toMatchObject({
          product: 'payments', type: 'payout_line', event: 'payout.canceled', status: 'canceled', payout_id: payout.payout_id, line: 1,
          network: 'eth', address: PAYOUT_ADDRESS, amount: '0.001', reference: `${h.dir}-it-payout`, tx_hash: null,
        });
        await expectDelivered(m, report.payout_event.id as string);

        // Solana: the wallet set through the library is the settings' wallets.solana, and the
        // order the library made is paid to it under its own reference.
        expect((await payments.settings()).wallets).toEqual({ solana: SOLANA_WALLET });
        const { payment: sol } = await payments.get(report.solana.payment_id);
        expect(sol).toMatchObject({ network: 'solana', address: SOLANA_WALLET, reference: report.solana.reference, status: 'pending' });
        expect(report.solana).toEqual({ wallet: SOLANA_WALLET, payment_id: sol.payment_id, reference: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/) });

        // The redelivered test webhook reached the receiver twice and is recorded with two attempts.
        expect(report.redelivered.webhook_id).toBe(report.webhook_id);
        expect(report.redelivered.arrivals).toBe(2);
        const redelivered = await expectDelivered(m, report.webhook_id, 2);
        expect(redelivered.delivery_id).toBe(report.redelivered.delivery_id);
      } finally {
        await m.ts.close();
      }
    }, TEST_MS);

    it('README examples run as written', async () => {
      const blocks = readmeBlocks(join(repoRoot, 'clients', h.dir, 'README.md'));
      const scripts = blocks.filter((b) => b.info === h.fence);
      const receivers = blocks.filter((b) => b.info === `${h.fence} receiver`);
      expect(scripts.length).toBeGreaterThanOrEqual(3);
      expect(receivers).toHaveLength(1);
      const m = await createMerchant(serve);
      try {
        for (const [i, block] of scripts.entries()) {
          const r = await run(h.example(block.code, i, work.sub(`example-${i}`), 'script'), m.env);
          expect(r.exitCode, `README example ${i + 1}:\n${block.code}\n---\n${r.all}`).toBe(0);
          expect(r.stdout.trim(), `README example ${i + 1} printed nothing`).not.toBe('');
        }
        const endpoints = await m.ts.listEndpoints();
        expect(endpoints.endpoints.length, 'the README creates an endpoint').toBeGreaterThanOrEqual(1);

        // The receiver example, started as written on $PORT, gets a real signed delivery.
        const port = await freePort();
        const receiver = execa(...receiverCommand(h.example(receivers[0]!.code, scripts.length, work.sub('receiver'), 'receiver'), { ...m.env, PORT: String(port) }));
        let out = '';
        receiver.all!.on('data', (d: Buffer) => { out += d.toString(); });
        try {
          await Promise.race([waitForPort(port), receiver.then((x) => { throw new Error(`receiver exited: ${x.exitCode}\n${out}`); })]);
          await m.ts.request('PUT', '/v1/address-watch/webhook', { body: { url: `http://127.0.0.1:${port}/webhook`, enabled: true } });
          const queued = await m.ts.request<{ webhook_id: string }>('POST', '/v1/address-watch/webhook/test', { body: { type: 'payment', network: 'eth' } });
          const deadline = Date.now() + 20_000;
          while (!out.includes(queued.webhook_id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
          expect(out, 'the README receiver prints the verified event id').toContain(queued.webhook_id);
          await expectDelivered(m, queued.webhook_id);
        } finally {
          receiver.kill('SIGTERM');
          await receiver;
        }
      } finally {
        await m.ts.close();
      }
    }, TEST_MS);
  });
}

function receiverCommand(spec: { cmd: string; args: string[]; cwd: string; env?: Record<string, string> }, env: Record<string, string>) {
  return [spec.cmd, spec.args, { cwd: spec.cwd, env: { ...spec.env, ...env }, reject: false, all: true, forceKillAfterDelay: 2000, timeout: RUN_MS }] as const;
}

/** The service recorded the delivery as answered 2xx by the receiver, after at least `attempts` attempts. */
async function expectDelivered(m: ClientMerchant, webhookId: string, attempts = 1): Promise<WebhookDelivery> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await m.ts.request<{ deliveries: WebhookDelivery[] }>('GET', '/v1/address-watch/deliveries');
    const d = r.deliveries.find((x) => x.webhook_id === webhookId);
    if (d?.status === 'delivered' && d.attempt_count >= attempts) {
      expect(d.last_status_code).toBe(200);
      return d;
    }
    if (Date.now() > deadline) throw new Error(`delivery ${webhookId} not delivered: ${JSON.stringify(d)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

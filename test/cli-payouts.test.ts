import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, scriptedPrompter, tempConfigDir, type CliRunOptions } from './helpers/cli.js';
import { startRefundLinkWorld, type RefundLinkWorld } from './helpers/refund-link.js';

// `rpcctl payments refund` and `rpcctl payouts ...` against a service on anvil (issue 34): what a
// merchant types, what scripts read (--json, --jq, exit codes), a CSV file checked line by line.

const CUSTOMER = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const OTHER = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
let w: RefundLinkWorld;
let dir: string;
let as: (args: string[], opts?: CliRunOptions) => ReturnType<typeof cli>;

beforeAll(async () => {
  w = await startRefundLinkWorld({ displayName: 'Corner Shop' });
  const env = { PUBLIC_API_KEY: w.m.apiKey, PUBLIC_API_SECRET: w.m.secret, PUBLIC_API_BASE: w.t.baseUrl, RPCCTL_CONFIG_DIR: tempConfigDir() };
  as = (args, opts = {}) => cli(args, { ...opts, env: { ...env, ...opts.env } });
  dir = mkdtempSync(join(tmpdir(), 'rpcctl-payouts-'));
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('rpcctl payments refund', () => {
  it('without --address prints the refund link; with one, the refund id; a wrong address or currency is refused', async () => {
    const { paymentId } = await w.refundLink('cli-1', '1', '0.01');
    const link = await as(['payments', 'refund', paymentId, '--amount', '0.2']);
    expect(link.code, link.stderr).toBe(0);
    expect(link.stdout).toMatch(new RegExp(`^${w.t.baseUrl}/refund/[A-Za-z0-9_-]{32}\\n$`));
    expect(link.stderr).toMatch(/^Refund rf_\S+ of 0\.2 ETH: send this link to your customer/);
    const given = await as(['payments', 'refund', paymentId, '--amount', '0.3', '--address', CUSTOMER, '--json']);
    expect(given.code, given.stderr).toBe(0);
    expect(JSON.parse(given.stdout)).toMatchObject({ amount: '0.3', address: CUSTOMER, status: 'awaiting_payment', refund_link: null });
    const jq = await as(['payments', 'refund', paymentId, '--amount', '0.1', '--address', CUSTOMER, '--jq', '.payment_request.uri']);
    expect(jq.stdout).toBe(`ethereum:${CUSTOMER}@31337?value=100000000000000000\n`);
    const tron = await as(['payments', 'refund', paymentId, '--address', 'TLsV52sRDL79HXGGm9yzwKibb6BeruhUzy']);
    expect(tron.code).toBe(1);
    expect(tron.stderr).toMatch(/address: /);
    const more = await as(['payments', 'refund', paymentId, '--amount', '5', '--address', CUSTOMER]);
    expect(more.code).toBe(1);
    expect(more.stderr).toMatch(/more than order .* has left to refund/);
    const fiat = await as(['payments', 'refund', paymentId, '--amount', '10', '--currency', 'USD']);
    expect(fiat.code).toBe(2);
    expect(fiat.stderr).toMatch(/is priced in ETH: give --amount in ETH without --currency/);
    expect((await as(['payments', 'refund', paymentId, '--amount', 'overpaid', '--currency', 'USD'])).code).toBe(2);
  });
});

describe('rpcctl payouts', () => {
  it('create --file: a bad line is named by its line number before anything is sent; the service\'s refusal too', async () => {
    const bad = file('bad.csv', `network,asset,address,amount,currency,reference\nanvil,,${CUSTOMER},0.1,,a\nanvil,,${CUSTOMER},ten,,b\n`);
    const r = await as(['payouts', 'create', '--file', bad, '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${bad}: line 3: amount: must be a positive decimal such as 12.50, got "ten"`);
    const header = await as(['payouts', 'create', '--file', file('h.csv', 'network,wallet,amount\n'), '--yes']);
    expect(header.code).toBe(2);
    expect(header.stderr).toMatch(/line 1: unknown column "wallet"/);
    // Quoted references with commas; a Tron address on an EVM line, found by the service on the file's line 4.
    const wrong = file('wrong.csv', `network,address,amount,reference\nanvil,${CUSTOMER},0.1,"a, b"\n\nanvil,TLsV52sRDL79HXGGm9yzwKibb6BeruhUzy,0.2,c\n`);
    const w2 = await as(['payouts', 'create', '--file', wrong, '--yes']);
    expect(w2.code).toBe(1);
    expect(w2.stderr).toMatch(new RegExp(`${wrong.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: line 4: address: `));
    expect(JSON.parse((await as(['payouts', 'list', '--json'])).stdout)).toEqual([]);
  });

  it('create asks first (a summary with totals per network and asset), --yes in scripts; list, show, cancel; psbt on EVM refused', async () => {
    const csv = file('ok.csv', `network,asset,address,amount,currency,reference\nanvil,,${CUSTOMER},0.25,,inv-1\nanvil,native,${OTHER},1.5,,inv-2\nanvil,,${OTHER},20,USD,"fee, March"\n`);
    const piped = await as(['payouts', 'create', '--file', csv]);
    expect(piped.code).not.toBe(0);
    expect(piped.stderr).toMatch(/--yes/);
    const declined = scriptedPrompter([{ match: /Create this payout of 3 lines\?/, answer: false }]);
    const no = await as(['payouts', 'create', '--file', csv], { prompter: declined, tty: true });
    expect(no.code).toBe(1);
    expect(no.stderr).toContain('3 lines from');
    expect(no.stderr).toMatch(/anvil {2}1\.75 native {2}\(2 lines\)/);
    expect(no.stderr).toMatch(/anvil {2}20 USD {2}\(1 line\)/);
    expect(JSON.parse((await as(['payouts', 'list', '--json'])).stdout)).toEqual([]);
    const yes = await as(['payouts', 'create', '--file', csv, '--yes']);
    expect(yes.code, yes.stderr).toBe(0);
    const id = yes.stdout.trim();
    expect(id).toMatch(/^po_[A-Za-z0-9_-]{16}$/);
    const shown = JSON.parse((await as(['payouts', 'show', id, '--json'])).stdout);
    expect(shown.lines.map((l: any) => [l.line, l.amount, l.reference, l.status])).toEqual([
      [1, '0.25', 'inv-1', 'awaiting_payment'], [2, '1.5', 'inv-2', 'awaiting_payment'], [3, '0.01', 'fee, March', 'awaiting_payment'],
    ]);
    expect((await as(['payouts', 'show', id, '--jq', '.lines[0].payment_request.uri'])).stdout).toBe(`ethereum:${CUSTOMER}@31337?value=250000000000000000\n`);
    const table = await as(['payouts', 'show', id]);
    expect(table.stdout).toMatch(/^payout_id\tpo_/m);
    const listed = await as(['payouts', 'list', '--jq', '.[].payout_id']);
    expect(listed.stdout).toBe(`${id}\n`);
    const psbt = await as(['payouts', 'psbt', id]);
    expect(psbt.code).toBe(1);
    expect(psbt.stderr).not.toBe('');
    expect((await as(['payouts', 'psbt', id, '--fee-rate', 'fast'])).code).toBe(2);
    const garbage = await as(['payouts', 'submit', id, '0xdeadbeef']);
    expect(garbage.code).toBe(1);
    const canceled = await as(['payouts', 'cancel', id, '--yes', '--json']);
    expect(canceled.code, canceled.stderr).toBe(0);
    expect(JSON.parse(canceled.stdout).status).toBe('canceled');
    expect((await as(['payouts', 'show', 'po_AAAAAAAAAAAAAAAA'])).code).toBe(1);
  });

  it('a payout line paid from the merchant\'s wallet shows sent; submit reads a signed transaction from a file', async () => {
    const csv = file('pay.csv', `network,address,amount\nanvil,${OTHER},0.05\n`);
    const id = (await as(['payouts', 'create', '--file', csv, '--yes'])).stdout.trim();
    const payer = w.anvil.accounts[2]! as Address;
    const request = await w.anvil.wallet.prepareTransactionRequest({ account: payer, to: OTHER, value: 50_000_000_000_000_000n, chain: null });
    // anvil signs for its unlocked accounts: eth_signTransaction gives the raw transaction a wallet would.
    const signed = await w.anvil.wallet.request({ method: 'eth_signTransaction', params: [{ from: payer, to: OTHER, value: `0x${(50_000_000_000_000_000n).toString(16)}`, gas: `0x${request.gas!.toString(16)}`, nonce: `0x${request.nonce!.toString(16)}`, maxFeePerGas: `0x${request.maxFeePerGas!.toString(16)}`, maxPriorityFeePerGas: `0x${request.maxPriorityFeePerGas!.toString(16)}` } as never] } as never) as string;
    const tx = file('signed.hex', `${signed}\n`);
    const sub = await as(['payouts', 'submit', id, tx]);
    expect(sub.code, sub.stderr).toBe(0);
    expect(sub.stdout).toMatch(/^0x[0-9a-f]{64}\n$/);
    const hash = sub.stdout.trim();
    await w.anvil.test.mine({ blocks: 1 });
    const end = Date.now() + 20_000;
    let line: any;
    do {
      line = JSON.parse((await as(['payouts', 'show', id, '--json'])).stdout).lines[0];
      if (line.status === 'sent') break;
      await new Promise((r) => setTimeout(r, 100));
    } while (Date.now() < end);
    expect(line).toMatchObject({ status: 'sent', tx_hash: hash, expected_tx: hash });
    expect(readFileSync(tx, 'utf8')).toBe(`${signed}\n`);
  });
});

import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliStarted, tempConfigDir, type CliRunOptions } from './helpers/cli.js';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';
import { startTestService, type TestService } from './helpers/service.js';

const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
const SENDER = `0x${'ab'.repeat(20)}`;
const lines = (s: string) => s.trim().split('\n').filter(Boolean);

let chain: FakeEvm;
let t: TestService;

async function merchant() {
  const m = await t.merchant({ plan: 'pro' });
  const env = { PUBLIC_API_KEY: m.apiKey, PUBLIC_API_SECRET: m.secret, PUBLIC_API_BASE: t.baseUrl, RPCCTL_CONFIG_DIR: tempConfigDir() };
  return { m, as: (args: string[], opts: CliRunOptions = {}) => cli(args, { ...opts, env: { ...env, ...opts.env } }), env };
}

beforeAll(async () => {
  chain = await startFakeEvmChain();
  t = await startTestService({
    networks: [{ slug: 'eth', name: 'Ethereum', environments: [{ slug: 'mainnet', upstreams: [chain.url] }] }],
    payments: { tick_ms: 50 },
  }, { watch: { pollMs: 50 } });
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await chain?.close();
});

describe('rpcctl payments', () => {
  it('settings, create (idempotent), get, list, cancel; amounts in units; --json everywhere', async () => {
    const { as } = await merchant();
    const set = await as(['payments', 'settings', '--xpub', XPUB, '--tolerance-bps', '25', '--accept-late']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/^first address\t0x[0-9a-fA-F]{40}$/m);
    expect(set.stdout).toMatch(/^tolerance\t25 bps$/m);
    expect(set.stdout).toMatch(/^accept_late\ttrue$/m);
    const shown = JSON.parse((await as(['payments', 'settings', '--json'])).stdout);
    expect(shown).toMatchObject({ xpubs: { evm: XPUB }, underpaid_tolerance_bps: 25, accept_late: true, aml_fail_at: 'high' });
    expect((await as(['payments', 'settings', '--no-accept-late', '--json'])).stdout).toMatch(/"accept_late": false/);
    // BIP84's zpub of "abandon ... about" (no UTXO network here: shown in Bitcoin's prefixes); the EVM key stays.
    const zpub = 'zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs';
    const utxo = await as(['payments', 'settings', '--xpub-utxo', zpub]);
    expect(utxo.code, utxo.stderr).toBe(0);
    expect(utxo.stdout).toMatch(/^first address\tbc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu \(bitcoin\)$/m);
    expect(utxo.stderr).toMatch(/gap limit/);
    expect(JSON.parse((await as(['payments', 'settings', '--json'])).stdout).xpubs).toEqual({ evm: XPUB, utxo: zpub });
    const bad = await as(['payments', 'settings', '--xpub-tron', zpub]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/xpubs\.tron: is not a valid BIP32 extended public key/);
    // The Solana wallet Solana Pay orders are paid to: shown, refused naming the setting and the form, removed by "".
    const SOL_WALLET = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
    const wallet = await as(['payments', 'settings', '--wallet-solana', SOL_WALLET]);
    expect(wallet.code, wallet.stderr).toBe(0);
    expect(wallet.stdout).toMatch(new RegExp(`^wallet \\(solana\\)\\t${SOL_WALLET}$`, 'm'));
    expect(JSON.parse((await as(['payments', 'settings', '--json'])).stdout).wallets).toEqual({ solana: SOL_WALLET });
    const notSolana = await as(['payments', 'settings', '--wallet-solana', SENDER]);
    expect(notSolana.code).toBe(1);
    expect(notSolana.stderr).toMatch(/wallets\.solana: must be a Solana address \(32 to 44 base58 characters\)/);
    expect(JSON.parse((await as(['payments', 'settings', '--wallet-solana', '', '--json'])).stdout).wallets).toEqual({});
    // The checkout page's name and return address; the API's message for an http one.
    const named = await as(['payments', 'settings', '--display-name', 'Corner Shop', '--redirect-url', 'https://shop.example/thanks']);
    expect(named.code, named.stderr).toBe(0);
    expect(named.stdout).toMatch(/^display_name\tCorner Shop$/m);
    expect(named.stdout).toMatch(/^redirect_url\thttps:\/\/shop\.example\/thanks$/m);
    const http = await as(['payments', 'settings', '--redirect-url', 'http://shop.example/thanks']);
    expect(http.code).toBe(1);
    expect(http.stderr).toMatch(/redirect_url: must be an https URL/);
    expect(JSON.parse((await as(['payments', 'settings', '--redirect-url', '', '--json'])).stdout)).toMatchObject({ display_name: 'Corner Shop', redirect_url: null });

    const c = await as(['payments', 'create', '--order-id', 'cli-1', '--network', 'eth', '--amount', '0.000000000000000123', '--metadata', '{"cart":7}']);
    expect(c.code, c.stderr).toBe(0);
    const id = c.stdout.trim();
    expect(id).toMatch(/^pay_/);
    expect(c.stderr).toMatch(/Created: pay 0.000000000000000123 ETH to 0x/);
    expect(c.stderr).toContain(`Checkout page for your customer: ${t.baseUrl}/pay/${id}`);
    const again = await as(['payments', 'create', '--order-id', 'cli-1', '--network', 'eth', '--amount', '0.000000000000000123', '--metadata', '{"cart":7}', '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ payment_id: id, created: false, amount_raw: '123', checkout_url: `${t.baseUrl}/pay/${id}` });
    const conflict = await as(['payments', 'create', '--order-id', 'cli-1', '--network', 'eth', '--amount', '1']);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toMatch(/already exists/);
    expect((await as(['payments', 'create', '--order-id', 'x', '--network', 'eth', '--amount', '1', '--metadata', '[1]'])).code).toBe(2);

    const get = await as(['payments', 'get', id]);
    expect(get.stdout).toMatch(/^status\tpending$/m);
    expect(get.stdout).toMatch(/^amount\t0.000000000000000123 ETH$/m);
    const list = await as(['payments', 'list']);
    expect(lines(list.stdout)).toHaveLength(1);
    expect(list.stdout.split('\t').slice(0, 5)).toEqual([id, 'cli-1', 'pending', 'eth', '0.000000000000000123 ETH']);
    expect(JSON.parse((await as(['payments', 'list', '--status', 'paid', '--json'])).stdout)).toEqual([]);

    const noYes = await as(['payments', 'cancel', id]);
    expect(noYes.code).toBe(2);
    const cancel = await as(['payments', 'cancel', id, '--yes', '--json']);
    expect(JSON.parse(cancel.stdout)).toMatchObject({ status: 'failed', reason: 'canceled' });
    expect((await as(['payments', 'get', 'pay_missing'])).code).toBe(1);
  });

  it('watch follows one order until it ends, one line per transition', async () => {
    const { as, env } = await merchant();
    await as(['payments', 'settings', '--xpub', XPUB]);
    const created = JSON.parse((await as(['payments', 'create', '--order-id', 'w-1', '--network', 'eth', '--amount', '2', '--json'])).stdout);
    const running = cliStarted(['payments', 'watch', created.payment_id, '--interval', '0.2'], { env });
    await running.waitFor(/pending/);
    chain.mine([{ from: SENDER, to: created.address, wei: 10n ** 18n }]);
    await running.waitFor(/underpaid/);
    chain.mine([{ from: SENDER, to: created.address, wei: 10n ** 18n }]);
    const done = await running.done;
    expect(done.code, done.stderr).toBe(0);
    expect(lines(done.stdout).map((l) => l.split('\t')[1])).toEqual(['pending', 'seen', 'underpaid', 'seen', 'aml_check', 'paid']);
    expect(lines(done.stdout).at(-1)!.split('\t')[2]).toBe('2/2 ETH');
  });
});

describe('rpcctl payments and the global output flags', () => {
  it('--jq filters get, list, cancel and each line of watch, as everywhere else', async () => {
    const { as } = await merchant();
    const created = JSON.parse((await as(['payments', 'create', '--order-id', 'jq-1', '--network', 'eth', '--amount', '1.5', '--address', `0x${'cd'.repeat(20)}`, '--json'])).stdout);
    const id = created.payment_id as string;
    expect((await as(['payments', 'get', id, '--jq', '.amount'])).stdout).toBe('1.5\n');
    expect((await as(['payments', 'list', '--jq', '.[] | [.order_id, .status] | join(" ")'])).stdout).toBe('jq-1 pending\n');
    expect((await as(['payments', 'cancel', id, '--yes', '--jq', '.reason'])).stdout).toBe('canceled\n');
    // watch prints one JSON line per transition: --jq applies to each, compact.
    const watched = await as(['payments', 'watch', id, '--interval', '0.2', '--jq', '{s: .status, r: .payment.reason}']);
    expect(watched.code, watched.stderr).toBe(0);
    expect(watched.stdout).toBe('{"s":"pending","r":"canceled"}\n{"s":"failed","r":"canceled"}\n');
    const bad = await as(['payments', 'get', id, '--jq', '.[']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --jq: /);
  });

  it('a slow call shows the spinner on a terminal, like every API command', async () => {
    // A stand-in that answers after 1.2 s: the spinner starts at ~300 ms.
    const payment = { payment_id: 'pay_slow', order_id: 's', status: 'pending', network: 'eth', asset: 'native', asset_symbol: 'ETH', decimals: 18,
      address: '0x0', watch_id: 'w_1', derivation_index: null, amount: '1', amount_raw: '1000000000000000000', amount_received: '0', amount_received_raw: '0',
      tx_hashes: [], confirmations: 1, expires_at: '2026-01-01T00:00:00.000Z', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
      webhook_url: null, metadata: null, aml: null, reason: null, late: false, overpaid: false, lifecycle: 'pending' };
    const server = createServer((req, res) => {
      req.resume();
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, payment })), 1200);
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const r = await cli(['payments', 'get', 'pay_slow', '--jq', '.status'], {
        tty: true, env: { PUBLIC_API_KEY: 'key_1234567890', PUBLIC_API_SECRET: 's', PUBLIC_API_BASE: base, RPCCTL_CONFIG_DIR: tempConfigDir() },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/\r[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] GET \/v1\/payments\/pay_slow/);
      expect(r.stderr.endsWith('\r\x1b[K')).toBe(true);
      expect(r.stdout).toBe('pending\n');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('rpcctl admin aml load', () => {
  it('replaces the sanctions list from a file, and refuses a bad one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rpcctl-aml-'));
    const file = join(dir, 'list.json');
    writeFileSync(file, JSON.stringify(['0x8589427373D6D84E98730D7795D8f6f8731FDA16', { address: '12QtD5BFwRsdNsAZY76UVE1xyCGNTojH9h', currency: 'XBT' }]));
    const r = await cli(['admin', 'aml', 'load', file, '--data-dir', t.dataDir, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ loaded: 2, currencies: { ETH: 1, XBT: 1 } });
    const rows = await t.store.db.selectFrom('aml_sanctions').select('address_key').orderBy('address_key').execute();
    expect(rows.map((x) => x.address_key)).toEqual(['0x8589427373d6d84e98730d7795d8f6f8731fda16', '12QtD5BFwRsdNsAZY76UVE1xyCGNTojH9h']);
    writeFileSync(file, '<xml/>');
    const bad = await cli(['admin', 'aml', 'load', file, '--data-dir', t.dataDir]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/SDN_ADVANCED/);
    expect((await cli(['admin', 'aml', 'load', join(dir, 'nope.txt'), '--data-dir', t.dataDir])).stderr).toMatch(/no such file/);
  });
});

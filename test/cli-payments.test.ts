import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliStarted, tempConfigDir, type CliRunOptions } from './helpers/cli.js';
import { startFakeEvmChain, type FakeEvmChain } from './helpers/fake-evm.js';
import { startTestService, type TestService } from './helpers/service.js';

const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
const SENDER = `0x${'ab'.repeat(20)}`;
const lines = (s: string) => s.trim().split('\n').filter(Boolean);

let chain: FakeEvmChain;
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

    const c = await as(['payments', 'create', '--order-id', 'cli-1', '--network', 'eth', '--amount', '0.000000000000000123', '--metadata', '{"cart":7}']);
    expect(c.code, c.stderr).toBe(0);
    const id = c.stdout.trim();
    expect(id).toMatch(/^pay_/);
    expect(c.stderr).toMatch(/Created: pay 0.000000000000000123 ETH to 0x/);
    const again = await as(['payments', 'create', '--order-id', 'cli-1', '--network', 'eth', '--amount', '0.000000000000000123', '--metadata', '{"cart":7}', '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ payment_id: id, created: false, amount_raw: '123' });
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

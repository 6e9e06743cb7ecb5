import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressWatchClient } from '../src/client/index.js';
import { settingsHint } from '../src/cli/payments/run.js';
import { getAccount, webhookSecretOf } from '../src/store/index.js';
import { cli, cliStarted, scriptedPrompter, tempConfigDir, type CliRunOptions } from './helpers/cli.js';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';
import { startReceiver, signatureValid, type Receiver } from './helpers/receiver.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');
const lines = (s: string) => s.trim().split('\n').filter(Boolean);
const ADDR = '0x52908400098527886E0F7030069857D2E4169EE7';
const SENDER = `0x${'ab'.repeat(20)}`;
const ETH = 10n ** 18n;
const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';

let chain: FakeEvm;
let t: TestService;
let app: Receiver;

/** A fresh merchant with environment credentials, and a runner acting as it. */
async function merchant(plan = 'pro') {
  const m = await t.merchant({ plan });
  const env = { PUBLIC_API_KEY: m.apiKey, PUBLIC_API_SECRET: m.secret, PUBLIC_API_BASE: t.baseUrl, RPCCTL_CONFIG_DIR: tempConfigDir() };
  const as = (args: string[], opts: CliRunOptions = {}) => cli(args, { ...opts, env: { ...env, ...opts.env } });
  return { m, env, as, watch: new AddressWatchClient(m.client) };
}

/** Waits until the merchant's feed holds `n` events (the scanner polls every 100 ms). */
async function feedHas(m: Merchant, n: number): Promise<void> {
  const watch = new AddressWatchClient(m.client);
  const deadline = Date.now() + 15_000;
  while ((await watch.events()).events.length < n) {
    if (Date.now() > deadline) throw new Error(`feed did not reach ${n} events`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  [chain, app] = await Promise.all([startFakeEvmChain(), startReceiver()]);
  t = await startTestService({
    networks: [{ slug: 'eth', name: 'Ethereum', environments: [{ slug: 'mainnet', upstreams: [chain.url] }] }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
    payments: { tick_ms: 50 },
  }, { watch: { pollMs: 100 } });
});
afterAll(async () => {
  await t?.stop();
  await Promise.all([chain?.close(), app?.close()]);
});

describe('watch', () => {
  it('add prints the watch id (idempotent, with a note); status shows the slots', async () => {
    const { as } = await merchant();
    const add = await as(['watch', 'add', '--network', 'eth', ADDR.toLowerCase()]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout.trim()).toMatch(/^w_\S+$/);
    expect(add.stderr).toContain(`Watching ${ADDR} on eth`);
    const again = JSON.parse((await as(['watch', 'add', '--network', 'eth', ADDR, '--json'])).stdout);
    expect(again).toMatchObject({ watch_id: add.stdout.trim(), address: ADDR, network_slug: 'eth', created: false });
    expect(again.ok).toBeUndefined();

    const bad = await as(['watch', 'add', '--network', 'eth', '0x1234']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: address: must be a 20-byte hex address/);

    const tty = await as(['watch', 'status'], { tty: true });
    expect(plain(tty.stdout)).toMatch(/slots\s+1 of \d+ used, \d+ free/);
    expect(plain(tty.stdout)).toMatch(/webhook configured\s+no/);
    expect((await as(['watch', 'status'])).stdout).toContain('webhook enabled\tno\n');
    expect(JSON.parse((await as(['watch', 'status', '--json'])).stdout)).toMatchObject({ slots_used: 1, webhook_configured: false, webhook_enabled: false });
  });

  it('the free plan: the API error, exit 1', async () => {
    const { as } = await merchant('free');
    const r = await as(['watch', 'add', '--network', 'eth', ADDR]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Watched address limit reached');
  });

  it('list pages through every page; filters; table on a TTY, rows piped, array with --json', async () => {
    const { as, watch } = await merchant();
    for (let i = 1; i <= 201; i++) await watch.add('eth', `0x${i.toString(16).padStart(40, '0')}`);
    const piped = await as(['watch', 'list']);
    const rows = lines(piped.stdout).map((l) => l.split('\t'));
    expect(rows).toHaveLength(201); // the client's pages are 200 long
    expect(new Set(rows.map((r) => r[0])).size).toBe(201);
    expect(rows[0]).toEqual([expect.stringMatching(/^w_/), 'eth', `0x${'1'.padStart(40, '0')}`, expect.any(String)]);

    const one = await as(['watch', 'list', '--address', `0x${'c9'.padStart(40, '0')}`, '--json']);
    expect(JSON.parse(one.stdout).map((w: { address: string }) => w.address.toLowerCase())).toEqual([`0x${'c9'.padStart(40, '0')}`]);
    expect(JSON.parse((await as(['watch', 'list', '--network', 'eth', '--json'])).stdout)).toHaveLength(201);
    const tty = await as(['watch', 'ls', '--address', `0x${'c9'.padStart(40, '0')}`], { tty: true });
    expect(plain(tty.stdout)).toMatch(/WATCH ID\s+NETWORK\s+ADDRESS\s+CREATED\n\s*w_\S+\s+eth\s+0x0+C9\s/);
  });

  it('rm asks on a terminal, needs --yes in scripts, and frees the slot', async () => {
    const { as, watch } = await merchant();
    const { watch_id } = await watch.add('eth', ADDR);
    const slots = async () => (await watch.account()).slots_used;

    const script = await as(['watch', 'rm', watch_id]);
    expect(script.code).toBe(2);
    expect(script.stderr).toContain('add --yes to confirm');
    const no = scriptedPrompter([{ match: new RegExp(`Stop watching ${ADDR} on eth \\(${watch_id}\\)`), answer: false }]);
    const cancelled = await as(['watch', 'rm', watch_id], { tty: true, prompter: no });
    expect(cancelled.code).toBe(1);
    expect(cancelled.stderr).toContain('cancelled');
    expect(no.asked).toHaveLength(1);
    expect(await slots()).toBe(1);

    const unknown = await as(['watch', 'rm', 'w_nope'], { tty: true, prompter: scriptedPrompter([]) });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no watch "w_nope"');

    const yes = await as(['watch', 'rm', watch_id], { tty: true, prompter: scriptedPrompter([{ match: /Stop watching/, answer: true }]) });
    expect(yes.code, yes.stderr).toBe(0);
    expect(yes.stderr).toContain(`Stopped watching ${watch_id}`);
    expect(await slots()).toBe(0);

    const second = await watch.add('eth', ADDR);
    const scripted = await as(['watch', 'remove', second.watch_id, '--yes', '--json']);
    expect(JSON.parse(scripted.stdout)).toEqual({ watch_id: second.watch_id });
    expect(await slots()).toBe(0);
    expect((await as(['watch', 'rm', second.watch_id, '--yes'])).code).toBe(1); // already gone: the API's 404
  });
});

describe('webhook settings, test, deliveries', () => {
  it('set needs a URL first; then keeps what is not named; --payment alone clears a network list', async () => {
    const { as } = await merchant();
    const first = await as(['webhook', 'set', '--no-block']);
    expect(first.code).toBe(2);
    expect(first.stderr).toContain('give --url URL');

    const on = JSON.parse((await as(['webhook', 'set', '--url', app.url, '--payment=eth,eth-mainnet', '--no-block', '--json'])).stdout);
    expect(on).toMatchObject({ url: app.url, enabled: true, events: { payment: true, payment_networks: ['eth', 'eth-mainnet'], payout: true, block: false } });

    // No --url, no --enable: both read back; only the named filter changes.
    const off = JSON.parse((await as(['webhook', 'set', '--disable', '--payout=eth', '--json'])).stdout);
    expect(off).toMatchObject({ url: app.url, enabled: false, events: { payment_networks: ['eth', 'eth-mainnet'], payout_networks: ['eth'], block: false } });
    const all = JSON.parse((await as(['webhook', 'set', '--payment', '--json'])).stdout);
    expect(all).toMatchObject({ enabled: false, events: { payment: true, payment_networks: [], payout_networks: ['eth'], block: false } });
    const noPayment = JSON.parse((await as(['webhook', 'set', '--no-payment', '--enable', '--json'])).stdout);
    expect(noPayment).toMatchObject({ enabled: true, events: { payment: false, payout: true, payout_networks: ['eth'] } });

    const piped = await as(['webhook', 'get']);
    expect(piped.stdout).toContain(`url\t${app.url}\n`);
    expect(piped.stdout).toContain('payment\toff\npayout\ton: eth\nblock\toff\n');
    const tty = await as(['webhook', 'get'], { tty: true });
    expect(plain(tty.stdout)).toMatch(/enabled\s+yes/);

    const empty = await as(['webhook', 'set', '--payment=', '--json']);
    expect(empty.code).toBe(2);
    const unknown = await as(['webhook', 'set', '--block=doge']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('events.block_networks[0]: unknown network "doge"');
    expect((await as(['webhook', 'set', '--enable', '--disable'])).code).toBe(2);
  });

  it('test queues a delivery that reaches the receiver; deliveries lists it', async () => {
    const { as } = await merchant();
    expect((await as(['webhook', 'set', '--url', app.url])).code).toBe(0);
    const q = await as(['webhook', 'test', '--type', 'payout', '--network', 'eth']);
    expect(q.code, q.stderr).toBe(0);
    const id = q.stdout.trim();
    expect(id).toMatch(/^test_/);
    await app.waitFor((all) => all.some((r) => r.headers['x-webhook-id'] === id));
    const deadline = Date.now() + 10_000;
    let rows: string[][] = [];
    do {
      rows = lines((await as(['webhook', 'deliveries'])).stdout).map((l) => l.split('\t'));
    } while (rows[0]?.[4] !== 'delivered' && Date.now() < deadline);
    expect(rows[0]!.slice(1, 7)).toEqual([id, 'payout', 'eth', 'delivered', '1', '200']);
    const json = JSON.parse((await as(['webhook', 'deliveries', '--status', 'delivered', '--json'])).stdout);
    expect(json).toEqual([expect.objectContaining({ webhook_id: id, test: true, status: 'delivered' })]);
    expect((await as(['webhook', 'deliveries', '--limit', '0'])).code).toBe(2);
    expect((await as(['webhook', 'test', '--type', 'coin', '--network', 'eth'])).code).toBe(2);

    // Redeliver: the same webhook id again, as attempt 2.
    const again = await as(['webhook', 'redeliver', rows[0]![0]!]);
    expect(again.code, again.stderr).toBe(0);
    await app.waitFor((all) => all.some((r) => r.headers['x-webhook-id'] === id && r.headers['x-webhook-attempt'] === '2'));
    expect((await as(['webhook', 'redeliver', 'x'])).code).toBe(2);
    expect((await as(['webhook', 'redeliver', '999999'])).code).toBe(1);
  });
});

describe('events', () => {
  it('prints the feed oldest first: readable, tab-separated, JSON lines; --type, --limit', async () => {
    const { m, as, watch } = await merchant();
    await watch.add('eth', ADDR);
    const b1 = chain.mine([{ from: SENDER, to: ADDR, wei: 2n * ETH }]);
    const b2 = chain.mine([{ from: ADDR, to: SENDER, wei: 5n }]);
    await feedHas(m, 2); // no block events: those need an enabled webhook

    const piped = lines((await as(['events'])).stdout).map((l) => l.split('\t'));
    expect(piped).toEqual([
      [expect.any(String), expect.any(String), 'payment', 'eth', String(b1.height), ADDR, 'in', String(2n * ETH), '', b1.txs[0]!.hash, b1.hash],
      [expect.any(String), expect.any(String), 'payout', 'eth', String(b2.height), ADDR, 'out', '5', '', b2.txs[0]!.hash, b2.hash],
    ]);
    const ids = piped.map((r) => Number(r[0]));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));

    const json = lines((await as(['events', '--type', 'payment', '--json'])).stdout).map((l) => JSON.parse(l));
    expect(json).toEqual([expect.objectContaining({ type: 'payment', tx_hash: b1.txs[0]!.hash, amount: String(2n * ETH), token: null })]);

    // A terminal line: amounts in units, the raw value too when the line fits, hex cut when it does not.
    const tty = plain((await as(['events', '--type', 'payout'], { tty: true })).stdout);
    expect(tty).toContain(`payout   eth  #${b2.height}  out ${ADDR.slice(0, 6)}…${ADDR.slice(-4)}  0.000000000000000005 ETH  tx ${b2.txs[0]!.hash.slice(0, 6)}…${b2.txs[0]!.hash.slice(-4)}`);
    const wide = plain((await as(['events', '--type', 'payout'], { tty: true, columns: 250 })).stdout);
    expect(wide).toContain(`payout   eth  #${b2.height}  out ${ADDR}  0.000000000000000005 ETH (5 wei)  tx ${b2.txs[0]!.hash}`);
    expect(wide).toMatch(/^\d+  \d\d:\d\d:\d\d  payout/); // local time of today

    const first = await as(['events', '--limit', '1']);
    expect(lines(first.stdout)).toHaveLength(1);
    expect(first.stderr).toContain(`More events: rpcctl events --after ${ids[0]}`);
    const rest = await as(['events', '--after', String(ids[0])]);
    expect(lines(rest.stdout).map((l) => Number(l.split('\t')[0]))).toEqual(ids.slice(1));
    expect((await as(['events', '--after', 'x'])).code).toBe(2);
  });

  it('--follow prints only new events as they are recorded, until interrupted (exit 0)', async () => {
    const { m, env, watch } = await merchant();
    await watch.add('eth', ADDR);
    chain.mine([{ from: SENDER, to: ADDR, wei: 1n }]);
    await feedHas(m, 1);

    const follow = cliStarted(['events', '--follow', '--type', 'payment', '--interval', '0.1'], { env });
    await follow.waitFor(/Waiting for events after \d+/, 'stderr');
    const b = chain.mine([{ from: SENDER, to: ADDR, wei: 7n }]);
    await follow.waitFor(new RegExp(b.txs[0]!.hash));
    const r = await follow.interrupt();
    expect(r.code, r.stderr).toBe(0);
    // Only the new one: the old payment and the block events are not printed.
    expect(lines(r.stdout)).toEqual([expect.stringMatching(new RegExp(`\\tpayment\\teth\\t${b.height}\\t${ADDR}\\tin\\t7\\t`))]);
  });

  it('--follow --after 0 --limit N prints history, then new events, and stops by itself', async () => {
    const { m, env, watch } = await merchant();
    await watch.add('eth', ADDR);
    await watch.account();
    chain.mine([{ from: SENDER, to: ADDR, wei: 1n }]);
    await feedHas(m, 1);
    const follow = cliStarted(['events', '-f', '--after', '0', '--type', 'payment', '--limit', '2', '--interval', '0.1', '--json'], { env });
    await follow.waitFor(/"amount":"1"/);
    const b = chain.mine([{ from: SENDER, to: ADDR, wei: 3n }]);
    const r = await follow.done;
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stdout).map((l) => JSON.parse(l).amount)).toEqual(['1', '3']);
    expect(JSON.parse(lines(r.stdout)[1]!).block_hash).toBe(b.hash);
  });
});

describe('webhook listen', () => {
  it('verifies real deliveries from the worker, prints them, forwards them unchanged; refuses forged ones', async () => {
    const { m, env, as, watch } = await merchant();
    const secret = webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!);
    await watch.add('eth', ADDR);
    const forwardedBefore = app.received.length;
    const listen = cliStarted(['webhook', 'listen', '--forward-to', app.url], { env: { ...env, RPCCTL_WEBHOOK_SECRET: secret } });
    const url = (await listen.waitFor(/Listening on (\S+) \(secret whsec_\S…, from \$RPCCTL_WEBHOOK_SECRET\)/, 'stderr'))[1]!;
    expect(listen.stderr()).not.toContain(secret);
    expect((await as(['webhook', 'set', '--url', url, '--no-block'])).code).toBe(0);

    const b = chain.mine([{ from: SENDER, to: ADDR, wei: 42n }]);
    const tx = b.txs[0]!.hash;
    await listen.waitFor(new RegExp(`\\tpayment\\teth\\t${b.height}\\t${ADDR}\\tin\\t42\\t\\t${tx}\\t`));
    await listen.waitFor(/forwarded evt_\d+ to \S+: 200/, 'stderr');
    const forwarded = app.received.slice(forwardedBefore);
    expect(forwarded).toHaveLength(1);
    // Body and signature headers unchanged: an independent check with the account's secret passes.
    expect(signatureValid(secret, forwarded[0]!)).toBe(true);
    const [feed] = (await watch.events({ type: 'payment' })).events;
    expect(JSON.parse(forwarded[0]!.body)).toEqual(feed);
    expect(forwarded[0]!.headers['x-webhook-id']).toBe(`evt_${feed!.id}`);

    // A forgery (signed with another secret) is refused with a 4xx and reported on stderr.
    const body = JSON.stringify({ ...feed, amount: '1000000' });
    const ts = String(Math.floor(Date.now() / 1000));
    const { createHmac } = await import('node:crypto');
    const forged = await request(url, {
      method: 'POST', body,
      headers: { 'content-type': 'application/json', 'x-timestamp': ts, 'x-webhook-id': 'evt_forged', 'x-signature': createHmac('sha256', 'whsec_wrong').update(`${ts}.${body}`).digest('hex') },
    });
    expect(forged.statusCode).toBe(401);
    await forged.body.dump();
    await listen.waitFor(/rejected a delivery \(evt_forged\): signature mismatch/, 'stderr');

    const r = await listen.interrupt();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Stopped.');
    expect(lines(r.stdout)).toHaveLength(1); // the forgery was not printed
    expect(app.received.slice(forwardedBefore)).toHaveLength(1); // nor forwarded
  });

  it('--json prints each event as one JSON line; the secret can come from stdin', async () => {
    const { m, env, as } = await merchant();
    const secret = webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!);
    const listen = cliStarted(['webhook', 'listen', '--json'], { env, stdin: `${secret}\n` });
    const url = (await listen.waitFor(/Listening on (\S+)/, 'stderr'))[1]!;
    await as(['webhook', 'set', '--url', url]);
    const id = (await as(['webhook', 'test', '--type', 'block', '--network', 'eth'])).stdout.trim();
    await listen.waitFor(/\n/);
    expect(JSON.parse(listen.stdout())).toMatchObject({ type: 'block', network: 'eth', test: true });
    const r = await listen.interrupt();
    expect(r.code).toBe(0);
    // The listener prints an event on receipt; the worker records the answer a moment later.
    const deadline = Date.now() + 10_000;
    let deliveries = (await new AddressWatchClient(m.client).deliveries()).deliveries;
    while (deliveries[0]?.last_status_code !== 200 && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 50));
      deliveries = (await new AddressWatchClient(m.client).deliveries()).deliveries;
    }
    expect(deliveries).toEqual([expect.objectContaining({ webhook_id: id, last_status_code: 200 })]);
  });

  it('on a terminal each event is a readable line with its webhook id and attempt', async () => {
    const { m, env, as } = await merchant();
    const secret = webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!);
    const listen = cliStarted(['webhook', 'listen'], { tty: true, env: { ...env, RPCCTL_WEBHOOK_SECRET: secret } });
    const url = (await listen.waitFor(/Listening on (\S+)/, 'stderr'))[1]!;
    await as(['webhook', 'set', '--url', url]);
    const id = (await as(['webhook', 'test', '--type', 'payment', '--network', 'eth'])).stdout.trim();
    await listen.waitFor(/\n/);
    expect(plain(listen.stdout())).toMatch(new RegExp(`^\\S+  \\d\\d:\\d\\d:\\d\\d  payment  eth  #\\d+  in 0x\\w+…\\w+  [\\d.]+ ETH  tx \\S+  \\[test\\]  ${id} attempt 1\\n$`));
    expect((await listen.interrupt()).code).toBe(0);
  });

  it('payment-order deliveries show their event, order, status and amount (piped, terminal, --json)', async () => {
    const { m, env, as } = await merchant();
    const secret = webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!);
    const forwardedBefore = app.received.length;
    const piped = cliStarted(['webhook', 'listen', '--forward-to', app.url], { env: { ...env, RPCCTL_WEBHOOK_SECRET: secret } });
    const url = (await piped.waitFor(/Listening on (\S+)/, 'stderr'))[1]!;
    await as(['webhook', 'set', '--url', url, '--no-block']);
    expect((await as(['payments', 'settings', '--xpub', XPUB])).code).toBe(0);
    const order = JSON.parse((await as(['payments', 'create', '--order-id', 'shop-42', '--network', 'eth', '--amount', '2', '--json'])).stdout);
    chain.mine([{ from: SENDER, to: order.address, wei: 2n * ETH }]);
    // Real deliveries from the engine and the worker: seen, then aml_check, then paid.
    await piped.waitFor(/\tpaid\t/);
    const rows = lines(piped.stdout()).map((l) => l.split('\t'));
    expect(rows.map((r) => r[4])).toEqual(['seen', 'aml_check', 'paid']);
    for (const r of rows) {
      expect(r[0]).toMatch(new RegExp(`^${order.payment_id}_\\d+$`));
      expect(r.slice(2, 4)).toEqual(['payment_order', 'eth']);
      expect(r.slice(5, 9)).toEqual([order.payment_id, 'shop-42', '2', 'ETH']);
    }
    expect(rows[2]![9]).toBe('2');
    expect(piped.stdout()).not.toContain('undefined');
    await app.waitFor((all) => all.length >= forwardedBefore + 3);
    expect((await piped.interrupt()).code).toBe(0);

    // The same signed bodies, replayed to a listener on a terminal and to one with --json.
    const bodies = app.received.slice(forwardedBefore, forwardedBefore + 3);
    const replay = async (target: string) => {
      for (const b of bodies) {
        const headers = Object.fromEntries(['content-type', 'x-timestamp', 'x-signature', 'x-webhook-id', 'x-webhook-attempt'].map((h) => [h, String(b.headers[h])]));
        const r = await request(target, { method: 'POST', body: b.body, headers });
        expect(r.statusCode).toBe(200);
        await r.body.dump();
      }
    };
    const tty = cliStarted(['webhook', 'listen'], { tty: true, columns: 300, env: { ...env, RPCCTL_WEBHOOK_SECRET: secret } });
    await replay((await tty.waitFor(/Listening on (\S+)/, 'stderr'))[1]!);
    await tty.waitFor(/paid.*\n/);
    const shown = lines(plain(tty.stdout()));
    expect(shown).toHaveLength(3);
    const shape = (event: string) => new RegExp(`^${order.payment_id}_\\d+  \\d\\d:\\d\\d:\\d\\d  order  ${event} +eth  shop-42 ${order.payment_id}  2 ETH  tx 0x[0-9a-f]{64}`);
    expect(shown[0]).toMatch(shape('seen'));
    expect(shown[1]).toMatch(shape('aml_check'));
    expect(shown[2]).toMatch(shape('paid'));
    expect(shown[2]).toMatch(/  aml \w+ \(\d+(\.\d+)?\)  /);
    expect(shown[2]).toMatch(new RegExp(`${order.payment_id}_\\d+ attempt 1$`));
    expect((await tty.interrupt()).code).toBe(0);

    const json = cliStarted(['webhook', 'listen', '--json'], { env: { ...env, RPCCTL_WEBHOOK_SECRET: secret } });
    await replay((await json.waitFor(/Listening on (\S+)/, 'stderr'))[1]!);
    await json.waitFor(/"paid"[^\n]*\n/);
    expect(lines(json.stdout()).map((l) => JSON.parse(l))).toEqual(bodies.map((b) => JSON.parse(b.body)));
    expect((await json.interrupt()).code).toBe(0);

    // The delivery log at 80 columns, with a failing delivery's error text: no line wraps, the
    // ids and statuses stay whole, the times are left out before anything else is cut.
    await as(['webhook', 'set', '--url', 'http://127.0.0.1:1/hooks']);
    const failing = (await as(['webhook', 'test', '--type', 'payment', '--network', 'eth'])).stdout.trim();
    const deadline = Date.now() + 10_000;
    let log: string[][] = [];
    do log = lines((await as(['webhook', 'deliveries'])).stdout).map((l) => l.split('\t'));
    while (!(log[0]?.[1] === failing && log[0][6] !== '') && Date.now() < deadline);
    expect(log).toHaveLength(4);
    expect(log.every((r) => r.length === 9)).toBe(true);
    const narrow = await as(['webhook', 'deliveries'], { tty: true, columns: 80 });
    const table = plain(narrow.stdout).trimEnd().split('\n');
    expect(table.every((l) => l.length <= 80), table.join('\n')).toBe(true);
    expect(table[0]).toMatch(/^DELIVERY +WEBHOOK ID +TYPE +STATUS +ATTEMPTS +LAST$/);
    expect(table).toHaveLength(5);
    expect(table[1]).toContain(failing);
    for (const row of table.slice(2)) expect(row).toMatch(new RegExp(`${order.payment_id}_\\d+ .* delivered +1 +200$`));
    // The note speaks of this width, so it fits it too.
    expect(plain(narrow.stderr).split('\n').every((l) => l.length <= 80)).toBe(true);
    expect(plain(narrow.stderr).replace(/\n(?!$)/g, ' ')).toBe('(left out at this width: NETWORK, NEXT RETRY, CREATED; piped output and --json have all)\n');
    // A wide terminal shows every column.
    const wide = await as(['webhook', 'deliveries'], { tty: true, columns: 200 });
    expect(plain(wide.stdout).split('\n')[0]).toMatch(/NETWORK +STATUS +ATTEMPTS +LAST +NEXT RETRY +CREATED$/);
    expect(plain(wide.stdout)).toContain('payment_order');
    expect(wide.stderr).toBe('');
  });

  it('payments create without a key says the CLI command that sets one, not the API call', async () => {
    const { as } = await merchant();
    for (const tty of [false, true]) {
      const r = await as(['payments', 'create', '--order-id', 'k-1', '--network', 'eth', '--amount', '1'], { tty });
      expect(r.code).toBe(1);
      // (On a terminal a slow call's spinner line comes first, cleared.)
      expect(r.stderr.replace(/^[^\n]*\x1b\[K(?=error)/, '')).toBe('error: address: required, or set an extended public key first (rpcctl payments settings --xpub KEY) to derive one per order\n');
    }
    expect(settingsHint('set one first (PUT /v1/payments/settings with xpubs.utxo) to derive')).toBe('set one first (rpcctl payments settings --xpub-utxo KEY) to derive');
    expect(settingsHint("address: required, or set the merchant's wallet first (PUT /v1/payments/settings with wallets.solana): orders on solana are paid to it"))
      .toBe("address: required, or set the merchant's wallet first (rpcctl payments settings --wallet-solana ADDRESS): orders on solana are paid to it");
    expect(settingsHint('address: required, or the key does not fit (PUT /v1/payments/settings)')).toBe('address: required, or the key does not fit (rpcctl payments settings)');
  });

  it('a delivery of a type it does not know still shows its id, type and network', async () => {
    const secret = 'whsec_test';
    const listen = cliStarted(['webhook', 'listen'], { env: { RPCCTL_WEBHOOK_SECRET: secret } });
    const url = (await listen.waitFor(/Listening on (\S+)/, 'stderr'))[1]!;
    const body = JSON.stringify({ id: 'x_1', type: 'payout_batch', network: 'eth', created_at: '2026-01-01T00:00:00.000Z' });
    const ts = String(Math.floor(Date.now() / 1000));
    const { createHmac } = await import('node:crypto');
    const r = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-timestamp': ts, 'x-signature': createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex') } });
    await r.body.dump();
    await listen.waitFor(/\n/);
    expect(listen.stdout()).toBe('x_1\t2026-01-01T00:00:00.000Z\tpayout_batch\teth\n');
    expect((await listen.interrupt()).code).toBe(0);
  });

  it('no secret, a bad port or forward URL: usage errors', async () => {
    const { env } = await merchant();
    const none = await cli(['webhook', 'listen'], { env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('set RPCCTL_WEBHOOK_SECRET or pipe it in');
    expect((await cli(['webhook', 'listen', '--port', 'x'], { env: { RPCCTL_WEBHOOK_SECRET: 's' } })).code).toBe(2);
    expect((await cli(['webhook', 'listen', '--forward-to', 'ftp://x'], { env: { RPCCTL_WEBHOOK_SECRET: 's' } })).code).toBe(2);
  });
});

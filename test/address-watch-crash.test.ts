import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressWatchClient, ApiClient } from '../src/client/index.js';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { signatureValid, startReceiver, type Receiver } from './helpers/receiver.js';
import { testConfig } from './helpers/service.js';
import { childProcessesOnTestDatabase } from './helpers/shared-stores.js';

const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
let anvil: Anvil;
let dataDir: string;
let configFile: string;
let serve: ResultPromise | undefined;
let dropDatabase = async () => {};
const receivers: Receiver[] = [];

async function startServe(): Promise<{ proc: ResultPromise; api: string }> {
  const proc = execa(process.execPath, [bin, 'serve', '--config', configFile, '--data-dir', dataDir], { reject: false, all: true });
  let out = '';
  const api = await new Promise<string>((resolve, reject) => {
    proc.all!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /api\s+(http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    proc.once('exit', () => reject(new Error(`serve exited early:\n${out}`)));
  });
  return { proc, api };
}

async function admin(...args: string[]): Promise<any> {
  const r = await execa(process.execPath, [bin, 'admin', ...args, '--json', '--data-dir', dataDir, '--config', configFile]);
  return JSON.parse(r.stdout);
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  dropDatabase = await childProcessesOnTestDatabase();
  anvil = await startAnvil();
  dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-crash-'));
  configFile = join(dataDir, 'config.json');
  writeFileSync(configFile, JSON.stringify(testConfig({
    networks: [{ slug: 'anvil', name: 'Anvil', family: 'evm', environments: [{ slug: 'local', upstreams: [anvil.url] }] }],
    webhooks: { allow_private_urls: true, timeout_ms: 1000 },
  })));
}, 60_000);
afterAll(async () => {
  serve?.kill('SIGKILL');
  await Promise.all([anvil?.stop(), ...receivers.map((r) => r.close())]);
  await dropDatabase();
});

describe('at-least-once delivery across kill -9', () => {
  it('deliveries pending (receiver down) and in flight when the service is killed are all delivered after a restart', async () => {
    const first = await startServe();
    serve = first.proc;
    const { user_id } = await admin('accounts', 'create', '--plan', 'pro');
    const key = await admin('keys', 'create', '--account', String(user_id));
    const { secret } = await admin('webhook-secret', '--account', String(user_id));
    let client = new ApiClient({ baseUrl: first.api, apiKey: key.api_key, secret: key.secret });
    const port = await freePort();
    const A = anvil.accounts[1]!;
    const watch = new AddressWatchClient(client);
    await watch.setWebhook({ url: `http://127.0.0.1:${port}/hooks`, enabled: true, events: { block: false } });
    expect((await watch.add('anvil', A)).created).toBe(true);
    const pay = (i: number) => anvil.wallet.sendTransaction({ account: anvil.accounts[0]!, to: A as Address, value: BigInt(1000 + i), chain: null });

    // 1. The receiver is down: three events whose first attempt fails.
    for (let i = 0; i < 3; i++) await pay(i);
    await until(async () => {
      const { deliveries } = await watch.deliveries();
      return deliveries.length === 3 && deliveries.every((d) => d.attempt_count >= 1 && d.status === 'pending');
    });

    // 2. The receiver takes requests but never answers: two deliveries in flight...
    const hanging = await startReceiver(port);
    hanging.respond = () => new Promise<number>(() => {});
    for (let i = 3; i < 5; i++) await pay(i);
    await hanging.waitFor((all) => all.filter((r) => JSON.parse(r.body).amount >= '1003').length >= 2);
    // ...when the service dies without any chance to clean up.
    first.proc.kill('SIGKILL');
    await first.proc;
    await hanging.close();
    await client.close();

    const rx = await startReceiver(port);
    receivers.push(rx);
    const second = await startServe();
    serve = second.proc;
    client = new ApiClient({ baseUrl: second.api, apiKey: key.api_key, secret: key.secret });
    try {
      await rx.waitFor((all) => new Set(all.map((r) => r.headers['x-webhook-id'])).size === 5, 40_000);
      const { events } = await new AddressWatchClient(client).events();
      expect(events.map((e) => e.amount)).toEqual(['1000', '1001', '1002', '1003', '1004']);
      expect([...new Set(rx.received.map((r) => r.headers['x-webhook-id']))].sort()).toEqual(events.map((e) => `evt_${e.id}`).sort());
      for (const r of rx.received) expect(signatureValid(secret, r)).toBe(true);
      // Retried deliveries say so; the ones killed in flight were sent again (at least once).
      const attempts = rx.received.map((r) => [JSON.parse(r.body).amount, Number(r.headers['x-webhook-attempt'])]);
      for (const [amount, n] of attempts) expect(n, String(amount)).toBeGreaterThanOrEqual(2);
      // Billed once per delivered webhook.
      await until(async () => (await client.request<any>('GET', '/v1/account/usage', { query: { days: 7 } })).usage.total_credits === 150);
    } finally {
      await client.close();
    }
  }, 90_000);
});

async function until(fn: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

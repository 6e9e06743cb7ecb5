import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { parseEther, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../src/client/index.js';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { startFakeChainalysis, type FakeAml } from './helpers/fake-aml.js';
import { signatureValid, startReceiver, type Receiver } from './helpers/receiver.js';
import { testConfig } from './helpers/service.js';

const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
let anvil: Anvil;
let aml: FakeAml;
let rx: Receiver;
let dataDir: string;
let configFile: string;
let serve: ResultPromise | undefined;

async function startServe(): Promise<{ proc: ResultPromise; api: string }> {
  const proc = execa(process.execPath, [bin, 'serve', '--config', configFile, '--data-dir', dataDir], {
    reject: false, all: true, env: { RPCCTL_TEST_AML_KEY: 'ca-key' },
  });
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

beforeAll(async () => {
  [anvil, aml, rx] = await Promise.all([startAnvil(), startFakeChainalysis('ca-key'), startReceiver()]);
  dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-paycrash-'));
  configFile = join(dataDir, 'config.json');
  writeFileSync(configFile, JSON.stringify(testConfig({
    networks: [{ slug: 'anvil', name: 'Anvil', family: 'evm', environments: [{ slug: 'local', upstreams: [anvil.url] }] }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
    payments: { aml: { provider: 'http', http: { preset: 'chainalysis', base_url: aml.url, api_key_env: 'RPCCTL_TEST_AML_KEY', timeout_ms: 1500 } }, tick_ms: 100 },
  })));
}, 60_000);
afterAll(async () => {
  serve?.kill('SIGKILL');
  await Promise.all([anvil?.stop(), aml?.close(), rx?.close()]);
});

describe('kill -9 between aml_check and paid', () => {
  it('the order resumes screening after a restart: seen, aml_check, paid, each transition once', async () => {
    const first = await startServe();
    serve = first.proc;
    const { user_id } = await admin('accounts', 'create', '--plan', 'pro');
    const key = await admin('keys', 'create', '--account', String(user_id));
    const { secret } = await admin('webhook-secret', '--account', String(user_id));
    let client = new ApiClient({ baseUrl: first.api, apiKey: key.api_key, secret: key.secret });
    const address = '0x4444444444444444444444444444444444444444';
    const { payment } = await client.request<any>('POST', '/v1/payments', { body: { order_id: 'crash-1', network_slug: 'anvil', amount: '0.75', address, webhook_url: rx.url } });
    // The provider is slow: the service dies while it waits for the screening answer.
    aml.delayMs = 60_000;
    const tx = await anvil.wallet.sendTransaction({ account: anvil.accounts[1]!, to: address as Address, value: parseEther('0.75'), chain: null });
    await rx.waitFor((all) => all.some((r) => JSON.parse(r.body).event === 'aml_check'), 20_000);
    await new Promise((r) => setTimeout(r, 300)); // the screening request is out
    expect(aml.requests.length).toBeGreaterThan(0);
    first.proc.kill('SIGKILL');
    await first.proc;
    await client.close();

    aml.delayMs = 0;
    const second = await startServe();
    serve = second.proc;
    client = new ApiClient({ baseUrl: second.api, apiKey: key.api_key, secret: key.secret });
    try {
      await rx.waitFor((all) => all.some((r) => JSON.parse(r.body).event === 'paid'), 30_000);
      await new Promise((r) => setTimeout(r, 500));
      const ids = [...new Set(rx.received.map((r) => r.headers['x-webhook-id']))];
      expect(ids).toEqual([`${payment.payment_id}_1`, `${payment.payment_id}_2`, `${payment.payment_id}_3`]);
      const byId = new Map(rx.received.map((r) => [r.headers['x-webhook-id'], JSON.parse(r.body)]));
      expect(ids.map((id) => [byId.get(id).event, byId.get(id).tx_hash])).toEqual([['seen', tx], ['aml_check', tx], ['paid', tx]]);
      expect(byId.get(ids[2])).toMatchObject({ lifecycle: 'pending>seen>aml_check>paid', aml: { provider: 'chainalysis', risk_level: 'low' } });
      for (const r of rx.received) expect(signatureValid(secret, r)).toBe(true);
      const final = (await client.request<any>('GET', `/v1/payments/${payment.payment_id}`)).payment;
      expect(final).toMatchObject({ status: 'paid', lifecycle: 'pending>seen>aml_check>paid', tx_hashes: [tx] });
    } finally {
      await client.close();
    }
  }, 90_000);
});

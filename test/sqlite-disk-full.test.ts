import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { createAccount, createApiKey, Store, usageReport } from '../src/store/index.js';
import { FakeEvm } from './helpers/fake-evm.js';
import { signedCall, testConfig } from './helpers/service.js';
import { describeUnless } from './helpers/skips.js';

/**
 * A real full disk under a running `rpcctl serve` on SQLite: the data dir is a small tmpfs of
 * its own, filled to the last byte by a file. A read-only remount would be the other real
 * fault, but Linux refuses it while SQLite holds the files open for writing ("busy"), and
 * PRAGMA tricks would only fake it inside the process: the full disk is what an operator meets.
 * Mounting needs root (CAP_SYS_ADMIN); elsewhere the test says so and skips.
 */
function tmpfsUnavailable(): string | undefined {
  const probe = mkdtempSync(join(tmpdir(), 'rpcctl-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'cannot mount a tmpfs here (needs root / CAP_SYS_ADMIN): the full-disk test needs a disk of its own to fill';
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

const why = tmpfsUnavailable();

const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const MASTER_KEY = 'b2'.repeat(32);

describeUnless(why, 'SQLite: the data dir\'s disk fills up under a running service', () => {
  let dir: string;
  let dataDir: string;
  let eth: FakeEvm;
  let proc: ResultPromise;
  let out = '';
  let api = '';
  let gateway = '';
  let store: Store;
  const filler = () => join(dataDir, 'filler');

  beforeAll(async () => {
    eth = await new FakeEvm().start();
    dir = mkdtempSync(join(tmpdir(), 'rpcctl-disk-'));
    dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m', 'tmpfs', dataDir]);
    const configFile = join(dir, 'config.json');
    const config = testConfig({
      networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [eth.url] }], credits: { default: 20, methods: { eth_blockNumber: 10 } } }],
      plans: [{ id: 1, slug: 'p', name: 'P', included_credits: 1_000_000, rps_limit: 1000, endpoints_limit: 50 }],
      gateway: { probe_interval_ms: 300 },
    });
    writeFileSync(configFile, JSON.stringify(config));
    proc = execa(process.execPath, [bin, 'serve', '--config', configFile, '--data-dir', dataDir], {
      reject: false, all: true, env: { RPCCTL_MASTER_KEY: MASTER_KEY, RPCCTL_DATABASE_URL: '', RPCCTL_REDIS_URL: '' },
    });
    await new Promise<void>((resolve, reject) => {
      proc.all!.on('data', (d: Buffer) => {
        out += d.toString();
        api = /api\s+(http:\/\/\S+)/.exec(out)?.[1] ?? '';
        gateway = /gateway\s+(http:\/\/\S+)/.exec(out)?.[1] ?? '';
        if (api && gateway) resolve();
      });
      proc.once('exit', () => reject(new Error(`serve exited early:\n${out}`)));
    });
    store = await Store.open({ dataDir, config: parseConfig(config), syncCatalog: 'if-empty', env: { RPCCTL_MASTER_KEY: MASTER_KEY } });
  }, 60_000);

  afterAll(async () => {
    proc?.kill('SIGKILL');
    await proc?.catch(() => {});
    await store?.close();
    await eth?.stop();
    if (dataDir) execFileSync('umount', ['-l', dataDir], { stdio: 'ignore' });
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  const alive = () => proc.exitCode === null;
  const rpc = (uuid: string) => request(`${gateway}/${uuid}`, { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}' })
    .then(async (r) => { await r.body.dump(); return r.statusCode; });
  async function until(fn: () => Promise<boolean> | boolean, what: string, ms = 20_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await fn())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Fills the disk to its last byte; the file is removed to "free space". */
  function fillDisk(): void {
    const fd = openSync(filler(), 'w');
    const chunk = Buffer.alloc(1 << 20);
    try {
      for (;;) writeSync(fd, chunk);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      // The last partial megabyte too.
      try { for (;;) writeSync(fd, chunk, 0, 4096); } catch { /* full */ }
    } finally {
      closeSync(fd);
    }
  }

  it('the process lives, writes answer 503 with Retry-After, the gateway serves and counts; usage is written once there is room again', async () => {
    const account = await createAccount(store, { planId: 1 });
    const key = await createApiKey(store, { accountId: account.id });
    const call = (method: string, path: string, body = '') => signedCall(api, key.api_key, key.secret, method, path, body);
    const e = (await call('POST', '/v1/endpoints', '{"name":"d","network_environment_id":1}')).body.endpoint;
    await until(async () => await rpc(e.uuid) === 200, 'the gateway to know the endpoint');
    let served = 1;
    const usage = async () => (await usageReport(store, { kind: 'endpoint', accountId: account.id, endpointId: e.id }, 1)).total_requests;
    await until(async () => await usage() === served, 'the first call to be written');

    fillDisk();
    // The WAL may still have room for a few writes: calls go on until a flush meets the full disk.
    await until(async () => {
      expect(await rpc(e.uuid)).toBe(200);
      served++;
      return /usage flush failed/.test(out);
    }, 'a usage flush to fail on the full disk');
    // A write through the API: 503 with Retry-After, never a 500 (retried: a write may still fit in the WAL).
    await until(async () => {
      const r = await call('POST', '/v1/endpoints', '{"name":"full","network_environment_id":1}');
      expect([200, 503], out.slice(-3000)).toContain(r.status);
      if (r.status === 503) {
        expect(r.headers['retry-after']).toBe('1');
        expect(r.body).toEqual({ ok: false, error: 'Service unavailable' });
      }
      return r.status === 503;
    }, 'a write to answer 503');
    // A few seconds full: probes, flushes and the rest fail and retry; the gateway keeps counting.
    const fullUntil = Date.now() + 4000;
    while (Date.now() < fullUntil) {
      expect(await rpc(e.uuid)).toBe(200);
      served++;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(alive()).toBe(true);
    expect(await usage()).toBeLessThan(served);

    unlinkSync(filler());
    await until(async () => await usage() === served, 'the usage counted while the disk was full to be written');
    await new Promise((r) => setTimeout(r, 1000));
    expect(await usage()).toBe(served);
    expect(out).toMatch(/usage flush works again/);
    await until(async () => (await call('POST', '/v1/endpoints', '{"name":"room","network_environment_id":1}')).status === 200, 'writes to work again');
    expect(alive()).toBe(true);
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../src/client/index.js';
import { testConfig } from './helpers/service.js';
import { childProcessesOnTestDatabase } from './helpers/shared-stores.js';

const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const rpcctl = (args: string[], opts: { env?: Record<string, string> } = {}) =>
  execa(process.execPath, [bin, ...args], { reject: false, env: { NO_COLOR: '1', ...opts.env } });
let dropDatabase = async () => {};

let dataDir: string;
let configFile: string;
let serve: ResultPromise;
let output = '';
let apiUrl: string;

beforeAll(async () => {
  dropDatabase = await childProcessesOnTestDatabase();
  dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-e2e-'));
  configFile = join(dataDir, 'rpcctl.json');
  writeFileSync(configFile, JSON.stringify(testConfig()));
  serve = execa(process.execPath, [bin, 'serve', '--config', configFile, '--data-dir', dataDir], { reject: false, all: true });
  apiUrl = await new Promise<string>((resolve, reject) => {
    serve.all!.on('data', (d: Buffer) => {
      output += d.toString();
      const m = /api\s+(http:\/\/\S+)/.exec(output);
      if (m) resolve(m[1]!);
    });
    serve.once('exit', () => reject(new Error(`serve exited early:\n${output}`)));
  });
});
afterAll(async () => {
  serve.kill('SIGKILL');
  await serve.catch(() => {});
  await dropDatabase();
});

describe('rpcctl serve + rpcctl admin, as separate processes', () => {
  it('tells a newcomer how to get a key', () => {
    expect(output).toContain('No accounts yet');
    expect(output).toContain('rpcctl admin keys create --account 1');
  });

  it('admin creates an account and a key while serve runs; the key works at once', async () => {
    const account = await rpcctl(['admin', 'accounts', 'create', '--plan', 'basic', '--json', '--data-dir', dataDir]);
    expect(account.exitCode).toBe(0);
    const { user_id } = JSON.parse(account.stdout) as { user_id: number };
    expect(user_id).toBeGreaterThan(0);

    const keyRun = await rpcctl(['admin', 'keys', 'create', '--account', String(user_id), '--json', '--data-dir', dataDir]);
    expect(keyRun.exitCode).toBe(0);
    const key = JSON.parse(keyRun.stdout) as { api_key: string; secret: string };
    expect(key.api_key).toMatch(/^[0-9a-f-]{36}$/);
    expect(key.secret.length).toBeGreaterThan(30);

    const client = new ApiClient({ baseUrl: apiUrl, apiKey: key.api_key, secret: key.secret });
    const me = await client.account();
    expect(me).toMatchObject({ ok: true, user_id, plan: { slug: 'basic' } });
    const created = await client.createEndpoint({ name: 'e2e', network_id: 1, env_slug: 'mainnet' });
    expect(created.endpoint.status).toBe('active');
    await client.close();

    // The secret is never shown again.
    const list = await rpcctl(['admin', 'keys', 'list', '--json', '--data-dir', dataDir]);
    expect(list.stdout).toContain(key.api_key.slice(0, 8));
    expect(list.stdout).not.toContain(key.secret);

    const wh = await rpcctl(['admin', 'webhook-secret', '--account', String(user_id), '--json', '--data-dir', dataDir]);
    expect(JSON.parse(wh.stdout).secret).toMatch(/^whsec_/);
  });

  it('admin errors go to stderr with exit codes 1 and 2', async () => {
    const unknownPlan = await rpcctl(['admin', 'accounts', 'create', '--plan', 'gold', '--data-dir', dataDir]);
    expect(unknownPlan.exitCode).toBe(2);
    expect(unknownPlan.stderr).toContain('unknown plan "gold"');
    const missing = await rpcctl(['admin', 'keys', 'create', '--account', '9999', '--data-dir', dataDir]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('account 9999 not found');
    const badIp = await rpcctl(['admin', 'keys', 'create', '--account', '1', '--allowed-ip', 'nope', '--data-dir', dataDir]);
    expect(badIp.exitCode).toBe(2);
  });

  it('a bad config is a startup error naming the key', async () => {
    const bad = join(dataDir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ api: { port: 0, colour: 'red' } }));
    const r = await rpcctl(['serve', '--config', bad, '--data-dir', mkdtempSync(join(tmpdir(), 'rpcctl-e2e-'))]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('unknown key api.colour');
  });

  it('shuts down cleanly on SIGTERM', async () => {
    serve.kill('SIGTERM');
    const result = await serve;
    expect(result.exitCode).toBe(0);
    expect(output + String(result.all ?? '')).toContain('stopped');
  });
});

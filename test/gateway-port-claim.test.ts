import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../src/client/index.js';
import { testConfig } from './helpers/service.js';
import { childProcessesOnTestDatabase } from './helpers/shared-stores.js';

// Issue 21: a second `rpcctl serve` on a running one's gateway port started "ready" and, its
// workers joining the port through SO_REUSEPORT, answered half the first one's calls
// `endpoint not found`. Two real processes, as an operator would start them.
const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;

/** On PostgreSQL every process shares one store, sealed with one master key. */
const MASTER_KEY = randomBytes(32).toString('hex');

function childEnv(): Record<string, string> {
  return { NO_COLOR: '1', HOME: mkdtempSync(join(tmpdir(), 'rpcctl-home-')), RPCCTL_MASTER_KEY: MASTER_KEY };
}

function newDataDir(): { dataDir: string; configFile: string } {
  const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-port-'));
  const configFile = join(dataDir, 'rpcctl.json');
  writeFileSync(configFile, JSON.stringify(testConfig()));
  return { dataDir, configFile };
}

interface Started { proc: ResultPromise; apiUrl: string; gatewayUrl: string }

/** Starts `rpcctl serve` and resolves once it printed its URLs. */
function serve(args: string[]): Promise<Started> {
  const proc = execa(process.execPath, [bin, 'serve', ...args], { reject: false, all: true, env: childEnv() });
  let output = '';
  return new Promise<Started>((resolve, reject) => {
    proc.all!.on('data', (d: Buffer) => {
      output += d.toString();
      const api = /api\s+(http:\/\/\S+)/.exec(output);
      const gw = /gateway\s+(http:\/\/\S+)/.exec(output);
      if (api && gw) resolve({ proc, apiUrl: api[1]!, gatewayUrl: gw[1]! });
    });
    void proc.then(() => reject(new Error(`serve exited early:\n${output}`)));
  });
}

/** One call on a connection of its own, so the kernel places each one anew among the listeners. */
function callOnNewConnection(url: string): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', connection: 'close' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

let dropDatabase = async () => {};
let first: Started;
let firstDir: string;

beforeAll(async () => {
  dropDatabase = await childProcessesOnTestDatabase();
  const { dataDir, configFile } = newDataDir();
  firstDir = dataDir;
  first = await serve(['--config', configFile, '--data-dir', dataDir]);
}, 60_000);

afterAll(async () => {
  first?.proc.kill('SIGKILL');
  await first?.proc.catch(() => {});
  await dropDatabase();
});

describe('a second rpcctl serve on a running gateway port', () => {
  it('fails at start with the one-line "port in use" message; every call stays with the first service', async () => {
    const port = new URL(first.gatewayUrl).port;
    // An endpoint on the first service, to call through its gateway.
    const env = childEnv();
    const account = await execa(process.execPath, [bin, 'admin', 'accounts', 'create', '--plan', 'basic', '--json', '--data-dir', firstDir], { env });
    const { user_id } = JSON.parse(account.stdout) as { user_id: number };
    const keyRun = await execa(process.execPath, [bin, 'admin', 'keys', 'create', '--account', String(user_id), '--json', '--data-dir', firstDir], { env });
    const key = JSON.parse(keyRun.stdout) as { api_key: string; secret: string };
    const client = new ApiClient({ baseUrl: first.apiUrl, apiKey: key.api_key, secret: key.secret });
    const { endpoint } = await client.createEndpoint({ name: 'port', network_id: 1, env_slug: 'mainnet' });
    await client.close();

    const { dataDir, configFile } = newDataDir();
    const second = await execa(process.execPath, [bin, 'serve', '--config', configFile, '--data-dir', dataDir, '--gateway-port', port], {
      reject: false, env: childEnv(), timeout: 60_000,
    });
    expect(second.exitCode).not.toBe(0);
    expect(second.stdout).not.toContain('ready');
    const lines = second.stderr.trim().split('\n').filter((l) => /in use/.test(l));
    expect(lines).toEqual([expect.stringContaining(`port ${port} (gateway) on 127.0.0.1 is already in use: stop what holds it, or choose another with --gateway-port N`)]);

    // Every call on the first's endpoint is its own: never `endpoint not found` from a stranger.
    const url = `${first.gatewayUrl}/${endpoint.uuid}`;
    const answers = [];
    for (let i = 0; i < 24; i++) answers.push(await callOnNewConnection(url));
    for (const a of answers) {
      expect(a.status).not.toBe(404);
      expect(a.body).not.toContain('endpoint not found');
    }
  }, 120_000);

  it('a second service on a port of its own (0: a free one) starts beside it', async () => {
    const { dataDir, configFile } = newDataDir();
    const other = await serve(['--config', configFile, '--data-dir', dataDir]);
    try {
      expect(new URL(other.gatewayUrl).port).not.toBe(new URL(first.gatewayUrl).port);
    } finally {
      other.proc.kill('SIGKILL');
      await other.proc.catch(() => {});
    }
  }, 60_000);
});

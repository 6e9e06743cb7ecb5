import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHmac } from 'node:crypto';
import { execa } from 'execa';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const trace = new URL('./helpers/trace-imports.mjs', import.meta.url).pathname;
const rpcctl = (args: string[], opts: { env?: Record<string, string>; input?: string } = {}) =>
  execa(process.execPath, [bin, ...args], { reject: false, input: opts.input ?? '', env: { NO_COLOR: '', ...opts.env }, extendEnv: true });

let t: TestService;
let m: Merchant;
let env: Record<string, string>;

beforeAll(async () => {
  t = await startTestService();
  m = await t.merchant({ plan: 'basic' });
  env = { RPCCTL_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'rpcctl-e2e-cfg-')), PUBLIC_API_KEY: '', PUBLIC_API_SECRET: '', PUBLIC_API_BASE: '' };
});
afterAll(() => t.stop());

describe('the built rpcctl binary', () => {
  it('--version and --help load commander and the command definitions, nothing else', async () => {
    for (const args of [['--version'], ['--help'], ['endpoints', '--help'], ['webhook', 'listen', '--help']]) {
      const file = join(mkdtempSync(join(tmpdir(), 'rpcctl-trace-')), 'loaded.txt');
      const r = await execa(process.execPath, ['--import', trace, bin, ...args], { env: { RPCCTL_TRACE_IMPORTS: file } });
      expect(r.exitCode).toBe(0);
      const loaded = readFileSync(file, 'utf8').split('\n').filter((u) => u.includes('/node_modules/') || u.includes('/dist/'));
      const packages = new Set(loaded.filter((u) => u.includes('/node_modules/')).map((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u)![1]));
      expect([...packages], args.join(' ')).toEqual(['commander']);
      expect(loaded.filter((u) => /\/dist\/cli\/[^/]+\/(?!command\.js$)[^/]+\.js$|\/dist\/(client|store|api|serve|config)\//.test(u)), args.join(' ')).toEqual([]);
    }
    expect((await rpcctl(['--version'])).stdout).toBe('0.1.0');
  });

  it('a command loads only its own group of definitions; an API command neither fetch, Web Crypto nor fs/promises', async () => {
    const traced = async (args: string[], extraEnv: Record<string, string> = {}) => {
      const file = join(mkdtempSync(join(tmpdir(), 'rpcctl-trace-')), 'loaded.txt');
      const r = await execa(process.execPath, ['--import', trace, bin, ...args], { reject: false, input: '', env: { ...env, ...extraEnv, RPCCTL_TRACE_IMPORTS: file } });
      expect(r.exitCode, r.stderr).toBe(0);
      return readFileSync(file, 'utf8').split('\n');
    };
    const definitions = (loaded: string[]) => loaded.map((u) => /\/dist\/cli\/([^/]+)\/command\.js$/.exec(u)?.[1]).filter((f) => f !== undefined);
    expect(definitions(await traced(['profile', 'list'])).filter((f) => /^(admin|endpoints|watch|webhook|payments|serve|api|rpc|init|auth|account|completion)$/.test(f!))).toEqual([]);

    const account = await traced(['--timeout', '10', 'account'], { PUBLIC_API_KEY: m.apiKey, PUBLIC_API_SECRET: m.secret, PUBLIC_API_BASE: t.baseUrl });
    expect(definitions(account).filter((f) => /^(admin|endpoints|profile|serve)$/.test(f!))).toEqual([]);
    const internal = account.filter((l) => l.startsWith('internal:'));
    expect(internal).toContain('internal:http'); // the trace sees Node's own modules
    // An ESM import of node:http, node:crypto or node:fs would load these through the facade's getters.
    expect(internal.filter((l) => /undici|webcrypto|http2|^internal:internal\/fs\/promises$/.test(l))).toEqual([]);
  });

  it('profile add from stdin, then commands with that profile; piped output is plain tab-separated text', async () => {
    const add = await rpcctl(['profile', 'add', 'e2e', '--base-url', t.baseUrl, '--api-key', m.apiKey], { env, input: `${m.secret}\n` });
    expect(add.exitCode, add.stderr).toBe(0);
    expect(statSync(join(env.RPCCTL_CONFIG_DIR!, 'config.json')).mode & 0o777).toBe(0o600);

    const create = await rpcctl(['endpoints', 'create', '--name', 'e2e', '--network', 'eth', '--env', 'mainnet'], { env });
    expect(create.exitCode, create.stderr).toBe(0);
    const list = await rpcctl(['endpoints', 'list'], { env });
    expect(list.stdout).toMatch(/^\d+\te2e\teth-mainnet\tactive\tany\thttp:\/\/rpc-eth-mainnet\.\S+$/);
    expect(list.stdout).not.toContain('\x1b[');

    const account = JSON.parse((await rpcctl(['account', '--json'], { env })).stdout);
    expect(account).toMatchObject({ user_id: m.userId, plan: { slug: 'basic' } });
  });

  it('exit codes: 2 for usage errors (with a suggestion), 4 for a bad key, 1 for API errors', async () => {
    const typo = await rpcctl(['endpoint', 'list'], { env });
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toContain("unknown command 'endpoint'");
    expect(typo.stderr).toContain('(Did you mean endpoints?)');

    const auth = await rpcctl(['account'], { env: { ...env, PUBLIC_API_KEY: m.apiKey, PUBLIC_API_SECRET: 'sk_nope', PUBLIC_API_BASE: t.baseUrl } });
    expect(auth.exitCode).toBe(4);
    expect(auth.stderr).toBe('error: Invalid signature.');

    const missing = await rpcctl(['endpoints', 'get', '424242'], { env });
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('endpoint 424242 not found');
  });

  it('api prints raw JSON and takes its exit code from the status', async () => {
    const ok = await rpcctl(['api', 'GET', '/v1/endpoints'], { env });
    expect(ok.exitCode).toBe(0);
    expect(JSON.parse(ok.stdout).endpoints[0].name).toBe('e2e');
    const notFound = await rpcctl(['api', 'GET', '/v1/missing'], { env });
    expect(notFound.exitCode).toBe(1);
    expect(JSON.parse(notFound.stdout).error).toBe('Not found');
  });

  it('webhook listen: a real process that prints a signed delivery, refuses a forged one, and exits 0 on SIGINT', async () => {
    const secret = 'whsec_e2e_listen_secret';
    const child = execa(process.execPath, [bin, 'webhook', 'listen', '--port', '0'], { reject: false, env: { ...env, RPCCTL_WEBHOOK_SECRET: secret }, extendEnv: true });
    let stderr = '';
    let stdout = '';
    child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.stdout!.on('data', (d: Buffer) => { stdout += d.toString(); });
    const until = async (ok: () => boolean, what: string) => {
      const deadline = Date.now() + 15_000;
      while (!ok()) {
        if (Date.now() > deadline) throw new Error(`${what} not seen; stdout: ${stdout}\nstderr: ${stderr}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    await until(() => /Listening on (\S+)/.test(stderr), 'the URL');
    const url = /Listening on (\S+)/.exec(stderr)![1]!;
    const post = async (key: string) => {
      const ts = String(Math.floor(Date.now() / 1000));
      const body = JSON.stringify({ id: '7', type: 'block', network: 'eth', block_height: 12, block_hash: '0xab', tx_count: 0, transactions: [], created_at: new Date().toISOString() });
      const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-timestamp': ts, 'x-webhook-id': 'evt_7', 'x-signature': createHmac('sha256', key).update(`${ts}.${body}`).digest('hex') } });
      await res.body.dump();
      return res.statusCode;
    };
    expect(await post(secret)).toBe(200);
    expect(await post('whsec_forged')).toBe(401);
    await until(() => stdout.includes('\n') && stderr.includes('signature mismatch'), 'the event and the rejection');
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode).toBe(0);
    expect(stdout).toMatch(/^7\t\S+\tblock\teth\t12\t\t\t\t\t\t0xab\n$/); // one event, the forgery not printed
    expect(stderr).toContain('rejected a delivery (evt_7): signature mismatch');
    expect(stderr).toContain('Stopped.');
    expect(stderr).not.toContain(secret);
  });

  it('completion prints a script for each shell', async () => {
    for (const shell of ['bash', 'zsh', 'fish']) {
      const r = await rpcctl(['completion', shell]);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toContain('endpoints');
    }
  });
});

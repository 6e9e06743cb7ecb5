import { readFileSync, statSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, scriptedPrompter, tempConfigDir, type CliRunOptions } from './helpers/cli.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

let t: TestService;
let a: Merchant;
let b: Merchant;
let dir: string;
const DEAD = 'http://127.0.0.1:9'; // discard port: nothing listens

const run = (args: string[], opts: CliRunOptions = {}) => cli(args, { ...opts, env: { RPCCTL_CONFIG_DIR: dir, ...opts.env } });
const whoami = async (args: string[] = [], opts: CliRunOptions = {}) => {
  const r = await run(['account', '--json', ...args], opts);
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout).user_id as number;
};

beforeAll(async () => {
  t = await startTestService();
  [a, b] = [await t.merchant(), await t.merchant()];
  dir = tempConfigDir();
});
afterAll(() => t.stop());

describe('profile add / list / use / remove', () => {
  it('add reads the secret from stdin, verifies it, and stores it in a 0600 file', async () => {
    const r = await run(['profile', 'add', 'default', '--base-url', t.baseUrl, '--api-key', a.apiKey], { stdin: `${a.secret}\n` });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`Verified: account ${a.userId}`);
    const file = join(dir, 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8')).profiles.default).toEqual({ base_url: t.baseUrl, api_key: a.apiKey, secret: a.secret });
    expect(r.stdout + r.stderr).not.toContain(a.secret);
  });

  it('a file loosened by hand is tightened back to 0600 on the next write', async () => {
    const file = join(dir, 'config.json');
    chmodSync(file, 0o644);
    const r = await run(['profile', 'add', 'other', '--base-url', t.baseUrl, '--api-key', b.apiKey], { stdin: b.secret });
    expect(r.code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('list shows a prefix of each secret, never the secret', async () => {
    const piped = await run(['profile', 'list']);
    expect(piped.stdout).toContain(`*\tdefault\t${t.baseUrl}\t${a.apiKey}\t${a.secret.slice(0, 7)}…\n`);
    expect(piped.stdout).toContain(`\tother\t${t.baseUrl}\t${b.apiKey}\t`);
    const tty = await run(['profile', 'ls'], { tty: true });
    const json = await run(['profile', 'list', '--json']);
    for (const out of [piped.stdout, tty.stdout, json.stdout]) {
      expect(out).not.toContain(a.secret);
      expect(out).not.toContain(b.secret);
    }
    expect(JSON.parse(json.stdout)).toEqual([
      { name: 'default', base_url: t.baseUrl, api_key: a.apiKey, secret: `${a.secret.slice(0, 7)}…`, selected: true },
      { name: 'other', base_url: t.baseUrl, api_key: b.apiKey, secret: `${b.secret.slice(0, 7)}…`, selected: false },
    ]);
  });

  it('a wrong secret is refused (exit 4, the API error) and not saved', async () => {
    const r = await run(['profile', 'add', 'wrong', '--base-url', t.baseUrl, '--api-key', a.apiKey], { stdin: 'sk_not-the-secret' });
    expect(r.code).toBe(4);
    expect(r.stderr).toBe('error: Invalid signature.\n');
    expect((await run(['profile', 'list', '--json'])).stdout).not.toContain('"wrong"');
  });

  it('the secret is never a flag, and an empty stdin is a usage error', async () => {
    const flag = await run(['profile', 'add', 'x', '--api-key', a.apiKey, '--secret', a.secret]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("unknown option '--secret'");
    const empty = await run(['profile', 'add', 'x', '--api-key', a.apiKey], { stdin: '' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('no secret on stdin');
  });

  it('on a terminal, add asks for the secret (masked prompt) instead of reading stdin', async () => {
    const d = tempConfigDir();
    const prompter = scriptedPrompter([{ match: /API secret/, answer: a.secret }]);
    const r = await cli(['profile', 'add', 'tty', '--base-url', t.baseUrl, '--api-key', a.apiKey], { tty: true, prompter, env: { RPCCTL_CONFIG_DIR: d } });
    expect(r.code).toBe(0);
    expect(prompter.asked).toEqual(['API secret']);
    expect(await whoami([], { env: { RPCCTL_CONFIG_DIR: d } })).toBe(a.userId);
  });
});

describe('which credentials a command uses', () => {
  it('the default profile, then the one chosen with `profile use`', async () => {
    expect(await whoami()).toBe(a.userId);
    expect((await run(['profile', 'use', 'other'])).code).toBe(0);
    expect(await whoami()).toBe(b.userId);
    expect((await run(['profile', 'use', 'nobody'])).stderr).toContain('no profile "nobody"');
    // Names of Object.prototype's members are profiles like any other: absent here.
    for (const name of ['toString', 'constructor', '__proto__']) {
      expect((await run(['profile', 'use', name])).stderr).toContain(`no profile "${name}"`);
      const r = await run(['account', '--profile', name]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(name);
    }
  });

  it('env PUBLIC_API_KEY/SECRET beat the selected profile; --profile beats the env', async () => {
    const envA = { PUBLIC_API_KEY: a.apiKey, PUBLIC_API_SECRET: a.secret };
    expect(await whoami([], { env: envA })).toBe(a.userId); // selected is "other" (b)
    expect(await whoami(['--profile', 'other'], { env: envA })).toBe(b.userId);
    expect(await whoami(['-p', 'default'])).toBe(a.userId);
  });

  it('base URL: --base-url > --profile > PUBLIC_API_BASE > the selected profile', async () => {
    await run(['profile', 'add', 'dead', '--base-url', DEAD, '--api-key', a.apiKey, '--no-verify'], { stdin: a.secret });
    expect(await whoami(['--profile', 'dead', '--base-url', t.baseUrl])).toBe(a.userId);
    expect(await whoami(['--profile', 'other'], { env: { PUBLIC_API_BASE: DEAD } })).toBe(b.userId);
    await run(['profile', 'use', 'dead']);
    expect(await whoami([], { env: { PUBLIC_API_BASE: t.baseUrl } })).toBe(a.userId);
    expect(await whoami([], { env: { PUBLIC_API_KEY: b.apiKey, PUBLIC_API_SECRET: b.secret, PUBLIC_API_BASE: t.baseUrl } })).toBe(b.userId);
    await run(['profile', 'use', 'other']);
  });

  it('empty environment variables count as unset', async () => {
    expect(await whoami([], { env: { PUBLIC_API_KEY: '', PUBLIC_API_SECRET: '', PUBLIC_API_BASE: '' } })).toBe(b.userId);
  });

  it('missing or half-given credentials are auth errors (exit 4) that say what to do', async () => {
    const none = await cli(['account'], { env: { RPCCTL_CONFIG_DIR: tempConfigDir() } });
    expect(none.code).toBe(4);
    expect(none.stderr).toContain('no credentials: run `rpcctl init`');
    const half = await run(['account'], { env: { PUBLIC_API_KEY: a.apiKey } });
    expect(half.code).toBe(4);
    expect(half.stderr).toContain('PUBLIC_API_SECRET is not set');
    const unknown = await run(['account', '--profile', 'ghost']);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain('no profile "ghost"');
  });

  it('env credentials work without any config dir being created', async () => {
    const d = join(tempConfigDir(), 'never');
    const r = await cli(['account', '--json'], { env: { RPCCTL_CONFIG_DIR: d, PUBLIC_API_KEY: a.apiKey, PUBLIC_API_SECRET: a.secret, PUBLIC_API_BASE: t.baseUrl } });
    expect(r.code).toBe(0);
    expect(() => statSync(d)).toThrow();
  });

  it('a revoked or wrong key is exit 4 with the API text', async () => {
    const r = await run(['account'], { env: { PUBLIC_API_KEY: a.apiKey, PUBLIC_API_SECRET: 'sk_wrong', PUBLIC_API_BASE: t.baseUrl } });
    expect(r.code).toBe(4);
    expect(r.stderr).toBe('error: Invalid signature.\n');
  });

  it('without XDG settings profiles live in ~/.config/rpcctl; XDG_CONFIG_HOME moves them', async () => {
    const home = tempConfigDir();
    await cli(['profile', 'add', 'h', '--api-key', a.apiKey, '--no-verify'], { stdin: a.secret, env: { HOME: home } });
    expect(statSync(join(home, '.config', 'rpcctl', 'config.json')).mode & 0o777).toBe(0o600);
    const xdg = tempConfigDir();
    await cli(['profile', 'add', 'h', '--api-key', a.apiKey, '--no-verify'], { stdin: a.secret, env: { HOME: home, XDG_CONFIG_HOME: xdg } });
    expect(statSync(join(xdg, 'rpcctl', 'config.json')).isFile()).toBe(true);
  });
});

describe('profile remove', () => {
  it('needs --yes in scripts, asks on a terminal', async () => {
    const piped = await run(['profile', 'remove', 'dead']);
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain('add --yes to confirm');

    const no = scriptedPrompter([{ match: /Delete profile "dead"\?/, answer: false }]);
    expect((await run(['profile', 'rm', 'dead'], { tty: true, prompter: no })).code).toBe(1);
    expect((await run(['profile', 'list', '--json'])).stdout).toContain('"dead"');

    const yes = scriptedPrompter([{ match: /Delete profile "dead"\?/, answer: true }]);
    expect((await run(['profile', 'rm', 'dead'], { tty: true, prompter: yes })).code).toBe(0);
    expect((await run(['profile', 'remove', 'other', '--yes'])).code).toBe(0);
    const names = JSON.parse((await run(['profile', 'list', '--json'])).stdout).map((p: { name: string }) => p.name);
    expect(names).toEqual(['default']);
    // The removed profile was selected: the default one takes over.
    expect(await whoami()).toBe(a.userId);
  });
});

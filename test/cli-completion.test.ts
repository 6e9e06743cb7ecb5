import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, tempConfigDir } from './helpers/cli.js';
import { startTestService, type TestService } from './helpers/service.js';

const FILES = { bash: 'rpcctl.bash', zsh: '_rpcctl', fish: 'rpcctl.fish' } as const;
const committed = (shell: keyof typeof FILES) => readFileSync(new URL(`../completions/${FILES[shell]}`, import.meta.url), 'utf8');

/** Asks the generated bash completion what it offers after `line` (the last word is being typed). */
function complete(script: string, line: string): string[] {
  const words = line.split(' ');
  const program = `${script}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}
_rpcctl; printf '%s\\n' "\${COMPREPLY[@]}"`;
  return execFileSync('bash', ['-c', program], { encoding: 'utf8' }).split('\n').filter(Boolean);
}

describe('rpcctl completion', () => {
  for (const shell of Object.keys(FILES) as Array<keyof typeof FILES>) {
    it(`completions/${FILES[shell]} is what \`rpcctl completion ${shell}\` prints (else: npm run completions)`, async () => {
      const r = await cli(['completion', shell]);
      expect(r.code).toBe(0);
      expect(r.stdout === committed(shell), `completions/${FILES[shell]} is stale: run npm run completions`).toBe(true);
    });
  }

  it('an unknown shell is a usage error', async () => {
    const r = await cli(['completion', 'tcsh']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Allowed choices are bash, zsh, fish');
  });

  describe('the bash script completes from the command tree', () => {
    let script: string;
    beforeAll(async () => { script = (await cli(['completion', 'bash'])).stdout; });
    it('top-level commands', () => {
      expect(complete(script, 'rpcctl ')).toEqual(expect.arrayContaining(['init', 'profile', 'account', 'usage', 'networks', 'endpoints', 'rpc', 'api', 'serve', 'admin', 'completion']));
      expect(complete(script, 'rpcctl en')).toEqual(['endpoints']);
    });
    it('subcommands, through aliases and past global options with values', () => {
      expect(complete(script, 'rpcctl endpoints allowlist ')).toEqual(['set', 'add', 'remove', 'rm', 'clear']);
      expect(complete(script, 'rpcctl ep allowlist c')).toEqual(['clear']);
      expect(complete(script, 'rpcctl --profile endpoints endpoints p')).toEqual(['pause']);
      expect(complete(script, 'rpcctl admin keys ')).toEqual(['create', 'list', 'ls', 'revoke']);
    });
    it('options, inherited ones included, and option values', () => {
      expect(complete(script, 'rpcctl endpoints create --')).toEqual(expect.arrayContaining(['--name', '--network', '--env', '--environment-id', '--json', '--profile', '--help']));
      expect(complete(script, 'rpcctl admin keys list --da')).toEqual(['--data-dir', '--database']);
      expect(complete(script, 'rpcctl usage --days ')).toEqual(['7', '30', '90']);
      expect(complete(script, 'rpcctl completion ')).toEqual(['bash', 'zsh', 'fish']);
      // The audit log's actions, with no call to the service.
      expect(complete(script, 'rpcctl account audit --action endpoint.p')).toEqual(['endpoint.pause']);
      expect(complete(script, 'rpcctl account audit --action two_factor.')).toEqual(['two_factor.disable', 'two_factor.enable', 'two_factor.recovery_codes', 'two_factor.reset']);
    });
  });

  it('zsh and fish scripts cover the same tree', async () => {
    const zsh = (await cli(['completion', 'zsh'])).stdout;
    const fish = (await cli(['completion', 'fish'])).stdout;
    expect(zsh.startsWith('#compdef rpcctl\n')).toBe(true);
    expect(zsh).toContain(`'endpoints allowlist')`);
    expect(zsh).toContain(`'clear:remove the restriction: any IP may call'`);
    expect(fish).toContain(`complete -c rpcctl -n '__rpcctl_at '\\''endpoints allowlist'\\''' -a 'clear'`);
    expect(fish).toContain(`-l days -x -a '7 30 90'`);
  });
});

describe('dynamic completion: values only the service knows', () => {
  let t: TestService;
  let env: Record<string, string>;
  let script: string;
  const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;

  beforeAll(async () => {
    t = await startTestService();
    const m = await t.merchant({ plan: 'pro' });
    await m.client.createEndpoint({ name: 'main', network_id: 1, env_slug: 'mainnet' });
    await m.client.createEndpoint({ name: 'archive', network_id: 1, env_slug: 'sepolia' });
    // `rpcctl` on PATH, as after `npm link`: the scripts call it for the values.
    const pathDir = mkdtempSync(join(tmpdir(), 'rpcctl-path-'));
    writeFileSync(join(pathDir, 'rpcctl'), `#!/bin/sh\nexec "${process.execPath}" "${bin}" "$@"\n`, { mode: 0o755 });
    env = { PATH: `${pathDir}:${process.env.PATH}`, PUBLIC_API_KEY: m.apiKey, PUBLIC_API_SECRET: m.secret, PUBLIC_API_BASE: t.baseUrl, RPCCTL_CONFIG_DIR: tempConfigDir() };
    script = (await cli(['completion', 'bash'])).stdout;
  });
  afterAll(() => t.stop());

  // Asynchronous: the service runs in this process, and must answer the script's rpcctl calls.
  const completeWith = async (line: string, extra: Record<string, string> = {}) => {
    const words = line.split(' ');
    const program = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}\n_rpcctl; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const { stdout } = await promisify(execFile)('bash', ['-c', program], { encoding: 'utf8', env: { ...process.env, ...env, ...extra } });
    return stdout.split('\n').filter(Boolean);
  };

  it('endpoint names (and ids) for endpoint arguments, network slugs for --network, profile names', async () => {
    expect(await completeWith('rpcctl endpoints get ')).toEqual(expect.arrayContaining(['main', 'archive', '1', '2']));
    expect(await completeWith('rpcctl rpc ma')).toEqual(['main']);
    expect(await completeWith('rpcctl watch add --network eth')).toEqual(expect.arrayContaining(['eth', 'eth-sepolia']));
    const profiles = tempConfigDir();
    expect((await cli(['profile', 'add', 'staging', '--api-key', 'k', '--no-verify'], { env: { RPCCTL_CONFIG_DIR: profiles }, stdin: 's\n' })).code).toBe(0);
    expect(await completeWith('rpcctl profile use st', { RPCCTL_CONFIG_DIR: profiles })).toEqual(['staging']);
    expect(await completeWith('rpcctl --profile ', { RPCCTL_CONFIG_DIR: profiles })).toEqual(['staging']);
  });

  it('watch ids for watch rm', async () => {
    const add = await cli(['watch', 'add', '--network', 'eth', '0x52908400098527886E0F7030069857D2E4169EE7'], { env });
    expect(await completeWith('rpcctl watch rm ')).toEqual([add.stdout.trim()]);
  });

  it('payment ids for payments get, watch and cancel', async () => {
    const xpub = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
    expect((await cli(['payments', 'settings', '--xpub', xpub], { env })).code).toBe(0);
    const made = await cli(['payments', 'create', '--order-id', 'c-1', '--network', 'eth', '--amount', '1'], { env });
    expect(made.code, made.stderr).toBe(0);
    const id = made.stdout.trim();
    for (const sub of ['get', 'watch', 'cancel']) expect(await completeWith(`rpcctl payments ${sub} `)).toEqual([id]);
    expect(await completeWith('rpcctl payments get pay_')).toEqual([id]);
  });

  it('silent when the service cannot answer: no values, nothing on stderr', async () => {
    const r = await cli(['__complete', 'endpoints'], { env: { ...env, PUBLIC_API_BASE: 'http://127.0.0.1:1' } });
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await completeWith('rpcctl endpoints get ', { PUBLIC_API_BASE: 'http://127.0.0.1:1' })).toEqual([]);
  });

  it('install lines: zsh with compinit, fish under $XDG_CONFIG_HOME', async () => {
    const help = (await cli(['completion', '--help'])).stdout;
    expect(help).toContain('autoload -Uz compinit && compinit');
    expect(help).toContain('"${XDG_CONFIG_HOME:-$HOME/.config}/fish/completions/rpcctl.fish"');
  });
});

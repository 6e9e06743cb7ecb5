import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli } from './helpers/cli.js';

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

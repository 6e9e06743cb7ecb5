import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/cli/program.js';
import type { Command } from 'commander';
import { cli } from './helpers/cli.js';

/** Every command a user can type, as its words. */
function commandPaths(): string[][] {
  const program = buildProgram({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: {} });
  const paths: string[][] = [];
  const walk = (cmd: Command, path: string[]) => {
    for (const sub of cmd.commands) {
      if ((sub as unknown as { _hidden?: boolean })._hidden) continue;
      paths.push([...path, sub.name()]);
      walk(sub, [...path, sub.name()]);
    }
  };
  walk(program, []);
  return paths;
}

describe('help', () => {
  it('every command has examples and lists the global flags it inherits', async () => {
    const missing: string[] = [];
    for (const path of commandPaths()) {
      const r = await cli([...path, '--help']);
      expect(r.code, path.join(' ')).toBe(0);
      if (!/Examples?:\n {2}rpcctl /.test(r.stdout)) missing.push(path.join(' '));
      expect(r.stdout, path.join(' ')).toMatch(/Global Options:[\s\S]*--json[\s\S]*--jq <expression>[\s\S]*--profile <name>[\s\S]*--timeout <seconds>/);
    }
    expect(missing, 'commands without examples (see src/cli/examples.ts)').toEqual([]);
  });

  it('required options are marked', async () => {
    const create = (await cli(['endpoints', 'create', '--help'])).stdout;
    expect(create).toMatch(/--name <name>\s+display name \(required\)/);
    expect(create).not.toMatch(/--network <slug>.*\(required\)/);
    expect((await cli(['admin', 'keys', 'create', '--help'])).stdout).toMatch(/--account <user_id>\s+account id \(required\)/);
  });
});

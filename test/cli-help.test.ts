import { describe, expect, it } from 'vitest';
import { buildProgram, GROUPS } from '../src/cli/program.js';
import { Command } from 'commander';
import { cli, tempConfigDir } from './helpers/cli.js';
import type { NetworkFamily } from '../src/chains/family.js';

/** Every command a user can type, as its words. */
async function commandPaths(): Promise<string[][]> {
  const program = await buildProgram({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: {} });
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
    for (const path of await commandPaths()) {
      const r = await cli([...path, '--help']);
      expect(r.code, path.join(' ')).toBe(0);
      if (!/Examples:\n {2}rpcctl /.test(r.stdout)) missing.push(path.join(' '));
      expect(r.stdout, path.join(' ')).toMatch(/Global Options:[\s\S]*--json[\s\S]*--jq <expression>[\s\S]*--profile <name>[\s\S]*--timeout <seconds>/);
    }
    expect(missing, 'commands without examples (see src/cli/examples.ts)').toEqual([]);
  });

  it('each command group is found by exactly the top-level commands it defines', async () => {
    // A command line loads only the group its first word names (start-up time): a name missing
    // from GROUPS would cost the whole tree, a wrong one would make the command unknown.
    const io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: {} };
    for (const group of GROUPS) {
      const program = new Command('rpcctl');
      (await group.load())(program, io);
      const names = program.commands.flatMap((c) => [c.name(), ...c.aliases()]);
      expect(names.sort()).toEqual([...group.commands].sort());
    }
    // The whole tree is the groups together, in help order.
    const all = (await buildProgram(io)).commands.map((c) => c.name());
    expect(all.filter((n) => n !== '__complete')).toEqual(['init', 'auth', 'profile', 'account', 'usage', 'networks', 'endpoints', 'watch', 'events', 'webhook', 'payments', 'payouts', 'rpc', 'api', 'serve', 'admin', 'completion']);
  });

  it('a command line with global options before the command finds its group; a typo still gets a suggestion', async () => {
    const env = { RPCCTL_CONFIG_DIR: tempConfigDir() };
    expect((await cli(['--json', '--profile', 'nope', '--timeout', '5', 'profile', 'list'], { env })).code).toBe(0);
    expect((await cli(['-p', 'nope', 'profile', 'lst'], { env })).stderr).toContain('(Did you mean one of list, ls?)');
    const typo = await cli(['--timeout', '5', 'profil', 'list'], { env });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('(Did you mean profile?)');
    expect((await cli(['help', 'account'], { env })).stdout).toContain("plan, limits and this month's credits");
    expect((await cli(['--version'], { env })).stdout).toBe('0.1.0\n');
  });

  it('the top-level help groups commands as gh does, with examples and where to learn more', async () => {
    for (const tty of [false, true]) {
      const r = await cli(['--help'], { tty });
      expect(r.code).toBe(0);
      const headings = r.stdout.split('\n').filter((l) => /^[A-Z][\w ()'’]*:$/.test(l));
      expect(headings).toEqual(['Options:', 'Core commands:', 'Payments commands:', "Service commands (run on the service's machine):", 'Additional commands:', 'Examples:', 'Learn more:']);
      const section = (h: string) => r.stdout.split(`${h}\n`)[1]!.split('\n\n')[0]!.split('\n').filter((l) => /^ {2}\S/.test(l)).map((l) => l.trim().split(/[ |]/)[0]);
      expect(section('Core commands:')).toEqual(['init', 'auth', 'account', 'usage', 'networks', 'endpoints', 'watch', 'events', 'webhook', 'rpc']);
      expect(section('Payments commands:')).toEqual(['payments', 'payouts']);
      expect(section("Service commands (run on the service's machine):")).toEqual(['serve', 'admin']);
      expect(section('Additional commands:')).toEqual(['profile', 'api', 'completion', 'help']);
      expect(r.stdout).toMatch(/Examples:\n {2}rpcctl serve --dev[\s\S]* {2}rpcctl rpc main eth_blockNumber\n/);
      expect(r.stdout).toContain('Learn more:\n  Use `rpcctl <command> <subcommand> --help` for more information about a command.\n');
    }
    // A subcommand's help keeps its plain list and no top-level examples.
    const sub = (await cli(['endpoints', '--help'])).stdout;
    expect(sub).toMatch(/\nCommands:\n/);
    expect(sub).not.toContain('Learn more:');
  });

  it('a word from another CLI gets the real command; a missing argument or option prints the usage line', async () => {
    const env = { RPCCTL_CONFIG_DIR: tempConfigDir() };
    const del = await cli(['watch', 'delete', 'w_1'], { env });
    expect(del).toMatchObject({ code: 2, stdout: '' });
    expect(del.stderr).toBe("error: unknown command 'delete'\n(Did you mean rpcctl watch remove?)\n");
    const ep = await cli(['endpoints', 'delete', 'main'], { env });
    expect(ep.code).toBe(2);
    expect(ep.stderr).toBe("error: unknown command 'delete'\n(Did you mean rpcctl endpoints pause? Endpoints are never deleted; pausing one stops its traffic.)\n");
    expect((await cli(['version'], { env })).stderr).toBe("error: unknown command 'version'\n(Did you mean rpcctl --version?)\n");
    expect((await cli(['endpoints', 'show', 'main'], { env })).stderr).toContain('(Did you mean rpcctl endpoints get?)');
    expect((await cli(['payments', 'delete', 'pay_1'], { env })).stderr).toContain('(Did you mean rpcctl payments cancel?)');
    // Edit distance still works where no synonym applies.
    expect((await cli(['ep', 'lst'], { env })).stderr).toContain('(Did you mean one of list, ls?)');

    const rpc = await cli(['rpc'], { env });
    expect(rpc.code).toBe(2);
    expect(rpc.stderr).toBe("error: missing required argument 'endpoint'\nUsage: rpcctl rpc [options] <endpoint> <method> [params]\n(more: rpcctl rpc --help)\n");
    expect((await cli(['webhook', 'redeliver'], { env, tty: true })).stderr).toContain('Usage: rpcctl webhook redeliver [options] <delivery_id>\n');
    const opt = await cli(['webhook', 'test', '--network', 'eth'], { env });
    expect(opt.code).toBe(2);
    expect(opt.stderr).toBe("error: required option '--type <type>' not specified\nUsage: rpcctl webhook test [options]\n(more: rpcctl webhook test --help)\n");
  });

  it('watch add names the address form of every family; rpc and events show a Solana call', async () => {
    // Keyed by family: a new family fails to typecheck here until its address form is in the help.
    const forms = {
      evm: /EVM 0x address/, stellar: /Stellar account id \(G\.\.\.\)/, utxo: /Bitcoin-style address/,
      tron: /Tron address \(T\.\.\.\)/, solana: /Solana public key \(base58\)/,
    } satisfies Record<NetworkFamily, RegExp>;
    const add = (await cli(['watch', 'add', '--help'])).stdout.replace(/\s+/g, ' ');
    for (const [family, form] of Object.entries(forms)) expect(add, family).toMatch(form);
    expect(add).toMatch(/rpcctl watch add --network solana [1-9A-HJ-NP-Za-km-z]{32,44}/);
    expect((await cli(['rpc', '--help'])).stdout.replace(/\s+/g, ' ')).toMatch(/getSlot \(Solana\)[\s\S]*rpcctl rpc sol getSlot '\[\{"commitment": "finalized"\}\]'/);
    expect((await cli(['events', '--help'])).stdout).toContain('rpcctl events --network solana --type payment');
  });

  it('required options are marked', async () => {
    const create = (await cli(['endpoints', 'create', '--help'])).stdout;
    expect(create).toMatch(/--name <name>\s+display name \(required\)/);
    expect(create).not.toMatch(/--network <slug>.*\(required\)/);
    expect((await cli(['admin', 'keys', 'create', '--help'])).stdout).toMatch(/--account <user_id>\s+account id \(required\)/);
  });
});

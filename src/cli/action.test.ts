import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { lazyActions } from './action.js';
import type { CliIO } from './io.js';

// The one binder: what a run function finds in opts for each shape of positional argument.
describe('lazyActions', () => {
  const io = {} as CliIO;

  async function received(build: (cmd: Command) => Command, argv: string[], names: string[]): Promise<Record<string, unknown>> {
    let seen: Record<string, unknown> = {};
    const act = lazyActions(io, async () => ({ impl: async (_io: CliIO, opts: Record<string, unknown>) => { seen = opts; } }));
    const program = new Command('t').option('--json').exitOverride();
    build(program.command('c')).action(act('impl', names));
    await program.parseAsync(['c', ...argv], { from: 'user' });
    return seen;
  }

  it('puts positionals into opts by name, beside the command and global options', async () => {
    const opts = await received((c) => c.argument('<id>').argument('<new-name>').option('--yes'), ['7', 'main-eu', '--yes', '--json'], ['ref', 'newName']);
    expect(opts).toEqual({ ref: '7', newName: 'main-eu', yes: true, json: true });
  });

  it('a variadic one as its array; an absent optional one is left out', async () => {
    expect(await received((c) => c.argument('<id>').argument('<ip...>'), ['3', '10.0.0.1', '::1'], ['ref', 'ips'])).toEqual({ ref: '3', ips: ['10.0.0.1', '::1'] });
    expect(await received((c) => c.argument('<ref>').argument('[params]'), ['main'], ['ref', 'params'])).not.toHaveProperty('params');
  });

  it('imports the implementation only when the command runs', async () => {
    let loads = 0;
    const act = lazyActions(io, async () => { loads++; return { impl: async () => {} }; });
    const action = act('impl');
    expect(loads).toBe(0);
    await action({}, new Command('x'));
    expect(loads).toBe(1);
  });
});

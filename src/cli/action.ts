import type { Command } from 'commander';
import type { CliIO } from './io.js';
import { optionsOf, type GlobalOptions } from './globals.js';

/** What every command implementation receives: streams, merged options, positional arguments. */
export type CommandImpl<O = Record<string, unknown>> = (io: CliIO, opts: O & GlobalOptions, args: string[]) => Promise<void>;

/**
 * Binds commander actions to functions of an implementation module that is imported only when
 * the command runs, so `--help`, `--version` and `completion` never load it:
 *
 *   const act = lazyActions(io, () => import('./endpoints/run.js'));
 *   cmd.command('list').action(act('endpointsList'));
 *
 * Variadic arguments arrive flattened into `args`; absent optional ones are left out.
 */
export function lazyActions<M>(io: CliIO, load: () => Promise<M>) {
  return (name: keyof M & string) =>
    async (...received: unknown[]): Promise<void> => {
      const cmd = received[received.length - 1] as Command;
      const args = received.slice(0, -2).flatMap((a) => (Array.isArray(a) ? a : [a])).filter((a): a is string => typeof a === 'string');
      const mod = await load();
      await (mod[name] as CommandImpl)(io, optionsOf(cmd), args);
    };
}

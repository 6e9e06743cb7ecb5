import type { Command } from 'commander';
import type { CliIO } from './io.js';
import { optionsOf, type GlobalOptions } from './globals.js';

/** What every command implementation receives: streams, and the merged options with the positional arguments by name. */
export type CommandImpl<O = Record<string, unknown>> = (io: CliIO, opts: O & GlobalOptions) => Promise<void>;

/**
 * Binds commander actions to functions of an implementation module that is imported only when
 * the command runs, so `--help`, `--version` and `completion` never load it:
 *
 *   const act = lazyActions(io, () => import('./run.js'));
 *   cmd.command('rename').argument('<id>').argument('<new-name>').action(act('rename', ['ref', 'newName']));
 *
 * The names given put the positional arguments into `opts` in order (a variadic one as its
 * array; an absent optional one is left out), so a run function reads `opts.ref` as gh's
 * `viewRun` reads `opts.RepoArg`. A name must not be one of the command's option names.
 */
export function lazyActions<M>(io: CliIO, load: () => Promise<M>) {
  return (name: keyof M & string, positionals: readonly string[] = []) =>
    async (...received: unknown[]): Promise<void> => {
      const cmd = received[received.length - 1] as Command;
      const given = received.slice(0, -2);
      const named = Object.fromEntries(positionals.flatMap((key, i) => (given[i] === undefined ? [] : [[key, given[i]]])));
      const mod = await load();
      await (mod[name] as CommandImpl)(io, { ...optionsOf(cmd), ...named });
    };
}

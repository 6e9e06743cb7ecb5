import { Writable } from 'node:stream';
import { CliError, EXIT, usageError, type Choice, type CliIO, type InStream, type Prompter } from './io.js';
import { readAll } from './stdin.js';

// The prompt types live in io.ts (CliIO carries a Prompter), so io.ts needs nothing from here.
export type { Choice, Prompter } from './io.js';

/** Prompts need a person at both ends: stdin to answer and stdout to see the question. */
export function canPrompt(io: CliIO): boolean {
  return io.stdin.isTTY === true && io.stdout.isTTY === true;
}

/**
 * The prompter for an interactive run; in scripts it fails with `hint`, which should say how
 * to do the same thing without questions.
 */
export function prompterFor(io: CliIO, hint: string): Prompter {
  if (!canPrompt(io)) throw usageError(`this needs an interactive terminal (stdin and stdout); ${hint}`);
  return io.prompter ?? inquirerPrompter(io);
}

/**
 * A secret for this run, never from a flag (it would land in shell history and `ps`): a
 * masked prompt on a terminal, else all of stdin, trimmed. `missing` says how to pipe it.
 */
export async function readSecret(io: CliIO, message: string, missing: string, check?: (value: string) => true | string): Promise<string> {
  const secret = canPrompt(io)
    ? await prompterFor(io, '').password({ message, validate: (v) => (!v.trim() ? 'required' : check ? check(v.trim()) : true) })
    : await readAll(io.stdin);
  if (!secret.trim()) throw usageError(missing);
  return secret.trim();
}

/** Asks for confirmation unless `--yes` was given; scripts must pass `--yes`. */
export async function confirmOrYes(io: CliIO, opts: { yes?: boolean }, message: string): Promise<void> {
  if (opts.yes) return;
  const ok = await prompterFor(io, 'add --yes to confirm').confirm({ message, default: false });
  if (!ok) throw new CliError('cancelled', EXIT.error);
}

/**
 * Inquirer pipes each prompt into its output and ends that stream when the prompt closes;
 * Node never ends process.stdout that way, but any other stream would be closed after the
 * first question. Each prompt gets a proxy that forwards writes and keeps the real one open.
 */
function promptOutput(io: CliIO): Writable {
  // The callback is not waited for: a prompt's last line ("\n" when it closes) must be on the
  // terminal before the command's next line, which is written right after the answer.
  const proxy = new Writable({
    write: (chunk, encoding, cb) => {
      io.stdout.write(chunk, encoding);
      cb();
    },
  });
  return Object.assign(proxy, { isTTY: io.stdout.isTTY, columns: io.stdout.columns, rows: (io.stdout as { rows?: number }).rows });
}

function inquirerPrompter(io: CliIO): Prompter {
  // Ctrl-C inside a prompt rejects with ExitPromptError: report it as a cancellation.
  const ask = async <T>(fn: (m: typeof import('@inquirer/prompts'), context: { input: InStream; output: Writable }) => Promise<T>): Promise<T> => {
    const m = await import('@inquirer/prompts');
    try {
      return await fn(m, { input: io.stdin, output: promptOutput(io) });
    } catch (err) {
      if ((err as Error)?.name === 'ExitPromptError') throw new CliError('cancelled', EXIT.error);
      throw err;
    }
  };
  return {
    input: (q) => ask((m, context) => m.input(q, context)),
    password: (q) => ask((m, context) => m.password({ ...q, mask: '*' }, context)),
    confirm: (q) => ask((m, context) => m.confirm(q, context)),
    select: <T>(q: { message: string; choices: Array<Choice<T>>; default?: T }) => ask((m, context) => m.select<T>(q, context)),
  };
}

import { Command, CommanderError, Help, Option } from 'commander';
import { EXAMPLES } from './examples.js';
import { CliError, EXIT, flushOutput, type CliIO } from './io.js';
import { VERSION } from './version.js';
import { registerServe } from './serve.js';
import { registerAdmin } from './admin.js';
import { registerInit } from './init.js';
import { registerProfile } from './profile.js';
import { registerAuth } from './auth.js';
import { registerAccount } from './account.js';
import { registerEndpoints } from './endpoints.js';
import { registerRpc } from './rpc.js';
import { registerApi } from './api.js';
import { registerWatch } from './watch.js';
import { registerWebhook } from './webhook.js';
import { registerPayments } from './payments/index.js';
import { registerCompletion } from './completion.js';

export { VERSION };

/** Options every command accepts. */
export interface GlobalOptions {
  json?: boolean;
  color?: boolean;
  /** Use this saved profile (see context.ts for the precedence). */
  profile?: string;
  /** Public API base URL for this run. */
  baseUrl?: string;
  /** jq filter for the JSON output; implies --json. */
  jq?: string;
  /** Seconds one Public API call may take, retries included. */
  timeout?: string;
}

/**
 * The command groups, in help order. Adding one is one line here plus its definitions file
 * (`register*`, no heavy imports) and its implementation file (loaded by the action).
 */
const GROUPS: Array<(program: Command, io: CliIO) => void> = [
  registerInit, registerAuth, registerProfile, registerAccount, registerEndpoints, registerWatch, registerWebhook, registerPayments, registerRpc, registerApi,
  registerServe, registerAdmin, registerCompletion,
];

/**
 * The whole command tree. Definitions only: each action imports its implementation when it
 * runs, so `--help`, `--version` and completions load nothing else.
 */
export function buildProgram(io: CliIO): Command {
  const program = new Command('rpcctl')
    .description('Managed JSON-RPC nodes: the service and the command line that drives it')
    .version(VERSION, '-v, --version')
    .addOption(new Option('--json', 'print API objects as JSON (for scripts)'))
    .addOption(new Option('-q, --jq <expression>', 'filter the JSON output with a jq expression (implies --json)'))
    .addOption(new Option('--no-color', 'disable colour (also: NO_COLOR)'))
    .addOption(new Option('-p, --profile <name>', 'use this saved profile (default: the one chosen with `profile use`)'))
    .addOption(new Option('--base-url <url>', 'Public API base URL (default: from the profile, or $PUBLIC_API_BASE)'))
    .addOption(new Option('--timeout <seconds>', 'give up on a Public API call after this long, retries included (default: 60)'))
    .showSuggestionAfterError()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
    .exitOverride();
  program.configureHelp({
    sortSubcommands: false,
    // Like gh: a subcommand's help also lists the flags every command takes.
    showGlobalOptions: true,
    optionDescription(option) {
      const text = Help.prototype.optionDescription.call(this, option);
      return option.mandatory ? `${text} (required)` : text;
    },
  });

  for (const register of GROUPS) register(program, io);
  program.commands.forEach(function addExamples(cmd: Command, _i: number, _all: readonly Command[], path = cmd.name()) {
    const examples = EXAMPLES[path];
    if (examples) cmd.addHelpText('after', `\nExamples:\n${examples.map((e) => `  ${e}`).join('\n')}`);
    cmd.commands.forEach((sub, i, all) => addExamples(sub, i, all, `${path} ${sub.name()}`));
  });
  return program;
}

/** Runs one command line; resolves to the process exit code. */
export async function run(argv: string[], io: CliIO): Promise<number> {
  const program = buildProgram(io);
  program.commands.forEach(function inherit(cmd: Command) {
    cmd.exitOverride().configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
    cmd.commands.forEach(inherit);
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    await flushOutput(io);
    return EXIT.ok;
  } catch (err) {
    // What a command printed before it failed still reaches stdout, filtered.
    await flushOutput(io).catch(() => {});
    return exitCodeFor(err, io);
  }
}

function exitCodeFor(err: unknown, io: CliIO): number {
  if (err instanceof CommanderError) {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
    // Commander already printed the message.
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (err instanceof CliError) {
    // An empty message: the command already said everything; only the exit code is left.
    if (err.message !== '') io.stderr.write(`error: ${err.message}\n`);
    return err.exitCode;
  }
  const e = err as { name?: string; code?: string; message?: string; status?: number };
  if (e?.name === 'ApiError') {
    io.stderr.write(`error: ${e.message}\n`);
    return e.status === 401 || e.status === 403 ? EXIT.auth : EXIT.error;
  }
  if (e?.name === 'NetworkError') {
    io.stderr.write(`error: ${e.message} (is \`rpcctl serve\` running?)\n`); // NOT_RUNNING_HINT, without loading context.js
    return EXIT.error;
  }
  if (e?.name === 'TimeoutError') {
    io.stderr.write(`error: ${e.message} (wait longer with --timeout SECONDS)\n`);
    return EXIT.error;
  }
  if (e?.name === 'ConfigError') {
    io.stderr.write(`error: ${e.message}\n`);
    return EXIT.error;
  }
  io.stderr.write(`error: ${e?.message ?? String(err)}\n`);
  if (io.env.RPCCTL_DEBUG) io.stderr.write(`${(err as Error)?.stack ?? ''}\n`);
  return EXIT.error;
}

/** The merged global and command options of an action. */
export function optionsOf<T>(cmd: Command): T & GlobalOptions {
  return cmd.optsWithGlobals() as T & GlobalOptions;
}

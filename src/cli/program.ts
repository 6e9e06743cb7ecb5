import { Command, CommanderError, Help, Option } from 'commander';
import { RpcctlCommand } from './command-class.js';
import { EXAMPLES } from './examples.js';
import { CliError, EXIT, flushOutput, type CliIO } from './io.js';
import { escapeControl } from './format.js';
import { stopSpinner } from './spinner.js';
import { VERSION } from './version.js';

export { VERSION };

type Register = (program: Command, io: CliIO) => void;

export interface CommandGroup {
  /** The top-level commands (and aliases) the group defines: how a command line finds it. */
  commands: readonly string[];
  /** Its definitions file (`register*`, no heavy imports); the actions load the implementation. */
  load: () => Promise<Register>;
  /** Needs every group's definitions to run (completion scripts are made from the whole tree). */
  wholeTree?: boolean;
  /** Its heading in `rpcctl --help`, as gh groups its commands. */
  section: Section;
}

/** The top-level help's headings, in this order. */
const SECTIONS = {
  core: 'Core commands:',
  payments: 'Payments commands:',
  service: 'Service commands (run on the service\'s machine):',
  additional: 'Additional commands:',
} as const;
type Section = keyof typeof SECTIONS;
const SECTION_ORDER: readonly string[] = Object.values(SECTIONS);

/** The end of `rpcctl --help`: the tour in four lines, then where to read on. */
const ROOT_HELP_AFTER = `
Examples:
  rpcctl serve --dev                 # in another terminal: a local service
  rpcctl init --local
  rpcctl endpoints create --name main --network eth --env mainnet
  rpcctl rpc main eth_blockNumber
  rpcctl events --follow

Learn more:
  Use \`rpcctl <command> <subcommand> --help\` for more information about a command.
  Read the manual in docs/cli.md (the README starts with a tour).`;

/**
 * The command groups, in help order. Adding one is one entry here plus its definitions file
 * and its implementation file (loaded by the action). A command line loads only the group its
 * first word names: start-up is most of a short command, and each definitions module costs it.
 */
export const GROUPS: readonly CommandGroup[] = [
  { commands: ['init'], load: async () => (await import('./init/command.js')).registerInit, section: 'core' },
  { commands: ['auth'], load: async () => (await import('./auth/command.js')).registerAuth, section: 'core' },
  { commands: ['profile'], load: async () => (await import('./profile/command.js')).registerProfile, section: 'additional' },
  { commands: ['account', 'usage', 'networks'], load: async () => (await import('./account/command.js')).registerAccount, section: 'core' },
  { commands: ['endpoints', 'ep'], load: async () => (await import('./endpoints/command.js')).registerEndpoints, section: 'core' },
  { commands: ['watch', 'events'], load: async () => (await import('./watch/command.js')).registerWatch, section: 'core' },
  { commands: ['webhook'], load: async () => (await import('./webhook/command.js')).registerWebhook, section: 'core' },
  { commands: ['payments'], load: async () => (await import('./payments/command.js')).registerPayments, section: 'payments' },
  { commands: ['payouts'], load: async () => (await import('./payouts/command.js')).registerPayouts, section: 'payments' },
  { commands: ['rpc'], load: async () => (await import('./rpc/command.js')).registerRpc, section: 'core' },
  { commands: ['api'], load: async () => (await import('./api/command.js')).registerApi, section: 'additional' },
  { commands: ['serve'], load: async () => (await import('./serve/command.js')).registerServe, section: 'service' },
  { commands: ['admin'], load: async () => (await import('./admin/command.js')).registerAdmin, section: 'service' },
  { commands: ['completion', '__complete'], load: async () => (await import('./completion/command.js')).registerCompletion, wholeTree: true, section: 'additional' },
];

/**
 * The command tree for `argv` (default: the whole tree). Definitions only: each action
 * imports its implementation when it runs, so `--help`, `--version` and completions load
 * nothing else. With `argv`, only the group its command names is defined; anything else (no
 * command, `help`, a typo that wants a suggestion) gets the whole tree.
 */
export async function buildProgram(io: CliIO, argv?: readonly string[]): Promise<Command> {
  const program = new RpcctlCommand('rpcctl')
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
    // The top level's sections in SECTIONS order, whatever order the groups load in.
    groupItems<T extends Command | Option>(this: Help, unsorted: T[], visible: T[], getGroup: (item: T) => string): Map<string, T[]> {
      const groups = (Help.prototype.groupItems<T>).call(this, unsorted, visible, getGroup);
      const rank = (heading: string) => (SECTION_ORDER.includes(heading) ? SECTION_ORDER.indexOf(heading) : -1);
      return new Map([...groups].filter(([, items]) => items.length > 0).sort(([a], [b]) => rank(a) - rank(b)));
    },
    // Like gh: a subcommand's help also lists the flags every command takes.
    showGlobalOptions: true,
    optionDescription(option) {
      const text = Help.prototype.optionDescription.call(this, option);
      return option.mandatory ? `${text} (required)` : text;
    },
  });

  const word = argv && commandWord(program, argv);
  const named = word === undefined ? undefined : GROUPS.find((g) => g.commands.includes(word));
  const groups = named && !named.wholeTree ? [named] : isVersionOnly(argv) ? [] : GROUPS;
  const loaded = await Promise.all(groups.map((g) => g.load()));
  loaded.forEach((register, i) => {
    const before = program.commands.length;
    register(program, io);
    for (const cmd of program.commands.slice(before)) cmd.helpGroup(SECTIONS[groups[i]!.section]);
  });
  program.commandsGroup(SECTIONS.additional).helpCommand(true);
  program.addHelpText('after', ROOT_HELP_AFTER);
  program.commands.forEach(function addExamples(cmd: Command, _i: number, _all: readonly Command[], path = cmd.name()) {
    const examples = EXAMPLES[path];
    if (examples) cmd.addHelpText('after', `\nExamples:\n${examples.map((e) => `  ${e}`).join('\n')}`);
    cmd.commands.forEach((sub, i, all) => addExamples(sub, i, all, `${path} ${sub.name()}`));
  });
  return program;
}

/** The first word of `argv` that is not a global option or its value: the command's name. */
function commandWord(program: Command, argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return undefined;
    if (!arg.startsWith('-') || arg === '-') return arg;
    const option = program.options.find((o) => o.short === arg || o.long === arg);
    // `--profile NAME`: the next word is the value (`--profile=NAME` and `-pNAME` carry theirs).
    if (option && (option.required || option.optional)) i++;
  }
  return undefined;
}

/** `rpcctl --version`: commander prints it before any command is looked at. */
function isVersionOnly(argv: readonly string[] | undefined): boolean {
  return argv?.length === 1 && (argv[0] === '--version' || argv[0] === '-v');
}

/** Runs one command line; resolves to the process exit code. */
export async function run(argv: string[], io: CliIO): Promise<number> {
  const program = await buildProgram(io, argv);
  program.commands.forEach(function inherit(cmd: Command) {
    cmd.exitOverride().configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
    cmd.commands.forEach(inherit);
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    await flushOutput(io);
    return EXIT.ok;
  } catch (err) {
    // A call still running (the other of two at once) must not leave its spinner before the error.
    stopSpinner(io.stderr);
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
    // A command's own message may have lines of its own (hints); the data in them is escaped.
    if (err.message !== '') io.stderr.write(`error: ${err.message.split('\n').map(escapeControl).join('\n')}\n`);
    return err.exitCode;
  }
  // By the errors' stable codes (the client's and src/util/errors.ts's), compared as strings:
  // importing the classes would load the client or the config at every start-up.
  const e = err as { code?: unknown; message?: string };
  // The API's messages quote what was sent (names, e-mails): shown escaped, never raw.
  const message = escapeControl(String(e?.message ?? err));
  switch (e?.code) {
    case 'E_AUTH': // ApiError for a 401 or 403
    case 'E_REPLAYED': // a 401 too: the same signed request sent twice
      io.stderr.write(`error: ${message}\n`);
      return EXIT.auth;
    case 'E_API':
    case 'E_NOT_FOUND':
    case 'E_VALIDATION':
    case 'E_RATE_LIMIT':
    case 'E_CONFIG':
      io.stderr.write(`error: ${message}\n`);
      return EXIT.error;
    case 'E_NETWORK':
      io.stderr.write(`error: ${message} (is \`rpcctl serve\` running?)\n`); // NOT_RUNNING_HINT, without loading context.js
      return EXIT.error;
    case 'E_TIMEOUT':
      io.stderr.write(`error: ${message} (wait longer with --timeout SECONDS)\n`);
      return EXIT.error;
  }
  io.stderr.write(`error: ${message}\n`);
  if (io.env.RPCCTL_DEBUG) io.stderr.write(`${(err as Error)?.stack ?? ''}\n`);
  return EXIT.error;
}

import { Command } from 'commander';

/**
 * Words people type from other CLIs (gh, kubectl, docker) and what this one calls the
 * command; the first that exists where the word was typed is suggested. Edit distance alone
 * finds neither `delete` → `remove` nor `version` → `--version`.
 */
const SYNONYMS: Record<string, string[]> = {
  delete: ['remove', 'pause', 'cancel'], del: ['remove', 'pause', 'cancel'], destroy: ['remove', 'pause', 'cancel'],
  ls: ['list'], show: ['get'], view: ['get'], describe: ['get'], info: ['get'],
  new: ['create', 'add'], add: ['create'], stop: ['pause', 'cancel'], start: ['resume'], disable: ['pause'], enable: ['resume'],
  logs: ['events', 'deliveries'], tail: ['events'], follow: ['events'], status: ['auth', 'get'],
  login: ['auth', 'init'], setup: ['init'], configure: ['init'], config: ['profile'],
};

/** Why a suggestion that is not a synonym in the plain sense is still the right one. */
const WHY: Record<string, string> = {
  pause: 'endpoints are never deleted; pausing one stops its traffic',
};

/**
 * The CLI's commands: commander's, plus a suggestion for a word from another CLI (`watch
 * delete` → `watch remove`, `version` → `--version`) and the usage line after a missing
 * argument or required option, so the fix is on the screen without a `--help` round trip.
 */
export class RpcctlCommand extends Command {
  override createCommand(name?: string): Command {
    return new RpcctlCommand(name);
  }

  /** `rpcctl endpoints allowlist add`: the words that reach this command. */
  path(): string {
    const names: string[] = [];
    for (let c: Command | null = this; c; c = c.parent) names.unshift(c.name());
    return names.join(' ');
  }

  unknownCommand(): void {
    const word = String(this.args[0] ?? '');
    const here = new Set(this.commands.flatMap((c) => [c.name(), ...c.aliases()]));
    if (!this.parent && (word === 'version' || word === 'v')) return this.#unknown(word, 'rpcctl --version');
    const target = SYNONYMS[word.toLowerCase()]?.find((name) => here.has(name));
    if (target) return this.#unknown(word, `${this.path()} ${target}`, WHY[target]);
    // Commander's own: "Did you mean" by edit distance.
    (Command.prototype as unknown as { unknownCommand(this: Command): void }).unknownCommand.call(this);
  }

  /**
   * `rpcctl nosuchcmd --help`: commander shows the help of the command above (exit 0), as if
   * the word were not there; a word that names no command is an error with --help too.
   */
  _outputHelpIfRequested(args: string[]): void {
    const self = this as unknown as { _actionHandler?: unknown; _findCommand(word: string): Command | undefined };
    const word = this.args[0];
    if (this.commands.length > 0 && !self._actionHandler && word !== undefined && !word.startsWith('-') && word !== 'help' && !self._findCommand(word)) {
      return this.unknownCommand();
    }
    (Command.prototype as unknown as { _outputHelpIfRequested(this: Command, args: string[]): void })._outputHelpIfRequested.call(this, args);
  }

  missingArgument(name: string): void {
    this.error(`error: missing required argument '${name}'\n${this.#usageLine()}`, { code: 'commander.missingArgument' });
  }

  missingMandatoryOptionValue(option: { flags: string }): void {
    this.error(`error: required option '${option.flags}' not specified\n${this.#usageLine()}`, { code: 'commander.missingMandatoryOptionValue' });
  }

  #usageLine(): string {
    return `Usage: ${this.path()} ${this.usage()}\n(more: ${this.path()} --help)`;
  }

  #unknown(word: string, suggestion: string, why?: string): void {
    this.error(`error: unknown command '${word}'\n(Did you mean ${suggestion}?${why ? ` ${why[0]!.toUpperCase()}${why.slice(1)}.` : ''})`, { code: 'commander.unknownCommand' });
  }
}

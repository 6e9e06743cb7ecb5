import { Argument, type Command } from 'commander';
import { lazyActions } from '../action.js';
import type { CliIO } from '../io.js';
import { DYNAMIC_KINDS } from '../completion-kinds.js';


/** `rpcctl completion SHELL`: a completion script generated from the command tree itself. */
export function registerCompletion(program: Command, io: CliIO): void {
  program.command('completion').description('print a shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .addHelpText('after', `
Install:
  bash  echo 'source <(rpcctl completion bash)' >> ~/.bashrc
  zsh   mkdir -p ~/.zfunc && rpcctl completion zsh > ~/.zfunc/_rpcctl
        and in ~/.zshrc, before any compinit:  fpath=(~/.zfunc $fpath); autoload -Uz compinit && compinit
  fish  rpcctl completion fish > "\${XDG_CONFIG_HOME:-$HOME/.config}/fish/completions/rpcctl.fish"

Endpoint names, profile names, network slugs and watch ids are completed by asking rpcctl itself
(which asks the service, with a 2 s timeout, and prints nothing when it cannot answer).

Examples:
  rpcctl completion bash > /etc/bash_completion.d/rpcctl
  rpcctl completion fish | source`)
    .action(async (shell: 'bash' | 'zsh' | 'fish', _opts: unknown, cmd: Command) => {
      let root = cmd;
      while (root.parent) root = root.parent;
      const { completionScript } = await import('./run.js');
      io.stdout.write(completionScript(root, shell));
    });
  // What the scripts call for values only the service knows; not for people, so not listed.
  program.command('__complete', { hidden: true })
    .addArgument(new Argument('<kind>').choices(DYNAMIC_KINDS))
    .action(lazyActions(io, () => import('./complete.js'))('complete', ['kind']));
}

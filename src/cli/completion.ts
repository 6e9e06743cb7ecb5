import { Argument, type Command } from 'commander';
import type { CliIO } from './io.js';

/** `rpcctl completion SHELL`: a completion script generated from the command tree itself. */
export function registerCompletion(program: Command, io: CliIO): void {
  program.command('completion').description('print a shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .addHelpText('after', `
Install:
  bash  echo 'source <(rpcctl completion bash)' >> ~/.bashrc
  zsh   rpcctl completion zsh > "\${fpath[1]}/_rpcctl"
  fish  rpcctl completion fish > ~/.config/fish/completions/rpcctl.fish`)
    .action(async (shell: 'bash' | 'zsh' | 'fish', _opts: unknown, cmd: Command) => {
      let root = cmd;
      while (root.parent) root = root.parent;
      const { completionScript } = await import('./completion-run.js');
      io.stdout.write(completionScript(root, shell));
    });
}

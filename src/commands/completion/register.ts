import { Argument, type Command } from 'commander';
import { commandAction } from '../action';
import type { Dispatch } from '../types';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;

export function registerCompletion(program: Command, dispatch: Dispatch): void {
  program
    .command('completion')
    .description('Print the shell completion script for bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(SHELLS))
    .addHelpText(
      'after',
      `
Examples:
  $ taxprep completion bash > ~/.local/share/bash-completion/completions/taxprep
  $ taxprep completion zsh > "\${fpath[1]}/_taxprep"
  $ taxprep completion fish > ~/.config/fish/completions/taxprep.fish`,
    )
    .action(commandAction(dispatch, () => import('./completion')));
}

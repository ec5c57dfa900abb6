import type { CommandSpec } from '../spec';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;

export const completion: CommandSpec = {
  name: 'completion',
  description: 'Print the shell completion script for bash, zsh or fish',
  arguments: [{ name: '<shell>', help: 'the shell', values: SHELLS }],
  examples: [
    'taxprep completion bash > ~/.local/share/bash-completion/completions/taxprep',
    'mkdir -p ~/.zfunc && taxprep completion zsh > ~/.zfunc/_taxprep',
    'taxprep completion fish > ~/.config/fish/completions/taxprep.fish',
  ],
  notes: 'zsh: add `fpath=(~/.zfunc $fpath)` before `compinit` in ~/.zshrc. bash needs the bash-completion package.',
  exitCodes: [],
  load: () => import('./completion'),
};

/** What the completion scripts ask taxprep for while a person presses Tab: quick, and never a secret. */
export const complete: CommandSpec = {
  name: '__complete',
  description: 'Print completion candidates, one a line',
  arguments: [{ name: '<kind>', help: 'what to list', values: ['profiles'] }],
  hidden: true,
  exitCodes: [],
  load: () => import('./candidates'),
};

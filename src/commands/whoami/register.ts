import type { Command } from 'commander';
import { commandAction } from '../action';
import type { Dispatch } from '../types';

export function registerWhoami(program: Command, dispatch: Dispatch): void {
  program
    .command('whoami')
    .description('Show the profile, base URL and key (redacted) in effect, and where each came from')
    .addHelpText(
      'after',
      `
Examples:
  $ taxprep whoami
  $ taxprep whoami --profile staging --json
Exits 3 when no usable API key is configured, so scripts can check before they start.`,
    )
    .action(commandAction(dispatch, () => import('./whoami')));
}

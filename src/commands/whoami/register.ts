import type { Command } from 'commander';
import { commandAction } from '../action';
import type { Dispatch } from '../types';

export function registerWhoami(program: Command, dispatch: Dispatch): void {
  program
    .command('whoami')
    .description('Show the profile, base URL and key (redacted) in effect, where each came from, and whether the service accepts the key')
    .option('--offline', 'do not ask the service; only show the settings')
    .addHelpText(
      'after',
      `
Examples:
  $ taxprep whoami
  $ taxprep whoami --profile staging --json
  $ taxprep whoami --offline
The key is checked with one cheap read, GET /deliverables?limit=1: 401 means the key is refused.
Exits 3 when no usable key is configured or the service refuses it, 11 when the base URL is not
the service's API, 7 when the service cannot be reached, so scripts can check before they start.`,
    )
    .action(commandAction(dispatch, () => import('./whoami')));
}

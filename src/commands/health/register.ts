import type { Command } from 'commander';
import { commandAction } from '../action';
import type { Dispatch } from '../types';

export function registerHealth(program: Command, dispatch: Dispatch): void {
  program
    .command('health')
    .description('Check that the service is up (no API key needed)')
    .addHelpText('after', '\nExamples:\n  $ taxprep health\n  $ taxprep health --json | jq -r .status\n')
    .action(commandAction(dispatch, () => import('./health')));
}

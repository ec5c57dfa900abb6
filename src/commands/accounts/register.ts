import type { Command } from 'commander';
import { commandAction } from '../action';
import type { Dispatch } from '../types';

export function registerAccounts(program: Command, dispatch: Dispatch): void {
  const accounts = program.command('accounts').description('Create client accounts and read them');

  accounts
    .command('create')
    .description('Create a client account, optionally with one spouse user; prints its login link')
    .option('--email <email>', 'primary holder email (unique across accounts)')
    .option('--first-name <name>', 'primary holder first name (at most 50 characters)')
    .option('--last-name <name>', 'primary holder last name (at most 50 characters)')
    .option('--spouse-email <email>', 'spouse email (with --spouse-first-name and --spouse-last-name)')
    .option('--spouse-first-name <name>', 'spouse first name')
    .option('--spouse-last-name <name>', 'spouse last name')
    .option('--no-spouse-invitation', 'add the spouse without sending them a login link now')
    .addHelpText(
      'after',
      `
Examples:
  $ taxprep accounts create --email jane@example.com --first-name Jane --last-name Doe
  $ taxprep accounts create --email jane@example.com --first-name Jane --last-name Doe \\
      --spouse-email john@example.com --spouse-first-name John --spouse-last-name Doe
  $ taxprep accounts create --email jane@example.com --first-name Jane --last-name Doe --json | jq -r .login_link
`,
    )
    .action(commandAction(dispatch, () => import('./create')));

  accounts
    .command('get')
    .description('Show an account')
    .argument('<account-id>', 'account identifier')
    .addHelpText('after', '\nExamples:\n  $ taxprep accounts get 1001\n  $ taxprep accounts get 1001 --json | jq -r .status\n')
    .action(commandAction(dispatch, () => import('./get')));
}

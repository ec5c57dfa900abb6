import type { Command } from 'commander';
import { commandAction } from '../action';
import type { Dispatch } from '../types';

export function registerProjects(program: Command, dispatch: Dispatch): void {
  const projects = program.command('projects').description("Follow an account's tax projects");

  projects
    .command('list')
    .description("List an account's projects with their status and progress")
    .argument('<account-id>', 'account identifier')
    .option('--tax-year <year>', 'only projects of this tax year')
    .option('--type <type>', 'tax_return, quarterly_estimate, tax_planning or equity_planning')
    .option('--status <status>', 'waiting_on_client, in_progress, in_review or completed')
    .addHelpText(
      'after',
      `
Examples:
  $ taxprep projects list 1001
  $ taxprep projects list 1001 --tax-year 2024 --status waiting_on_client
  $ taxprep projects list 1001 --json | jq -r '.projects[] | "\\(.id) \\(.progress_percentage)"'
`,
    )
    .action(commandAction(dispatch, () => import('./list')));

  projects
    .command('status')
    .description("Show a project's status, progress and outstanding items")
    .argument('<project-id>', 'project identifier')
    .addHelpText('after', '\nExamples:\n  $ taxprep projects status 5001\n  $ taxprep projects status 5001 --json | jq .outstanding_items\n')
    .action(commandAction(dispatch, () => import('./status')));
}

import type { Command } from 'commander';
import { commandAction } from '../action';
import type { Dispatch } from '../types';

export function registerDeliverables(program: Command, dispatch: Dispatch): void {
  const deliverables = program.command('deliverables').description("Read projects' deliverables");

  deliverables
    .command('list')
    .description("List deliverables across all of the partner's projects")
    .option('--status <status>', 'draft, completed or delivered')
    .option('--account <account-id>', 'only deliverables of this account')
    .option('--type <project-type>', 'tax_return, quarterly_estimate, tax_planning or equity_planning')
    .option('--limit <n>', 'page size, 1-100 (default 50; with --all, the size of each page fetched)')
    .option('--offset <n>', 'number of deliverables to skip')
    .option('--all', 'follow pages to the end')
    .option('--max-pages <n>', 'with --all, fail (exit 12) rather than fetch more than this many pages (default 1000)')
    .option('--ndjson', 'one JSON document per line, printed as pages arrive')
    .addHelpText(
      'after',
      `
Examples:
  $ taxprep deliverables list --status delivered
  $ taxprep deliverables list --account 1001 --type tax_return
  $ taxprep deliverables list --all --ndjson | jq -r 'select(.status == "draft") | .project_id'
`,
    )
    .action(commandAction(dispatch, () => import('./list')));

  deliverables
    .command('get')
    .description("Show a project's deliverable with its summary and view link")
    .argument('<project-id>', 'project identifier')
    .option('--open', 'open the view link in the browser')
    .addHelpText('after', '\nExamples:\n  $ taxprep deliverables get 5002\n  $ taxprep deliverables get 5002 --open\n  $ taxprep deliverables get 5002 --json | jq -r .view_link\n')
    .action(commandAction(dispatch, () => import('./get')));
}

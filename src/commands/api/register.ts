import type { Command } from 'commander';
import { commandAction } from '../action';
import type { Dispatch } from '../types';

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerApi(program: Command, dispatch: Dispatch): void {
  program
    .command('api')
    .description('Call any endpoint with the stored key and print the JSON answer (like `gh api`)')
    .argument('<method>', 'HTTP method: GET, POST, ...')
    .argument('<path>', 'path under the base URL, e.g. /accounts/1001 or deliverables')
    .option('-f, --field <key=value>', 'JSON body field; numbers, true, false and null are typed, a.b=... nests (repeatable)', collect)
    .option('--raw-field <key=value>', 'JSON body field sent as a string as written (repeatable)', collect)
    .option('--input <file>', 'JSON body from a file, or - for stdin')
    .option('-q, --query <key=value>', 'query parameter (repeatable)', collect)
    .addHelpText(
      'after',
      `
Examples:
  $ taxprep api GET /accounts/1001
  $ taxprep api GET /deliverables -q status=completed -q limit=10
  $ taxprep api POST /accounts/1001/login-link -f expiry_hours=24 -f purpose=support_request
  $ jq -n '{email:"a@example.com",first_name:"A",last_name:"B"}' | taxprep api POST /accounts --input -
The answer's JSON goes to stdout; an error answer goes to stderr and sets the exit code
(see \`taxprep help exit-codes\`).`,
    )
    .action(commandAction(dispatch, () => import('./api')));
}

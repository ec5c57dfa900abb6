import type { CommandSpec } from '../spec';
import { SERVICE_WITH_KEY } from '../exitCodes';

export const api: CommandSpec = {
  name: 'api',
  description: 'Call any endpoint with the stored key and print the JSON answer (like `gh api`)',
  arguments: [
    { name: '<method>', help: 'HTTP method: GET, POST, ...' },
    { name: '<path>', help: 'path under the base URL, e.g. /accounts/1001 or deliverables' },
  ],
  flags: [
    { flag: '-f, --field <key=value>', help: 'JSON body field; numbers, true, false and null are typed, a.b=... nests', repeatable: true },
    { flag: '--raw-field <key=value>', help: 'JSON body field sent as a string as written', repeatable: true },
    { flag: '--input <file>', help: 'JSON body from a file, or - for stdin', complete: 'files' },
    { flag: '-q, --query <key=value>', help: 'query parameter', repeatable: true },
  ],
  examples: [
    'taxprep api GET /accounts/1001',
    'taxprep api GET /deliverables -q status=completed -q limit=10',
    'taxprep api POST /accounts/1001/login-link -f expiry_hours=24 -f purpose=support_request',
    `jq -n '{email:"a@example.com",first_name:"A",last_name:"B"}' | taxprep api POST /accounts --input -`,
  ],
  notes:
    "The answer's JSON goes to stdout; an error answer goes to stderr and sets the exit code\n" +
    '(see `taxprep help exit-codes`): one line in a pipe, indented and wrapped between words on a terminal.',
  exitCodes: [...SERVICE_WITH_KEY, ['NOT_FOUND', 'the service answered 404'], ['REJECTED', 'the service answered another 4xx than 401, 403, 404 or 429']],
  load: () => import('./api'),
};

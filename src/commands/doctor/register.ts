import type { CommandSpec } from '../spec';
import { SERVICE_WITH_KEY, STATE } from '../exitCodes';

export const doctor: CommandSpec = {
  name: 'doctor',
  description: 'Check a profile against the service: base URL, key, clock, quota, the query parameter names it honours, local files',
  flags: [
    { flag: '--offline', help: 'ask the service nothing; only the local checks' },
    { flag: '--save', help: 'store the query parameter names found in the profile in use (see `profiles show`)' },
  ],
  examples: ['taxprep doctor', 'taxprep doctor --profile acme --save', 'taxprep doctor --offline', "taxprep doctor --json | jq -r '.checks[] | select(.status != \"ok\") | .fix'"],
  notes:
    'At most 15 requests, all reads (writes are never tried), without retries; --verbose shows each.\n' +
    'Each check prints a fix when it is not ok. A warning leaves the exit status 0; the first failure\n' +
    'sets it: 2 a setting (plain http to another host, a profile file others can read, a ledger\n' +
    'directory not writable), 3 the key (none, refused, expired), 7 the service cannot be reached (TLS\n' +
    "included), 8 a redirect or a failing service, 11 the base URL is not the service's API, 13 the shared\n" +
    'state store (with a state URL: reachable, schema version, the role\'s rights, clock beside the database).\n' +
    'It also shows the rules learned from the service for this profile (or shared store) and base URL (upload limit and\n' +
    'types from its refusals, the offset name --all found).',
  exitCodes: [
    ...SERVICE_WITH_KEY,
    ...STATE,
    ['NOT_FOUND', 'the key check was answered 404 by a server that does not keep the contract'],
    ['REJECTED', 'the key check was refused with another 4xx by a server that does not keep the contract'],
  ],
  load: () => import('./doctor'),
};

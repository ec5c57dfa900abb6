import type { CommandSpec } from '../spec';
import { SERVICE_WITH_KEY } from '../exitCodes';

export const whoami: CommandSpec = {
  name: 'whoami',
  description: 'Show the profile, base URL and key (redacted) in effect, where each came from, and whether the service accepts the key',
  flags: [{ flag: '--offline', help: 'do not ask the service; only show the settings' }],
  examples: ['taxprep whoami', 'taxprep whoami --profile staging --json', 'taxprep whoami --offline'],
  notes:
    'The key is checked with one cheap read, GET /deliverables?limit=1: 401 means the key is refused.\n' +
    'Exits 3 when no usable key is configured or the service refuses it, 11 when the base URL is not\n' +
    "the service's API, 7 when the service cannot be reached, so scripts can check before they start.",
  exitCodes: SERVICE_WITH_KEY,
  load: () => import('./whoami'),
};

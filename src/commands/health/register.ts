import type { CommandSpec } from '../spec';
import { SERVICE } from '../exitCodes';

export const health: CommandSpec = {
  name: 'health',
  description: 'Check that the service is up (no API key needed)',
  examples: ['taxprep health', 'taxprep health --json | jq -r .status'],
  jsonFields: ['status', 'timestamp'],
  exitCodes: [...SERVICE.filter((name) => name !== 'SERVER'), ['SERVER', 'the service answered with a status other than "ok", failed (5xx), or answered outside the contract']],
  load: () => import('./health'),
};

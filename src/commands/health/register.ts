import type { CommandSpec } from '../spec';

export const health: CommandSpec = {
  name: 'health',
  description: 'Check that the service is up (no API key needed)',
  examples: ['taxprep health', 'taxprep health --json | jq -r .status'],
  jsonFields: ['status', 'timestamp'],
  load: () => import('./health'),
};

import type { CommandSpec } from '../spec';

export const version: CommandSpec = {
  name: 'version',
  description: 'Print the version, the commit and build date, and what it runs on (-v, -V, --version print the version alone)',
  examples: ['taxprep version', 'taxprep version --json'],
  exitCodes: [],
  load: () => import('./version'),
};

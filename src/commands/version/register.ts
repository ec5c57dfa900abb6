import type { CommandSpec } from '../spec';

export const version: CommandSpec = {
  name: 'version',
  description: 'Print the version (also -v, -V, --version)',
  examples: ['taxprep version'],
  load: () => import('./version'),
};

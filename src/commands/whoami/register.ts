import type { CommandSpec } from '../spec';

export const whoami: CommandSpec = {
  name: 'whoami',
  description: 'Show the profile, base URL and key (redacted) in effect, and where each came from',
  examples: ['taxprep whoami', 'taxprep whoami --profile staging --json'],
  notes: 'Exits 3 when no usable API key is configured, so scripts can check before they start.',
  load: () => import('./whoami'),
};

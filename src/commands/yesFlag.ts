import type { FlagSpec } from './spec';

/** `--yes` of the commands that email people or stop their links from working (src/commands/confirmation.ts asks). */
export const YES_FLAG: FlagSpec = { flag: '-y, --yes', help: 'do not ask before acting (a terminal is asked; a pipe or cron never is)' };

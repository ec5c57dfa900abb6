import type { CommandSpec } from '../commands/spec';

export const HELP_TOPIC_NAMES = ['environment', 'exit-codes', 'formatting', 'flags'] as const;
export type HelpTopic = (typeof HELP_TOPIC_NAMES)[number];

/**
 * `taxprep help [topic | command...]`: a topic (`HELP_TOPIC_NAMES`) or a command's help.
 * Replaces commander's built-in help command, which knows nothing of topics.
 */
export const help: CommandSpec = {
  name: 'help',
  description: `Show help for a command, or a topic: ${HELP_TOPIC_NAMES.join(', ')}`,
  arguments: [{ name: '[topic...]', help: `a topic (${HELP_TOPIC_NAMES.join(', ')}) or a command, e.g. "docs upload"`, complete: 'help' }],
  examples: ['taxprep help exit-codes', 'taxprep help docs upload'],
  exitCodes: [],
  load: () => import('./help'),
};

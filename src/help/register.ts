import type { Command } from 'commander';

/**
 * `taxprep help [topic | command...]`: the topics (environment, exit-codes) or a command's help.
 * Replaces commander's built-in help command, which knows nothing of topics.
 */
export function registerHelp(program: Command): void {
  program
    .command('help')
    .description('Show help for a command, or a topic: environment, exit-codes')
    .argument('[topic...]', 'a topic (environment, exit-codes) or a command, e.g. "docs upload"')
    .action(async (words: string[]) => {
      const { showHelp } = await import('./topics');
      showHelp(program, words);
    });
}

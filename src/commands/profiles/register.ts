import type { Command } from 'commander';
import type { CommandModule, Dispatch } from '../types';

/**
 * `profiles add --base-url` shares its name with the program's global flag, which commander gives
 * to the program wherever it appears: the command reads it from the merged options.
 */
function action(dispatch: Dispatch, load: () => Promise<CommandModule<unknown>>) {
  return function (this: Command): Promise<void> {
    const merged = this.optsWithGlobals();
    return dispatch(load, { args: this.processedArgs, flags: { ...this.opts(), baseUrl: merged.baseUrl } });
  };
}

export function registerProfiles(program: Command, dispatch: Dispatch): void {
  const profiles = program
    .command('profiles')
    .description('Store API keys and service addresses as named profiles (one is the default)');

  profiles
    .command('add')
    .description('Add or replace a profile; the key is read from a hidden prompt, or from stdin')
    .argument('<name>', 'profile name: letters, digits, "-" and "_"')
    .option('--base-url <url>', 'service address including /v1beta (default: the local mock, http://127.0.0.1:4010/v1beta)')
    .option('--api-key-stdin', 'read the key from stdin (the default when stdin is not a terminal)')
    .option('--default', 'make it the default profile (the first profile always is)')
    .addHelpText(
      'after',
      `
Examples:
  $ taxprep profiles add acme --base-url https://partner-api.example.com/v1beta
  $ printf '%s\\n' "$KEY" | taxprep profiles add ci --api-key-stdin --default
The key is never accepted as a flag: flags end up in shell history and process lists.`,
    )
    .action(action(dispatch, () => import('./add')));

  profiles
    .command('list')
    .description('List profiles (keys shown redacted)')
    .addHelpText('after', '\nExamples:\n  $ taxprep profiles list\n  $ taxprep profiles list --json | jq -r \'.profiles[].name\'')
    .action(action(dispatch, () => import('./list')));

  profiles
    .command('use')
    .description('Make a profile the default')
    .argument('<name>', 'profile name')
    .addHelpText('after', '\nExamples:\n  $ taxprep profiles use acme')
    .action(action(dispatch, () => import('./use')));

  profiles
    .command('show')
    .description('Show a profile (the default one when no name is given)')
    .argument('[name]', 'profile name')
    .addHelpText('after', '\nExamples:\n  $ taxprep profiles show\n  $ taxprep profiles show acme --json')
    .action(action(dispatch, () => import('./show')));

  profiles
    .command('remove')
    .description('Remove a profile and its stored key')
    .argument('<name>', 'profile name')
    .addHelpText('after', '\nExamples:\n  $ taxprep profiles remove old-staging')
    .action(action(dispatch, () => import('./remove')));
}

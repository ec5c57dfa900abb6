import type { Command } from 'commander';
import type { CommandModule, Dispatch } from './types';

/**
 * A commander action that hands the command's positional arguments and own flags to `dispatch`,
 * which imports the command's module (`load`) only now that the command runs.
 */
export function commandAction(dispatch: Dispatch, load: () => Promise<CommandModule<unknown>>) {
  return function (this: Command): Promise<void> {
    return dispatch(load, { args: this.processedArgs, flags: this.opts() });
  };
}

import { Command, CommanderError } from 'commander';
import { registerServe } from './commands/serve/register';

declare const TAXPREP_VERSION: string | undefined;

/** Builds the command tree. Command modules are imported only when their command runs. */
export async function main(argv: string[]): Promise<number> {
  let exitCode = 0;
  const program = new Command('taxprep')
    .description('Work with the partner tax-preparation service from a terminal, a script or cron.')
    .version(typeof TAXPREP_VERSION === 'string' ? TAXPREP_VERSION : '0.0.0-dev', '-V, --version')
    .exitOverride();

  registerServe(program, (code) => {
    exitCode = code;
  });

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    throw error;
  }
  return exitCode;
}

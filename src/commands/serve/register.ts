import type { Command } from 'commander';

/** `taxprep serve --mock`: flags only; the mock itself is imported when the command runs. */
export function registerServe(program: Command, setExitCode: (code: number) => void): void {
  program
    .command('serve')
    .description('Run a local implementation of the whole service for dry runs')
    .option('--mock', 'serve the built-in mock (the only server there is)')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 picks a free one)', '4010')
    .action(async (options: Record<string, unknown>) => {
      const { runServe } = await import('./serve');
      setExitCode(await runServe({ stdout: process.stdout, stderr: process.stderr }, options));
    });
}

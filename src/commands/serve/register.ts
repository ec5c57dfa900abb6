import type { Command } from 'commander';
import type { Dispatch } from '../types';

/** `taxprep serve --mock`: flags only; the command and the mock load when it runs. */
export function registerServe(program: Command, dispatch: Dispatch): void {
  program
    .command('serve')
    .description('Run a local implementation of the whole service, for dry runs and scripts')
    .option('--mock', 'serve the built-in mock (required: the mock is the only server there is)')
    .option('--host <host>', 'address to bind; loopback unless you ask otherwise (default: 127.0.0.1)')
    .option('--port <port>', 'port to listen on; 0 picks a free one (default: 4010)')
    .option('--seed <file>', 'start from this JSON fixture instead of the demo data')
    .option('--data-dir <dir>', 'keep state and uploads in this directory across restarts (default: in memory)')
    .option('--rate-limit <windows>', 'per-key limits such as 100/60s,10000/1d or 30/m, or off; up to 5 windows of 1s to 366d (default: 100/60s,10000/1d)')
    .option('--max-upload-size <size>', 'largest document upload, such as 100mb or 512kb (default: 100mb)')
    .option('--latency <ms>', 'add this many milliseconds to every contract request (default: 0)')
    .option('--error-rate <fraction>', 'answer this fraction (0-1) of contract requests with 503 (default: 0)')
    .option('--drop-rate <fraction>', 'drop the connection of this fraction (0-1) of contract requests (default: 0)')
    .option('--openapi', 'print the OpenAPI 3.1 document of the service (as served at {base_url}/openapi.json) and exit')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  taxprep serve --mock',
        '  taxprep serve --mock --port 0 --json            # one JSON line: base_url, app_url, keys',
        '  taxprep serve --mock --seed fixture.json --data-dir ./mock-data',
        '  taxprep serve --mock --rate-limit 5/10s --error-rate 0.1 --latency 200',
        '  taxprep serve --openapi > openapi.json                # the contract for your own tools',
      ].join('\n'),
    )
    .action(async (flags: Record<string, unknown>) => {
      await dispatch(() => import('./serve'), { args: [], flags });
    });
}

import type { CommandSpec } from '../spec';

/** `taxprep serve --mock`: the flags' values are checked by the command itself (src/commands/serve/serve.ts). */
export const serve: CommandSpec = {
  name: 'serve',
  description: 'Run a local implementation of the whole service, for dry runs and scripts',
  flags: [
    { flag: '--mock', help: 'serve the built-in mock (the only server there is)', required: true },
    { flag: '--host <host>', help: 'address to bind; loopback unless you ask otherwise', default: '127.0.0.1' },
    { flag: '--port <port>', help: 'port to listen on; 0 picks a free one', default: '4010' },
    { flag: '--seed <file>', help: 'start from this JSON fixture instead of the demo data', complete: 'files' },
    { flag: '--data-dir <dir>', help: 'keep state and uploads in this directory across restarts', default: 'in memory', complete: 'files' },
    { flag: '--rate-limit <windows>', help: 'per-key limits such as 100/60s,10000/1d or 30/m, or off; up to 5 windows of 1s to 366d', default: '100/60s,10000/1d' },
    { flag: '--max-upload-size <size>', help: 'largest document upload, such as 100mb or 512kb', default: '100mb' },
    { flag: '--latency <ms>', field: 'latency_ms', help: 'add this many milliseconds to every contract request', default: '0' },
    { flag: '--error-rate <fraction>', field: 'error_rate', help: 'answer this fraction (0-1) of contract requests with 503', default: '0' },
    { flag: '--drop-rate <fraction>', field: 'drop_rate', help: 'drop the connection of this fraction (0-1) of contract requests', default: '0' },
    {
      flag: '--simulate [seed]',
      help: 'play the preparer: projects move along as the virtual clock advances, the same for the same seed (0-999999999)',
      default: 'off; 1 when given alone',
    },
    { flag: '--quiet', help: 'print no line per request (by default one a request: time, method, status, milliseconds, key redacted, path)' },
    { flag: '--openapi', help: 'print the OpenAPI 3.1 document of the service (as served at {base_url}/openapi.json) and exit' },
  ],
  examples: [
    'taxprep serve --mock',
    'taxprep serve --mock --port 0 --json            # one JSON line: base_url, app_url, keys',
    'taxprep serve --mock --seed fixture.json --data-dir ./mock-data',
    'taxprep serve --mock --rate-limit 5/10s --error-rate 0.1 --latency 200',
    'taxprep serve --mock --simulate 7               # projects move as /_mock/clock advances',
    'taxprep serve --openapi > openapi.json                # the contract for your own tools',
  ],
  exitCodes: [],
  load: () => import('./serve'),
};

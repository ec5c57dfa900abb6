// Throughput of the mock's authenticated `GET /accounts/{id}` at 50 connections, against a bare
// `node:http` server answering the same body, measured in the same run (target: at least 0.85 of
// it). The mock runs as users run it: the built CLI, `serve --mock --rate-limit off`; the same with
// `--simulate` is measured alongside (its per-request check of the virtual clock; no target).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const BIN = fileURLToPath(new URL('../bin/taxprep.js', import.meta.url));
const CONNECTIONS = 50;
const SECONDS_PER_ROUND = 3;
const ROUNDS = 5;
const TARGET_RATIO = 0.85;

async function startMock(extraArgs = []) {
  const child = spawn(process.execPath, [BIN, 'serve', '--mock', '--port', '0', '--json', '--rate-limit', 'off', ...extraArgs], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buffered = '';
  for await (const chunk of child.stdout) {
    buffered += chunk;
    if (buffered.includes('\n')) break;
  }
  const started = JSON.parse(buffered.slice(0, buffered.indexOf('\n')));
  const key = started.keys.find((entry) => entry.partner_id === 1 && entry.expires_at === null && entry.permissions.includes('accounts:read')).key;
  return { child, baseUrl: started.base_url, key };
}

/**
 * A bare server answering every request with the mock's own body. It runs in a child process, as
 * the mock does, so that neither shares its CPU time with autocannon.
 */
const BASELINE_SERVER = `
  const body = process.env.BODY;
  require('node:http')
    .createServer((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      response.end(body);
    })
    .listen(0, '127.0.0.1', function () { console.log(this.address().port); });
`;

async function startBaseline(body) {
  const child = spawn(process.execPath, ['-e', BASELINE_SERVER], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, BODY: body } });
  const [port] = await once(child.stdout, 'data');
  return { child, url: `http://127.0.0.1:${String(port).trim()}` };
}

async function measure(url, key) {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS_PER_ROUND,
    headers: { authorization: `Bearer ${key}` },
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result.requests.average;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The URL of a new account's `GET /accounts/{id}` on a mock. */
async function accountUrl(mock) {
  const created = await fetch(`${mock.baseUrl}/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${mock.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.com', first_name: 'Bench', last_name: 'Mark' }),
  });
  return `${mock.baseUrl}/accounts/${(await created.json()).id}`;
}

const mock = await startMock();
const simulating = await startMock(['--simulate', '1']);
try {
  const mockUrl = await accountUrl(mock);
  const simulatingUrl = await accountUrl(simulating);
  const body = await (await fetch(mockUrl, { headers: { authorization: `Bearer ${mock.key}` } })).text();
  const baseline = await startBaseline(body);
  try {
    // A first, unmeasured round warms up the JIT of each; then alternate them so that a noisy
    // moment on the machine hits them alike.
    await measure(baseline.url, mock.key);
    await measure(mockUrl, mock.key);
    await measure(simulatingUrl, simulating.key);
    const mockRates = [];
    const simulatingRates = [];
    const baselineRates = [];
    const ratios = [];
    const simulatingRatios = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      baselineRates.push(await measure(baseline.url, mock.key));
      mockRates.push(await measure(mockUrl, mock.key));
      simulatingRates.push(await measure(simulatingUrl, simulating.key));
      ratios.push(mockRates.at(-1) / baselineRates.at(-1));
      simulatingRatios.push(simulatingRates.at(-1) / baselineRates.at(-1));
    }
    // The median of each round's ratio: a busy moment on a shared machine skews one round, not the result.
    const ratio = median(ratios);
    const ofRounds = (values) => `median of round ratios ${values.map((each) => each.toFixed(2)).join(', ')}`;
    const rows = [
      ['server', 'requests/s (median of rounds)'],
      ['bare node:http', Math.round(median(baselineRates))],
      ['taxprep mock', Math.round(median(mockRates))],
      ['mock --simulate', Math.round(median(simulatingRates))],
      ['ratio', `${ratio.toFixed(2)} (${ofRounds(ratios)}; target >= ${TARGET_RATIO})`],
      ['ratio simulate', `${median(simulatingRatios).toFixed(2)} (${ofRounds(simulatingRatios)}; no target)`],
    ];
    console.log(`GET /accounts/{id}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS_PER_ROUND}s each`);
    for (const [name, value] of rows) console.log(`${String(name).padEnd(16)} ${value}`);
    if (ratio < TARGET_RATIO) process.exitCode = 1;
  } finally {
    baseline.child.kill('SIGTERM');
  }
} finally {
  for (const each of [mock, simulating]) {
    each.child.kill('SIGTERM');
    await once(each.child, 'exit');
  }
}

// Throughput of the mock's authenticated `GET /accounts/{id}` at 50 connections, against a bare
// `node:http` server answering the same body, measured in the same run (target: at least 0.85 of
// it). The mock runs as users run it: the built CLI, `serve --mock --rate-limit off` with `--json`
// (no line per request). Measured alongside, with no target: the same printing a line per request
// to a pipe the bench reads (the cost of those lines), and with `--simulate` (its per-request check
// of the virtual clock).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const BIN = fileURLToPath(new URL('../bin/taxprep.cjs', import.meta.url));
const CONNECTIONS = 50;
const SECONDS_PER_ROUND = 3;
const ROUNDS = 5;
const TARGET_RATIO = 0.85;

/** The mock printing a line per request: its start-up text read for the URL and key, then every line drained. */
async function startPrintingMock() {
  const child = spawn(process.execPath, [BIN, 'serve', '--mock', '--port', '0', '--rate-limit', 'off'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let buffered = '';
  const started = new Promise((resolve) => {
    child.stdout.on('data', (chunk) => {
      if (buffered === undefined) return;
      buffered += chunk;
      const baseUrl = /Base URL: +(\S+)/.exec(buffered)?.[1];
      const key = /^ {2}(tpk_\S+) +.*, partner 1\n +all permissions$/m.exec(buffered)?.[1];
      if (baseUrl !== undefined && key !== undefined && buffered.includes('Requests are listed below')) {
        buffered = undefined;
        resolve({ child, baseUrl, key });
      }
    });
  });
  return started;
}

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
const printing = await startPrintingMock();
const simulating = await startMock(['--simulate', '1']);
const mocks = [mock, printing, simulating];
try {
  const mockUrl = await accountUrl(mock);
  const body = await (await fetch(mockUrl, { headers: { authorization: `Bearer ${mock.key}` } })).text();
  const variants = [
    { name: 'taxprep mock', mock, url: mockUrl, target: `target >= ${TARGET_RATIO}` },
    { name: 'a line per request', mock: printing, url: await accountUrl(printing), target: 'no target' },
    { name: 'mock --simulate', mock: simulating, url: await accountUrl(simulating), target: 'no target' },
  ];
  const baseline = await startBaseline(body);
  try {
    // A first, unmeasured round warms up the JIT of each; then alternate them so that a noisy
    // moment on the machine hits them alike.
    await measure(baseline.url, mock.key);
    for (const variant of variants) await measure(variant.url, variant.mock.key);
    const baselineRates = [];
    for (const variant of variants) Object.assign(variant, { rates: [], ratios: [] });
    for (let round = 0; round < ROUNDS; round += 1) {
      baselineRates.push(await measure(baseline.url, mock.key));
      for (const variant of variants) {
        variant.rates.push(await measure(variant.url, variant.mock.key));
        variant.ratios.push(variant.rates.at(-1) / baselineRates.at(-1));
      }
    }
    // The median of each round's ratio: a busy moment on a shared machine skews one round, not the result.
    const ofRounds = (values) => `median of round ratios ${values.map((each) => each.toFixed(2)).join(', ')}`;
    const rows = [
      ['server', 'requests/s (median of rounds)'],
      ['bare node:http', Math.round(median(baselineRates))],
      ...variants.map((variant) => [variant.name, Math.round(median(variant.rates))]),
      ...variants.map((variant) => [`ratio, ${variant.name}`, `${median(variant.ratios).toFixed(2)} (${ofRounds(variant.ratios)}; ${variant.target})`]),
    ];
    console.log(`GET /accounts/{id}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS_PER_ROUND}s each`);
    for (const [name, value] of rows) console.log(`${String(name).padEnd(32)} ${value}`);
    if (median(variants[0].ratios) < TARGET_RATIO) process.exitCode = 1;
  } finally {
    baseline.child.kill('SIGTERM');
  }
} finally {
  for (const each of mocks) {
    each.child.kill('SIGTERM');
    await once(each.child, 'exit');
  }
}

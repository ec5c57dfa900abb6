// Batch login links, in one run against `taxprep serve --mock` seeded with 1,000 clients:
//  1. limits off: `taxprep login-link --from ids --json` for 1,000 links (links a second), beside a
//     baseline of the same 1,000 POSTs sent straight from this process with the same concurrency;
//  2. paced: 500 links with the mock limiting the key to 100 requests per 2-second window; the
//     achieved rate as a fraction of the permitted one (target at least 0.95), with no item failing,
//     the number of 429 answers the service had to give and the rate windows the batch spanned.
// Wall-clock times include the CLI's start-up; the ledger is written (fsync'd) as in real use.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ACCOUNTS = 1000;
const PACED_LINKS = 500;
const PACED_LIMIT = 100;
const PACED_WINDOW_SECONDS = 2;
const CONCURRENCY = 4;
const TARGET_FRACTION = 0.95;
const KEY = 'tpk_benchLoginLinksKey0000000001';
const FIRST_ID = 10_001;
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const bin = join(repoRoot, 'bin', 'taxprep.js');

function fixture() {
  return {
    partners: [{ id: 1, name: 'Bench Partners', api_keys: [{ key: KEY, label: 'bench' }] }],
    accounts: Array.from({ length: ACCOUNTS }, (_, index) => ({
      id: FIRST_ID + index,
      partner_id: 1,
      email: `client.${FIRST_ID + index}@example.com`,
      first_name: 'Bench',
      last_name: 'Client',
    })),
  };
}

async function startMock(seedPath) {
  const child = spawn(process.execPath, [bin, 'serve', '--mock', '--port', '0', '--json', '--seed', seedPath, '--rate-limit', 'off'], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = await once(createInterface({ input: child.stdout }), 'line');
  const started = JSON.parse(line);
  return { child, baseUrl: started.base_url, appUrl: started.app_url };
}

async function control(mock, method, path, body) {
  const response = await fetch(`${mock.appUrl}/_mock${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} /_mock${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** Runs the CLI; resolves with its exit code, NDJSON lines and wall time. */
async function runBatch(mock, ids, workDir, name) {
  const idsPath = join(workDir, `${name}.txt`);
  writeFileSync(idsPath, `${ids.join('\n')}\n`);
  const started = performance.now();
  const child = spawn(process.execPath, [bin, '--json', 'login-link', '--from', idsPath, '--concurrency', String(CONCURRENCY), '--ledger', join(workDir, `${name}.ndjson`)], {
    env: { PATH: process.env.PATH, HOME: workDir, TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const [exitCode] = await once(child, 'exit');
  const seconds = (performance.now() - started) / 1000;
  const lines = stdout.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
  return { exitCode, seconds, failed: lines.filter((line) => 'error' in line).length, issued: lines.filter((line) => 'login_link' in line).length, stderr };
}

/** The same POSTs straight from this process, `CONCURRENCY` at a time: the ceiling a client can reach. */
async function baseline(mock, ids) {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++];
      const response = await fetch(`${mock.baseUrl}/accounts/${id}/login-link`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: '{}',
      });
      if (response.status !== 201) throw new Error(`baseline POST for ${id}: ${response.status}`);
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return (performance.now() - started) / 1000;
}

const workDir = mkdtempSync(join(tmpdir(), 'taxprep-bench-links-'));
const seedPath = join(workDir, 'seed.json');
writeFileSync(seedPath, JSON.stringify(fixture()));
const mock = await startMock(seedPath);
try {
  const ids = Array.from({ length: ACCOUNTS }, (_, index) => FIRST_ID + index);

  const baselineSeconds = await baseline(mock, ids);
  await control(mock, 'POST', '/reset');
  const unpaced = await runBatch(mock, ids, workDir, 'unpaced');
  if (unpaced.exitCode !== 0) throw new Error(`unpaced batch exited ${unpaced.exitCode}: ${unpaced.stderr}`);

  await control(mock, 'POST', '/reset');
  await control(mock, 'PUT', '/rate-limits', { windows: [{ limit: PACED_LIMIT, window_seconds: PACED_WINDOW_SECONDS }] });
  const paced = await runBatch(mock, ids.slice(0, PACED_LINKS), workDir, 'paced');
  const { requests } = await control(mock, 'GET', '/requests');
  const refused = requests.filter((entry) => entry.status === 429).length;
  // Fixed windows: the fewest a batch can span is ceil(links / limit); a partial first window can
  // push the plain rate above the permitted one, so the windows spanned are shown too.
  const windowsUsed = new Set(requests.map((entry) => Math.floor(Date.parse(entry.at) / (PACED_WINDOW_SECONDS * 1000)))).size;
  const windowsMinimum = Math.ceil(PACED_LINKS / PACED_LIMIT);

  const permittedRate = PACED_LIMIT / PACED_WINDOW_SECONDS;
  const achievedRate = paced.issued / paced.seconds;
  const fraction = achievedRate / permittedRate;
  const rows = [
    ['baseline: 1,000 POSTs from this process', `${(ACCOUNTS / baselineSeconds).toFixed(0)} links/s`, `${baselineSeconds.toFixed(2)} s`],
    ['taxprep login-link, 1,000 links, limits off', `${(unpaced.issued / unpaced.seconds).toFixed(0)} links/s`, `${unpaced.seconds.toFixed(2)} s (${(baselineSeconds / unpaced.seconds).toFixed(2)}x baseline speed)`],
    [
      `taxprep login-link, ${PACED_LINKS} links, ${PACED_LIMIT}/${PACED_WINDOW_SECONDS}s`,
      `${achievedRate.toFixed(1)} links/s of ${permittedRate} permitted = ${fraction.toFixed(2)}`,
      `${paced.seconds.toFixed(2)} s, ${windowsUsed} windows (fewest possible ${windowsMinimum}), ${paced.failed} failed, ${refused} answered 429`,
    ],
  ];
  for (const row of rows) process.stdout.write(`${row[0].padEnd(48)} ${row[1].padEnd(44)} ${row[2]}\n`);
  const ok = paced.exitCode === 0 && paced.failed === 0 && paced.issued === PACED_LINKS && fraction >= TARGET_FRACTION;
  process.stdout.write(`paced batch: ${ok ? 'meets' : 'MISSES'} the target (fraction >= ${TARGET_FRACTION}, no item failing)\n`);
  process.exitCode = ok ? 0 : 1;
} finally {
  mock.child.kill('SIGTERM');
  if (mock.child.exitCode === null) await once(mock.child, 'exit');
  rmSync(workDir, { recursive: true, force: true });
}

// Following the work over 300 accounts, against `taxprep serve --mock` seeded with 300 clients of
// two projects each (one waiting on the client with an item, one in progress with a draft deliverable):
//  1. `taxprep watch --budget 20/min` (a `--once` baseline run, then a long watch for 70 s, bounded):
//     the most requests the mock's request log shows in any 60 s, target at most 20, across both runs;
//  2. `taxprep status --accounts` over the 300 accounts, limits off: how many accounts it says it
//     covered and in what time, beside a baseline of the same GETs sent straight from this process
//     four at a time (the ceiling a client can reach).
// The request log's times are the mock's virtual clock, which runs at the real clock's pace.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ACCOUNTS = 300;
const FIRST_ID = 20_001;
const KEY = 'tpk_benchFollowKey00000000000001';
const BUDGET = 20;
const WINDOW_MS = 60_000;
const WATCH_MS = Number(process.argv[2] ?? 70_000);
const bin = fileURLToPath(new URL('../bin/taxprep.cjs', import.meta.url));

function fixture() {
  const accounts = [];
  const documents = [];
  const projects = [];
  for (let index = 0; index < ACCOUNTS; index += 1) {
    const id = FIRST_ID + index;
    accounts.push({ id, partner_id: 1, email: `client.${id}@example.com`, first_name: 'Bench', last_name: 'Client' });
    documents.push({ id: 100_000 + index, account_id: id, filename: 'estimate.txt', tax_year: 2025 });
    projects.push(
      { id: 200_000 + index * 2, account_id: id, type: 'tax_return', tax_year: 2025, status: 'waiting_on_client', progress_percentage: 20, outstanding_items: [{ type: 'missing_document', description: 'W-2', priority: 'high' }] },
      {
        id: 200_001 + index * 2, account_id: id, type: 'quarterly_estimate', tax_year: 2025, status: 'in_progress', progress_percentage: 50,
        deliverable: { id: 300_000 + index, document_id: 100_000 + index, title: 'Q3 estimate', status: 'draft' },
      },
    );
  }
  return { partners: [{ id: 1, name: 'Bench Partners', api_keys: [{ key: KEY, label: 'bench' }] }], accounts, documents, projects };
}

async function startMock(seedPath) {
  const child = spawn(process.execPath, [bin, 'serve', '--mock', '--port', '0', '--json', '--seed', seedPath, '--rate-limit', 'off'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = await once(createInterface({ input: child.stdout }), 'line');
  const started = JSON.parse(line);
  return { child, baseUrl: started.base_url, appUrl: started.app_url };
}

async function requestLog(mock, method = 'GET') {
  const response = await fetch(`${mock.appUrl}/_mock/requests`, { method });
  return method === 'GET' ? (await response.json()).requests ?? [] : [];
}

function taxprep(args, env, { killAfterMs } = {}) {
  const child = spawn(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGINT'), killAfterMs);
  return once(child, 'exit').then(([exitCode]) => {
    clearTimeout(timer);
    return { exitCode, stdout, stderr };
  });
}

/** The most entries of `times` (ms) inside any window of `windowMs`. */
function mostInAnyWindow(times, windowMs) {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let start = 0, end = 0; end < sorted.length; end += 1) {
    while (sorted[end] - sorted[start] >= windowMs) start += 1;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

const work = mkdtempSync(join(tmpdir(), 'taxprep-bench-follow-'));
const seedPath = join(work, 'seed.json');
writeFileSync(seedPath, JSON.stringify(fixture()));
const idsPath = join(work, 'clients.txt');
writeFileSync(idsPath, `${Array.from({ length: ACCOUNTS }, (_, index) => FIRST_ID + index).join('\n')}\n`);
const mock = await startMock(seedPath);
const env = { HOME: work, XDG_STATE_HOME: join(work, 'state'), TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: KEY };
let failed = false;
try {
  // 1. The budget, over a cron-like --once run and a long watch started right after it.
  await requestLog(mock, 'DELETE');
  const first = await taxprep(['watch', '--once', '--budget', `${BUDGET}/min`, '--accounts', idsPath], env);
  const long = await taxprep(['watch', '--budget', `${BUDGET}/min`, '--accounts', idsPath], env, { killAfterMs: WATCH_MS });
  const log = await requestLog(mock);
  const times = log.map((entry) => Date.parse(entry.at));
  const most = mostInAnyWindow(times, WINDOW_MS);
  const spanS = times.length > 1 ? (Math.max(...times) - Math.min(...times)) / 1000 : 0;
  const freshness = long.stderr.split('\n').filter((line) => line.startsWith('watch: this pass')).at(-1) ?? '(no freshness line)';
  console.log(`watch --budget ${BUDGET}/min over ${ACCOUNTS} accounts: ${times.length} requests in ${spanS.toFixed(1)} s (a --once run, then ${WATCH_MS / 1000} s of watch)`);
  console.log(`  most in any 60 s: ${most} (target at most ${BUDGET}); exits ${first.exitCode} and ${long.exitCode} (130: stopped by SIGINT)`);
  console.log(`  last freshness line: ${freshness}`);
  if (most > BUDGET || first.exitCode !== 0 || long.exitCode !== 130) failed = true;

  // 2. status over the 300 accounts, beside the same GETs sent straight from here.
  await requestLog(mock, 'DELETE');
  const started = performance.now();
  const status = await taxprep(['status', '--json', '--accounts', idsPath], env);
  const statusMs = performance.now() - started;
  const document = JSON.parse(status.stdout);
  const sent = await requestLog(mock);
  const paths = sent.map((entry) => entry.path.replace(/^\/v1beta/, ''));
  const baselineStarted = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < paths.length) {
        const path = paths[next++];
        const response = await fetch(`${mock.baseUrl}${path}`, { headers: { authorization: `Bearer ${KEY}` } });
        await response.arrayBuffer();
      }
    }),
  );
  const baselineMs = performance.now() - baselineStarted;
  console.log(`status over ${ACCOUNTS} accounts (limits off): covered ${document.accounts.looked_at} accounts, ${paths.length} requests, ${(statusMs / 1000).toFixed(2)} s wall (took_ms ${document.took_ms})`);
  console.log(`  accounts: ${JSON.stringify(document.accounts)}`);
  console.log(`  baseline, the same ${paths.length} GETs from this process 4 at a time: ${(baselineMs / 1000).toFixed(2)} s; ratio status/baseline ${(statusMs / baselineMs).toFixed(2)} (status includes the CLI's start-up)`);
  if (document.accounts.looked_at !== ACCOUNTS || status.exitCode !== 0) failed = true;
} finally {
  mock.child.kill('SIGTERM');
  await once(mock.child, 'exit');
  rmSync(work, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;

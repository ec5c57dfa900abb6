// The shared state store (issue 34, docs/team.md) beside the file ledger, in one run:
//  1. paced: 1,000 login links at the key's limit (the mock's, set to 200 per 5 s) with the ledger in
//     PostgreSQL and in a file, three rounds each in turn: the span from the first admitted POST to
//     the last (the mock's request log) as a ratio to the ideal (every request the moment the limit
//     admits it); target a median of at most 1.02 for the store, as for files. What is left above
//     1.00 is mostly the last window's 200 requests, sent at --concurrency 4, not all at once;
//  2. unpaced (limits off): the same 1,000 links, wall time, and so the store's cost per item
//     beside the file's (each intent and outcome a committed insert instead of an fdatasync'd line);
//  3. start-up: `taxprep --help` and `taxprep accounts get` with a state URL set and without,
//     which must not differ (commands that do not touch state never load the database client).
// Needs a PostgreSQL: TAXPREP_TEST_POSTGRES_URL, or the bench runs itself under .ci/with-postgres.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { control, idealSpanMs } from './pacing.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
if (process.env.TAXPREP_TEST_POSTGRES_URL === undefined) {
  execFileSync(join(repoRoot, '.ci', 'with-postgres'), [process.execPath, fileURLToPath(import.meta.url)], { stdio: 'inherit' });
  process.exit(0);
}

const LINKS = 1000;
const LIMIT = 200;
const WINDOW_MS = 5000;
const CONCURRENCY = 4;
const TARGET_RATIO = 1.02;
const STARTUP_RUNS = 15;
/** Paced rounds of each backend, in turn: a ratio this close to its target is read as a median, beside its spread. */
const PACED_ROUNDS = 3;
const KEY = 'tpk_benchSharedStoreKey000000001';
const FIRST_ID = 10_001;
const bin = join(repoRoot, 'bin', 'taxprep.cjs');
const workDir = mkdtempSync(join(tmpdir(), 'taxprep-bench-store-'));

const seed = join(workDir, 'seed.json');
writeFileSync(
  seed,
  JSON.stringify({
    partners: [{ id: 1, name: 'Bench Partners', api_keys: [{ key: KEY, label: 'bench' }] }],
    accounts: Array.from({ length: LINKS }, (_, index) => ({ id: FIRST_ID + index, partner_id: 1, email: `client.${FIRST_ID + index}@example.com`, first_name: 'Bench', last_name: 'Client' })),
  }),
);
const ids = join(workDir, 'ids.txt');
writeFileSync(ids, `${Array.from({ length: LINKS }, (_, index) => FIRST_ID + index).join('\n')}\n`);

const mockProcess = spawn(process.execPath, [bin, 'serve', '--mock', '--port', '0', '--json', '--seed', seed, '--rate-limit', 'off'], { stdio: ['ignore', 'pipe', 'inherit'] });
const [line] = await once(createInterface({ input: mockProcess.stdout }), 'line');
const mock = JSON.parse(line);

/** A database of its own for each run of the store: nothing of an earlier run is read. */
const admin = new pg.Client({ connectionString: process.env.TAXPREP_TEST_POSTGRES_URL });
await admin.connect();
const databases = [];
async function freshStore() {
  const name = `taxprep_bench_${process.pid}_${databases.length + 1}`;
  databases.push(name);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(process.env.TAXPREP_TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

function environment(home, stateUrl) {
  return { PATH: process.env.PATH, HOME: home, PGPASSFILE: process.env.PGPASSFILE ?? '', TAXPREP_BASE_URL: mock.base_url, TAXPREP_API_KEY: KEY, ...(stateUrl === undefined ? {} : { TAXPREP_STATE_URL: stateUrl }) };
}

async function run(args, env) {
  const started = performance.now();
  const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const [exitCode] = await once(child, 'exit');
  if (exitCode !== 0) throw new Error(`taxprep ${args.join(' ')} exited ${exitCode}: ${stderr}`);
  return (performance.now() - started) / 1000;
}

/** 1,000 links in a fresh home (and store): wall seconds, and with a limit the span of admitted POSTs. */
async function batch(backend, paced) {
  const home = mkdtempSync(join(workDir, `${backend}-`));
  const stateUrl = backend === 'store' ? await freshStore() : undefined;
  await control(mock.app_url, 'POST', '/reset');
  await control(mock.app_url, 'PUT', '/rate-limits', { windows: paced ? [{ limit: LIMIT, window_seconds: WINDOW_MS / 1000 }] : [] });
  if (stateUrl !== undefined) await run(['state', 'migrate'], environment(home, stateUrl));
  const seconds = await run(['--json', 'login-link', '--from', ids, '--concurrency', String(CONCURRENCY)], environment(home, stateUrl));
  const { requests } = await control(mock.app_url, 'GET', '/requests');
  const admitted = requests.filter((request) => request.status === 201).map((request) => Date.parse(request.at));
  const refused = requests.filter((request) => request.status === 429).length;
  if (admitted.length !== LINKS) throw new Error(`${backend}: ${admitted.length} links made, not ${LINKS}`);
  return { seconds, spanMs: admitted.at(-1) - admitted[0], refused };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Median start-up of `args` without and with a state URL, the two run in turn so that load on the machine falls on both alike. */
async function startup(args, stateUrl) {
  const homes = [mkdtempSync(join(workDir, 'startup-')), mkdtempSync(join(workDir, 'startup-'))];
  const envs = [environment(homes[0], undefined), environment(homes[1], stateUrl)];
  for (const env of envs) await run(args, env).catch(() => undefined);
  const times = [[], []];
  for (let index = 0; index < STARTUP_RUNS; index += 1) {
    for (const which of [0, 1]) {
      const started = performance.now();
      const child = spawn(process.execPath, [bin, ...args], { env: envs[which], stdio: 'ignore' });
      await once(child, 'exit');
      times[which].push(performance.now() - started);
    }
  }
  return times.map(median);
}

try {
  const ideal = idealSpanMs(LINKS, LIMIT, WINDOW_MS);
  const paced = { files: [], store: [] };
  for (let round = 0; round < PACED_ROUNDS; round += 1) for (const backend of ['files', 'store']) paced[backend].push(await batch(backend, true));
  const pacedRow = (backend) => {
    const ratios = paced[backend].map((result) => result.spanMs / ideal).sort((a, b) => a - b);
    const spanMs = median(paced[backend].map((result) => result.spanMs));
    const refused = paced[backend].reduce((sum, result) => sum + result.refused, 0);
    return [`paced, ${backend}: span / ideal (median of ${PACED_ROUNDS})`, `${(spanMs / 1000).toFixed(2)} s / ${(ideal / 1000).toFixed(2)} s`, spanMs / ideal, `${ratios[0].toFixed(3)}-${ratios.at(-1).toFixed(3)}; ${refused} x 429`];
  };
  const pacedFiles = pacedRow('files');
  const pacedStore = pacedRow('store');
  const freeFiles = await batch('files', false);
  const freeStore = await batch('store', false);
  const perItemMs = (result) => (result.seconds * 1000) / LINKS;
  const storeUrl = await freshStore();
  const help = await startup(['--help'], storeUrl);
  const get = await startup(['accounts', 'get', String(FIRST_ID)], storeUrl);

  const rows = [
    [...pacedFiles.slice(0, 2), pacedFiles[2].toFixed(3), pacedFiles[3]],
    [...pacedStore.slice(0, 2), pacedStore[2].toFixed(3), pacedStore[3]],
    ['unpaced, per link: store / files', `${perItemMs(freeStore).toFixed(2)} ms / ${perItemMs(freeFiles).toFixed(2)} ms`, (freeStore.seconds / freeFiles.seconds).toFixed(3), `+${(perItemMs(freeStore) - perItemMs(freeFiles)).toFixed(2)} ms a link`],
    ['--help: with state URL / without', `${help[1].toFixed(1)} ms / ${help[0].toFixed(1)} ms`, (help[1] / help[0]).toFixed(3), 'median of 15'],
    ['accounts get: with / without', `${get[1].toFixed(1)} ms / ${get[0].toFixed(1)} ms`, (get[1] / get[0]).toFixed(3), 'median of 15'],
  ];
  console.log('| measure | values | ratio | note |\n|---|---|---|---|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
  const pacedOk = pacedStore[2] <= TARGET_RATIO;
  console.log(`\nshared store paced within ${TARGET_RATIO}x of the ideal (median): ${pacedOk ? 'yes' : 'NO'}; store / files: ${(pacedStore[2] / pacedFiles[2]).toFixed(3)}`);
  if (!pacedOk) process.exitCode = 1;
} finally {
  mockProcess.kill('SIGTERM');
  for (const name of databases) await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
  await admin.end();
  rmSync(workDir, { recursive: true, force: true });
}

// The mock at a large partner's scale (issue 27): median latency of five requests at 1,000, 10,000
// and 100,000 accounts, with --data-dir and in memory, beside a bare node:http server in the same
// run; each at 100,000 as a ratio to the same at 1,000 (goal: at most 1.5x), and the start-up time
// and peak RSS of `serve --mock --data-dir` holding 100,000 accounts and 1,000,000 documents (goal:
// ready in under 3 s, under 1 GB).
//
// With --data-dir, each size is a directory made by bench/mock-scale.generate.js (the store's own
// snapshot writer; 10 documents, a project and a login link per account, a deliverable per ten
// accounts), so 100,000 accounts hold 1,000,000 documents. In memory there is no way to load a
// saved state, so the accounts are created through the API (8 clients), one mock growing from one
// size to the next; its documents are the demo fixture's and the uploads below.
//
// Requests, 8 concurrent clients, SAMPLES each after WARM_UP unmeasured ones and once the mock is
// idle (start-up sweeps the blob directory in the background): create account, upload (1 KB), list documents (page
// of 50), project status, deliverables list (page of 50). The baseline answers a small JSON body.
// Start-up is also given in CPU time (user + system, from /proc), which a loaded machine inflates
// less than the wall clock. Runs `serve --mock --rate-limit off --json` from dist/ (`npm run bench` builds first). A few
// minutes at most; generating the directories (a million file links) takes most of it.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const SIZES = [1_000, 10_000, 100_000];
const DOCUMENTS_PER_ACCOUNT = 10;
const CLIENTS = 8;
const SAMPLES = 400;
const WARM_UP = 100;
const GOAL_RATIO = 1.5;
const GOAL_STARTUP_MS = 3000;
const GOAL_RSS_MB = 1024;
const KEY = 'tpk_mockAcmeLiveKey0000000000001';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'taxprep.cjs');
// Inside the tree, so that the bundle's packages resolve from node_modules.
const outfile = `${root}node_modules/.cache/taxprep-bench/mock-scale.generate.mjs`;
mkdirSync(`${root}node_modules/.cache/taxprep-bench`, { recursive: true });
await build({ entryPoints: [`${root}bench/mock-scale.generate.js`], bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', outfile, logLevel: 'warning' });
const { generateDataDir } = await import(pathToFileURL(outfile).href);

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

/** Runs `request(i)` SAMPLES times from CLIENTS loops; the median latency in ms. */
async function measure(request, samples = SAMPLES) {
  let next = 0;
  const latencies = [];
  const client = async () => {
    for (let index = next++; index < samples; index = next++) {
      const started = performance.now();
      const response = await request(index);
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`${response.status} from a bench request`);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  return median(latencies);
}

// CPU time (user and system) of a process so far, in ms: what start-up costs, however loaded the machine is.
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
};
const peakRssMb = (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

async function startMock(dataDir) {
  const started = performance.now();
  const child = spawn(process.execPath, [bin, 'serve', '--mock', '--port', '0', '--json', '--rate-limit', 'off', ...(dataDir ? ['--data-dir', dataDir] : [])], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buffered = '';
  for await (const chunk of child.stdout) {
    buffered += chunk;
    if (buffered.includes('\n')) break;
  }
  const readyMs = performance.now() - started;
  const { base_url: baseUrl } = JSON.parse(buffered.slice(0, buffered.indexOf('\n')));
  child.stdout.resume();
  return {
    child,
    baseUrl,
    readyMs,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

const headers = { authorization: `Bearer ${KEY}` };
const json = (body) => ({ method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
let emails = 0;
const createAccount = (baseUrl) => fetch(`${baseUrl}/accounts`, json({ email: `bench.${process.pid}.${(emails += 1)}@example.com`, first_name: 'Bench', last_name: 'Client' }));
const CONTENT = new Blob([Buffer.alloc(1024, 'x')], { type: 'application/pdf' });
function upload(baseUrl, accountId) {
  const form = new FormData();
  form.set('tax_year', '2025');
  form.set('file', CONTENT, 'bench.pdf');
  return fetch(`${baseUrl}/accounts/${accountId}/documents`, { method: 'POST', headers, body: form });
}

/** Resolves once the process has used no CPU for a second: start-up's after-work (the blob sweep, indexes, GC) is over. */
async function idle(pid) {
  for (let last = cpuMs(pid); ; ) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = cpuMs(pid);
    if (now - last < 20) return;
    last = now;
  }
}

/**
 * The five requests against a mock whose partner-1 accounts are `accountIds` and projects
 * `projectIds`, each warmed up first (its first requests build the indexes it reads and get
 * compiled): the medians are of a mock at work, not of its first minute.
 */
async function measureRoutes(pid, baseUrl, accountIds, projectIds) {
  const pick = (ids, index) => ids[(index * 7919) % ids.length];
  const requests = {
    create: () => createAccount(baseUrl),
    upload: (index) => upload(baseUrl, pick(accountIds, index)),
    list: (index) => fetch(`${baseUrl}/accounts/${pick(accountIds, index)}/documents?limit=50`, { headers }),
    status: (index) => fetch(`${baseUrl}/projects/${pick(projectIds, index)}/status`, { headers }),
    deliverables: () => fetch(`${baseUrl}/deliverables?limit=50`, { headers }),
  };
  for (const request of Object.values(requests)) await measure(request, WARM_UP);
  await idle(pid);
  const medians = {};
  for (const [name, request] of Object.entries(requests)) medians[name] = await measure(request);
  return medians;
}

const ROUTES = ['create', 'upload', 'list', 'status', 'deliverables'];
const LABELS = { create: 'create account', upload: 'upload (1 KB)', list: 'list documents (50)', status: 'project status', deliverables: 'deliverables list (50)' };

// The baseline: a bare node:http server answering a small JSON body, in this process's neighbour.
const baseline = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{"id":1,"status":"active"}');
  });
});
await new Promise((resolve) => baseline.listen(0, '127.0.0.1', resolve));
const baselineUrl = `http://127.0.0.1:${baseline.address().port}`;
const baselineRequest = () => fetch(`${baselineUrl}/accounts`, json({ email: 'x@example.com' }));
await measure(baselineRequest, WARM_UP);
const baselineMs = await measure(baselineRequest);

const work = mkdtempSync(join(tmpdir(), 'taxprep-mock-scale-'));
const results = { 'data-dir': {}, memory: {} };
let startup;
try {
  // With --data-dir: a generated directory per size.
  for (const accounts of SIZES) {
    const dataDir = join(work, `accounts-${accounts}`);
    const made = await generateDataDir(dataDir, { accounts, documentsPerAccount: DOCUMENTS_PER_ACCOUNT });
    const mock = await startMock(dataDir);
    if (accounts === SIZES.at(-1)) startup = { ...made, readyMs: mock.readyMs, cpuMs: cpuMs(mock.child.pid), rssAtReadyMb: peakRssMb(mock.child.pid) };
    // Partner 1's generated accounts and projects (one each, ids in sequence).
    const accountIds = Array.from({ length: accounts }, (_, index) => made.accountId + index);
    const projectIds = Array.from({ length: accounts }, (_, index) => made.projectId + index);
    results['data-dir'][accounts] = await measureRoutes(mock.child.pid, mock.baseUrl, accountIds, projectIds);
    if (startup && accounts === SIZES.at(-1)) startup.peakRssMb = peakRssMb(mock.child.pid);
    await mock.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }

  // In memory: one mock, accounts created through the API up to each size.
  const mock = await startMock(undefined);
  let created = 0;
  const accountIds = [];
  for (const accounts of SIZES) {
    const toCreate = accounts - created - SAMPLES - WARM_UP;
    let next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next++ < toCreate) {
          const response = await createAccount(mock.baseUrl);
          accountIds.push((await response.json()).id);
        }
      }),
    );
    created = accounts;
    // The demo fixture's projects (partner 1's) and the accounts created so far.
    results.memory[accounts] = await measureRoutes(mock.child.pid, mock.baseUrl, accountIds, [5001, 5002]);
  }
  await mock.stop();
} finally {
  baseline.close();
  rmSync(work, { recursive: true, force: true });
}

const ms = (value) => `${value.toFixed(2)} ms`;
let failed = false;
console.log(`bare node:http baseline: ${ms(baselineMs)} median (${CLIENTS} clients, ${SAMPLES} requests)`);
for (const mode of ['data-dir', 'memory']) {
  console.log(`\n${mode === 'data-dir' ? 'with --data-dir' : 'in memory'}`);
  console.log(`${'request'.padEnd(24)}${SIZES.map((size) => `${size.toLocaleString('en-US')} accts`.padStart(15)).join('')}   100k/1k   x baseline at 100k`);
  for (const route of ROUTES) {
    const row = SIZES.map((size) => results[mode][size][route]);
    const ratio = row.at(-1) / row[0];
    if (ratio > GOAL_RATIO) failed = true;
    console.log(`${LABELS[route].padEnd(24)}${row.map((value) => ms(value).padStart(15)).join('')}   ${`${ratio.toFixed(2)}x`.padStart(7)}${ratio > GOAL_RATIO ? '!' : ' '}  ${(row.at(-1) / baselineMs).toFixed(1)}x`);
  }
}
const startupOk = startup.readyMs < GOAL_STARTUP_MS && startup.peakRssMb < GOAL_RSS_MB;
if (!startupOk) failed = true;
console.log(
  `\nstart-up with --data-dir of ${startup.accounts.toLocaleString('en-US')} accounts and ${startup.documents.toLocaleString('en-US')} documents: ready in ${(startup.readyMs / 1000).toFixed(2)} s (goal < ${GOAL_STARTUP_MS / 1000} s; ${(startup.cpuMs / 1000).toFixed(2)} s of CPU time), peak RSS ${startup.rssAtReadyMb.toFixed(0)} MB at ready, ${startup.peakRssMb.toFixed(0)} MB after the requests (goal < ${GOAL_RSS_MB} MB)`,
);
console.log(`goal: each request at 100,000 accounts within ${GOAL_RATIO}x of the same at 1,000 ('!' marks a miss)`);
process.exitCode = failed ? 1 : 0;

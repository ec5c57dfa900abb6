// Document sync (`taxprep docs sync`):
//  1. paced: 250 files in 5 accounts against `taxprep serve --mock --rate-limit 50/5s` (the
//     issue's numbers): 5 list requests and 250 uploads. The span from the first admitted request
//     to the last, read from the mock's request log, against an ideal client's under the mock's
//     exact sliding window (./pacing.js, the login-link bench's ideal: every request the moment the
//     limit admits it); target at most 1.02x, no 429, no failure;
//  2. memory: `docs sync --dry-run` of 10,000 files in 100 accounts (every file hashed, one list
//     request per account), and the same `--offline`: peak RSS from GNU time, target < 100 MB.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { TIME, pacingFromLog, runCounted } from './pacing.js';

const PACED_FILES = 250;
const PACED_ACCOUNTS = 5;
const PACED_LIMIT = 50;
const PACED_WINDOW_MS = 5000;
const TARGET_RATIO = 1.02;
const DRY_RUN_FILES = 10_000;
const DRY_RUN_ACCOUNTS = 100;
const TARGET_MB = 100;
const KEY = 'tpk_benchDocsSyncKey000000000001';
const FIRST_ID = 30_001;
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const bin = join(repoRoot, 'bin', 'taxprep.cjs');

const fixture = () => ({
  partners: [{ id: 1, name: 'Bench Partners', api_keys: [{ key: KEY, label: 'bench' }] }],
  accounts: Array.from({ length: DRY_RUN_ACCOUNTS }, (_, index) => ({ id: FIRST_ID + index, partner_id: 1, email: `sync.${index}@example.com`, first_name: 'Sync', last_name: 'Client' })),
});

/** `count` small files spread over `accounts` accounts, tax year 2025. */
function folder(workDir, name, count, accounts) {
  const root = join(workDir, name);
  for (let index = 0; index < count; index += 1) {
    const directory = join(root, String(FIRST_ID + (index % accounts)), '2025');
    if (index < accounts) mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, `statement-${String(index).padStart(5, '0')}.pdf`), `%PDF-1.4 statement ${index}\n`);
  }
  return root;
}

async function startMock(workDir, rateLimit) {
  const seedPath = join(workDir, 'seed.json');
  writeFileSync(seedPath, JSON.stringify(fixture()));
  const child = spawn(process.execPath, [bin, 'serve', '--mock', '--port', '0', '--json', '--seed', seedPath, '--rate-limit', rateLimit], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = await once(createInterface({ input: child.stdout }), 'line');
  const started = JSON.parse(line);
  return { child, baseUrl: started.base_url, appUrl: started.app_url };
}

/** Runs a command under GNU time; resolves with its exit code, peak RSS in MB, wall time and stdout's line count. */
const measured = (workDir, name, command, env) => runCounted(command, { PATH: process.env.PATH, HOME: workDir, ...env }, join(workDir, `${name}.time`));

if (!existsSync(TIME)) {
  process.stdout.write(`skipped: ${TIME} (GNU time) is not installed\n`);
} else {
  const workDir = mkdtempSync(join(tmpdir(), 'taxprep-bench-sync-'));
  const mocks = [];
  try {
    const env = (mock) => ({ TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: KEY });

    const paced = await startMock(workDir, `${PACED_LIMIT}/${PACED_WINDOW_MS / 1000}s`);
    mocks.push(paced);
    const pacedDir = folder(workDir, 'paced', PACED_FILES, PACED_ACCOUNTS);
    const run = await measured(workDir, 'paced', [process.execPath, bin, '--json', 'docs', 'sync', pacedDir, '--ledger', join(workDir, 'paced.ndjson')], env(paced));
    const pacing = await pacingFromLog(paced.appUrl, { limit: PACED_LIMIT, windowMs: PACED_WINDOW_MS, admittedStatuses: [200, 201] });
    const pacedOk = run.exitCode === 0 && run.lines === PACED_FILES && pacing.admitted === PACED_FILES + PACED_ACCOUNTS && pacing.refused === 0 && pacing.ratio <= TARGET_RATIO;
    process.stdout.write(
      `paced: ${PACED_FILES} files + ${PACED_ACCOUNTS} lists at ${PACED_LIMIT}/${PACED_WINDOW_MS / 1000}s: ${pacing.seconds.toFixed(2)} s, ideal ${pacing.idealSeconds.toFixed(2)} s, ` +
        `ratio ${pacing.ratio.toFixed(3)} (target <= ${TARGET_RATIO}), ${pacing.refused} answered 429, exit ${run.exitCode}\n`,
    );

    const open = await startMock(workDir, 'off');
    mocks.push(open);
    const bigDir = folder(workDir, 'big', DRY_RUN_FILES, DRY_RUN_ACCOUNTS);
    const baseline = await measured(workDir, 'baseline', [process.execPath, '-e', '0'], {});
    const dryRun = await measured(workDir, 'dry-run', [process.execPath, bin, '--json', 'docs', 'sync', bigDir, '--dry-run', '--ledger', join(workDir, 'big.ndjson')], env(open));
    const offline = await measured(workDir, 'offline', [process.execPath, bin, '--json', 'docs', 'sync', bigDir, '--dry-run', '--offline', '--ledger', join(workDir, 'big.ndjson')], env(open));
    const memoryOk = [dryRun, offline].every((result) => result.exitCode === 0 && result.lines === DRY_RUN_FILES && result.mb < TARGET_MB);
    process.stdout.write(`${'node -e 0'.padEnd(46)} peak RSS ${baseline.mb.toFixed(1)} MB\n`);
    for (const [label, result] of [
      [`docs sync --dry-run, ${DRY_RUN_FILES.toLocaleString('en')} files`, dryRun],
      ['the same, --offline', offline],
    ]) {
      process.stdout.write(`${label.padEnd(46)} peak RSS ${result.mb.toFixed(1)} MB (${(result.mb / baseline.mb).toFixed(2)}x node -e 0), ${result.seconds.toFixed(2)} s, exit ${result.exitCode}\n`);
    }
    const ok = pacedOk && memoryOk;
    process.stdout.write(`docs sync: ${ok ? 'meets' : 'MISSES'} the targets (paced <= ${TARGET_RATIO}x the ideal with no 429; dry run < ${TARGET_MB} MB)\n`);
    if (!ok) process.stdout.write(`${run.stderr}${dryRun.stderr}${offline.stderr}`);
    process.exitCode = ok ? 0 : 1;
  } finally {
    for (const mock of mocks) {
      mock.child.kill('SIGTERM');
      if (mock.child.exitCode === null) await once(mock.child, 'exit');
    }
    rmSync(workDir, { recursive: true, force: true });
  }
}

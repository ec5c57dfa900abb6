// Account import:
//  1. paced: `taxprep accounts import` of 250 rows against `taxprep serve --mock` with its limit at
//     50 per 5 s (`PUT /_mock/rate-limits`), the admissions read from the mock's request log: the
//     span from the first created account to the last, as a ratio to an ideal client's (one that
//     sends every request the moment the limit admits it; bench/pacing.js). Target: at most 1.02x
//     in every round, every row created, no answer 429.
//  2. memory: importing 10,000 rows, limits off, peak RSS of the CLI from GNU time
//     (`/usr/bin/time -f %M`), beside `node -e 0` in the same run. Target: under 100 MB.
// The ledger is written (fsync'd) as in real use; `--results` is written too.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { control, pacingFromLog, runCounted } from './pacing.js';

const PACED_ROWS = 250;
const PACED_LIMIT = 50;
const PACED_WINDOW_MS = 5000;
const TARGET_RATIO = 1.02;
const MEMORY_ROWS = 10_000;
const TARGET_MB = 100;
const ROUNDS = Number(process.argv[2] ?? 2);
const KEY = 'tpk_benchAccountsImportKey000001';
const TIME = '/usr/bin/time';
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const bin = join(repoRoot, 'bin', 'taxprep.cjs');

function csv(path, rows, prefix) {
  const lines = Array.from({ length: rows }, (_, index) => `${prefix}.${index}@example.com,Bench,"Client, ${index}"`);
  writeFileSync(path, `email,first_name,last_name\r\n${lines.join('\r\n')}\r\n`);
  return path;
}

/** Runs an import (under GNU time when `timed`); resolves with its peak RSS in MB and stdout lines. */
async function runImport(baseUrl, workDir, name, file, timed) {
  const command = [process.execPath, bin, 'accounts', 'import', file, '--ledger', join(workDir, `${name}.ndjson`), '--results', join(workDir, `${name}.results.csv`)];
  const env = { PATH: process.env.PATH, HOME: workDir, TAXPREP_BASE_URL: baseUrl, TAXPREP_API_KEY: KEY };
  const result = await runCounted(command, env, timed ? join(workDir, `${name}.time`) : undefined);
  if (result.exitCode !== 0) throw new Error(`${name} exited ${result.exitCode}: ${result.stderr}`);
  return { lines: result.lines, mb: result.mb };
}

const workDir = mkdtempSync(join(tmpdir(), 'taxprep-bench-import-'));
const seedPath = join(workDir, 'seed.json');
writeFileSync(seedPath, JSON.stringify({ partners: [{ id: 1, name: 'Bench Partners', api_keys: [{ key: KEY, label: 'bench' }] }], accounts: [] }));
const mock = spawn(process.execPath, [bin, 'serve', '--mock', '--port', '0', '--json', '--seed', seedPath, '--rate-limit', 'off'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
try {
  const [line] = await once(createInterface({ input: mock.stdout }), 'line');
  const { base_url: baseUrl, app_url: appUrl } = JSON.parse(line);
  let ok = true;
  for (let round = 1; round <= ROUNDS; round += 1) {
    await control(appUrl, 'POST', '/reset');
    await control(appUrl, 'PUT', '/rate-limits', { windows: [{ limit: PACED_LIMIT, window_seconds: PACED_WINDOW_MS / 1000 }] });
    const run = await runImport(baseUrl, workDir, `paced-${round}`, csv(join(workDir, `paced-${round}.csv`), PACED_ROWS, `paced${round}`), false);
    const pacing = await pacingFromLog(appUrl, { limit: PACED_LIMIT, windowMs: PACED_WINDOW_MS });
    await control(appUrl, 'PUT', '/rate-limits', { windows: [] });
    const roundOk = run.lines === PACED_ROWS && pacing.admitted === PACED_ROWS && pacing.refused === 0 && pacing.ratio <= TARGET_RATIO;
    ok &&= roundOk;
    process.stdout.write(
      `paced import of ${PACED_ROWS} rows at ${PACED_LIMIT}/${PACED_WINDOW_MS / 1000}s, round ${round}: ${pacing.seconds.toFixed(2)} s, ideal ${pacing.idealSeconds.toFixed(2)} s, ` +
        `ratio ${pacing.ratio.toFixed(3)}x the ideal, ${pacing.admitted} created, ${pacing.refused} answered 429\n`,
    );
  }
  process.stdout.write(`paced import: ${ok ? 'meets' : 'MISSES'} the target (at most ${TARGET_RATIO}x the ideal in every round, every row created, no 429)\n`);

  if (!existsSync(TIME)) {
    process.stdout.write(`memory: skipped, ${TIME} (GNU time) is not installed\n`);
  } else {
    await control(appUrl, 'POST', '/reset');
    const baseline = await new Promise((resolve, reject) => {
      const report = join(workDir, 'baseline.time');
      const child = spawn(TIME, ['-f', '%M', '-o', report, process.execPath, '-e', '0'], { stdio: 'ignore' });
      child.on('error', reject).on('exit', () => resolve(Number(readFileSync(report, 'utf8').trim().split('\n').at(-1)) / 1024));
    });
    const started = performance.now();
    const big = await runImport(baseUrl, workDir, 'memory', csv(join(workDir, 'memory.csv'), MEMORY_ROWS, 'memory'), true);
    const seconds = (performance.now() - started) / 1000;
    const memoryOk = big.lines === MEMORY_ROWS && big.mb < TARGET_MB;
    ok &&= memoryOk;
    process.stdout.write(`${'node -e 0'.padEnd(44)} peak RSS ${baseline.toFixed(1)} MB\n`);
    process.stdout.write(
      `${`accounts import (${MEMORY_ROWS.toLocaleString('en')} rows, limits off)`.padEnd(44)} peak RSS ${big.mb.toFixed(1)} MB (${(big.mb / baseline).toFixed(2)}x node -e 0), ` +
        `${seconds.toFixed(1)} s: ${memoryOk ? 'meets' : 'MISSES'} the target (under ${TARGET_MB} MB)\n`,
    );
  }
  process.exitCode = ok ? 0 : 1;
} finally {
  mock.kill('SIGTERM');
  if (mock.exitCode === null) await once(mock, 'exit');
  rmSync(workDir, { recursive: true, force: true });
}

// Listing memory: peak RSS of `taxprep docs list <id> --all --ndjson` over 20,000 documents (200
// pages of 100) from `taxprep serve --mock` seeded with a generated fixture, and of the same list as
// a table on a terminal (under script(1)), beside `node -e 0` in the same run. Targets: the NDJSON
// listing under 100 MB (items are written as pages arrive); the terminal table completes with V8's
// old space capped at 24 MB (`--max-old-space-size=24`), which holding every row runs out of (it
// holds at most 1,000 rows; its uncapped peak RSS is printed too, V8 collecting lazily).
// Peak RSS comes from GNU time (`/usr/bin/time -f %M`, kilobytes); stdout is counted, not kept.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const DOCUMENTS = 20_000;
const TARGET_MB = 100;
const TABLE_OLD_SPACE_MB = 24;
const KEY = 'tpk_benchListMemoryKey0000000001';
const ACCOUNT_ID = 5001;
const TIME = '/usr/bin/time';
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const bin = join(repoRoot, 'bin', 'taxprep.cjs');

function fixture() {
  return {
    partners: [{ id: 1, name: 'Bench Partners', api_keys: [{ key: KEY, label: 'bench' }] }],
    accounts: [{ id: ACCOUNT_ID, partner_id: 1, email: 'many.documents@example.com', first_name: 'Many', last_name: 'Documents' }],
    documents: Array.from({ length: DOCUMENTS }, (_, index) => ({
      id: 100_000 + index,
      account_id: ACCOUNT_ID,
      filename: `statement-${String(index).padStart(5, '0')}.pdf`,
      tax_year: 2020 + (index % 6),
      description: `Monthly statement number ${index} with a description long enough to look real`,
      file_type: 'application/pdf',
      content: 'x',
    })),
  };
}

/** Runs a command under GNU time; resolves with its peak RSS in MB and the lines it printed. */
async function peakRss(workDir, name, command, env = {}) {
  const report = join(workDir, `${name}.time`);
  const child = spawn(TIME, ['-f', '%M', '-o', report, ...command], { env: { PATH: process.env.PATH, HOME: workDir, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let lines = 0;
  child.stdout.on('data', (chunk) => {
    for (const byte of chunk) if (byte === 0x0a) lines += 1;
  });
  const [exitCode] = await once(child, 'exit');
  if (exitCode !== 0) throw new Error(`${name} exited ${exitCode}`);
  return { mb: Number(readFileSync(report, 'utf8').trim().split('\n').at(-1)) / 1024, lines };
}

if (!existsSync(TIME)) {
  process.stdout.write(`skipped: ${TIME} (GNU time) is not installed\n`);
} else {
  const workDir = mkdtempSync(join(tmpdir(), 'taxprep-bench-list-'));
  const seedPath = join(workDir, 'seed.json');
  writeFileSync(seedPath, JSON.stringify(fixture()));
  const mock = spawn(process.execPath, [bin, 'serve', '--mock', '--port', '0', '--json', '--seed', seedPath, '--rate-limit', 'off'], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const [line] = await once(createInterface({ input: mock.stdout }), 'line');
    const { base_url: baseUrl } = JSON.parse(line);
    const baseline = await peakRss(workDir, 'baseline', [process.execPath, '-e', '0']);
    const listing = await peakRss(workDir, 'listing', [process.execPath, bin, 'docs', 'list', String(ACCOUNT_ID), '--all', '--ndjson'], {
      TAXPREP_BASE_URL: baseUrl,
      TAXPREP_API_KEY: KEY,
    });
    if (listing.lines !== DOCUMENTS) throw new Error(`docs list printed ${listing.lines} lines, expected ${DOCUMENTS}`);
    process.stdout.write(`${'node -e 0'.padEnd(44)} peak RSS ${baseline.mb.toFixed(1)} MB\n`);
    process.stdout.write(
      `${`docs list --all --ndjson (${DOCUMENTS.toLocaleString('en')} items)`.padEnd(44)} peak RSS ${listing.mb.toFixed(1)} MB (${(listing.mb / baseline.mb).toFixed(2)}x node -e 0)\n`,
    );
    const onTerminal = (name, nodeOptions) => {
      const command = [process.execPath, bin, 'docs', 'list', String(ACCOUNT_ID), '--all'].map((word) => `'${word}'`).join(' ');
      return peakRss(workDir, name, ['script', '-qfec', `stty cols 160; exec ${command}`, '/dev/null'], { TAXPREP_BASE_URL: baseUrl, TAXPREP_API_KEY: KEY, NO_COLOR: '1', NODE_OPTIONS: nodeOptions });
    };
    const table = await onTerminal('table', '');
    if (table.lines < DOCUMENTS) throw new Error(`docs list on a terminal printed ${table.lines} lines, expected at least ${DOCUMENTS}`);
    process.stdout.write(`${'docs list --all, a terminal table'.padEnd(44)} peak RSS ${table.mb.toFixed(1)} MB (${(table.mb / baseline.mb).toFixed(2)}x node -e 0)\n`);
    const capped = await onTerminal('table-capped', `--max-old-space-size=${TABLE_OLD_SPACE_MB}`).then(
      (result) => result,
      () => undefined,
    );
    process.stdout.write(
      `${`the same, old space capped at ${TABLE_OLD_SPACE_MB} MB`.padEnd(44)} ${capped === undefined ? 'FAILED (ran out of memory)' : `completed, peak RSS ${capped.mb.toFixed(1)} MB`}\n`,
    );
    const ok = listing.mb < TARGET_MB && capped !== undefined;
    process.stdout.write(`listing: ${ok ? 'meets' : 'MISSES'} the targets (NDJSON peak RSS < ${TARGET_MB} MB; the terminal table within a ${TABLE_OLD_SPACE_MB} MB old space)\n`);
    process.exitCode = ok ? 0 : 1;
  } finally {
    mock.kill('SIGTERM');
    if (mock.exitCode === null) await once(mock, 'exit');
    rmSync(workDir, { recursive: true, force: true });
  }
}

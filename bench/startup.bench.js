// Start-up cost of the CLI, as ratios to `node -e 0` measured in the same run (so a busy or slow
// machine moves both): `taxprep --version`, `taxprep --help`, and `taxprep health` against a mock
// started here. Targets from the CLI issue: --help <= 1.5x, health <= 2.5x.
// Runs the commands interleaved (one run of each, round after round), so that a shared machine's
// changing load hits all of them alike; hyperfine runs each command's runs back to back, which on
// a busy machine skews the ratios, so it is used only on request (BENCH_TOOL=hyperfine).
// Expects a built dist/ (`npm run bench` builds first). Usage: node bench/startup.bench.js [runs]
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const RUNS = Number(process.argv[2] ?? 40);
const WARMUP = 5;
const TARGETS = { '--help': 1.5, health: 2.5 };
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'taxprep.js');
const node = process.execPath;

/** Starts `taxprep serve --mock` on a free port; resolves with its base URL and a stop function. */
async function startMock() {
  const child = spawn(node, [bin, 'serve', '--mock', '--port', '0', '--json', '--rate-limit', 'off'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const firstLine = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the mock exited (${code}) before it was ready`)));
  });
  const { base_url: baseUrl } = JSON.parse(firstLine);
  return {
    baseUrl,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Each run of every command in turn, round after round, so that drift hits all of them alike. */
function measureInterleaved(commands, env) {
  const times = commands.map(() => []);
  for (let round = 0; round < WARMUP + RUNS; round += 1) {
    commands.forEach((command, index) => {
      const started = process.hrtime.bigint();
      const result = spawnSync(command.argv[0], command.argv.slice(1), { env, stdio: 'ignore' });
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (result.status !== 0) throw new Error(`${command.name} exited ${result.status}`);
      if (round >= WARMUP) times[index].push(ms);
    });
  }
  return times.map(median);
}

function measureWithHyperfine(commands, env) {
  const directory = mkdtempSync(join(tmpdir(), 'taxprep-bench-'));
  const exportPath = join(directory, 'results.json');
  try {
    execFileSync(
      'hyperfine',
      ['--shell=none', '--style', 'none', '--warmup', String(WARMUP), '--runs', String(RUNS), '--export-json', exportPath, ...commands.map((command) => command.argv.map(quote).join(' '))],
      { env, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    const { results } = JSON.parse(readFileSync(exportPath, 'utf8'));
    return results.map((result) => result.median * 1000);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

function quote(word) {
  return /^[\w./:=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function wantsHyperfine() {
  return process.env.BENCH_TOOL === 'hyperfine' && spawnSync('hyperfine', ['--version'], { stdio: 'ignore' }).status === 0;
}

const mock = await startMock();
try {
  const env = {
    ...process.env,
    // A profile-free run, as in cron: settings from the environment, so no profile file is read.
    XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'taxprep-bench-config-')),
    TAXPREP_BASE_URL: mock.baseUrl,
    TAXPREP_API_KEY: 'tpk_mockAcmeLiveKey0000000000001',
    NO_COLOR: '1',
  };
  const commands = [
    { name: 'node -e 0', argv: [node, '-e', '0'] },
    { name: '--version', argv: [node, bin, '--version'] },
    { name: '--help', argv: [node, bin, '--help'] },
    { name: 'health', argv: [node, bin, 'health'] },
  ];
  const tool = wantsHyperfine() ? 'hyperfine' : 'interleaved loop';
  const medians = tool === 'hyperfine' ? measureWithHyperfine(commands, env) : measureInterleaved(commands, env);
  const baseline = medians[0];
  process.stdout.write(`start-up, median of ${RUNS} runs (${tool}, Node ${process.versions.node})\n`);
  process.stdout.write(`${'command'.padEnd(12)}${'median'.padStart(10)}${'ratio'.padStart(8)}  target\n`);
  let missed = 0;
  commands.forEach((command, index) => {
    const ratio = medians[index] / baseline;
    const target = TARGETS[command.name];
    const verdict = target === undefined ? '' : `<= ${target}x ${ratio <= target ? 'met' : 'MISSED'}`;
    if (target !== undefined && ratio > target) missed += 1;
    process.stdout.write(`${command.name.padEnd(12)}${`${medians[index].toFixed(1)} ms`.padStart(10)}${`${ratio.toFixed(2)}x`.padStart(8)}  ${verdict}\n`);
  });
  // Targets are reported, not enforced: a shared machine's noise should not fail `npm run bench`.
  if (missed > 0) process.stdout.write(`${missed} target(s) missed on this run\n`);
} finally {
  await mock.stop();
}

// Start-up cost of the CLI, as ratios to baselines measured in the same run (so a busy or slow
// machine moves both): `taxprep --version`, `--help` and `health` against `node -e 0`, and
// `accounts get 1001` against a bare `node:http` GET of the same URL on a mock started here. The
// API commands run twice: settings from the environment (as in cron) and from a stored profile.
// Targets: --help <= 1.5x and health <= 2.5x of `node -e 0`; accounts get with a stored profile
// <= 1.6x of the bare GET.
// The single executable (bin/release.js, built here from dist/) runs `--help` and `accounts get`
// with the same stored profile: targets --help <= 1.3x of `node -e 0`, and both no slower than
// the same command run by Node (`node bin/taxprep.js`, as an npm install runs it).
// taxprep keeps compiled code between runs (src/launch.ts), in a cache directory made here: the
// warm-up runs fill it, as a user's first runs do. One more row shows `accounts get` without it
// (NODE_DISABLE_COMPILE_CACHE), as on the first run of a command after an install.
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
import { singleExecutable } from '../bin/release.js';

const RUNS = Number(process.argv[2] ?? 40);
const WARMUP = 5;
const KEY = 'tpk_mockAcmeLiveKey0000000000001';
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
function measureInterleaved(commands) {
  const times = commands.map(() => []);
  for (let round = 0; round < WARMUP + RUNS; round += 1) {
    commands.forEach((command, index) => {
      const started = process.hrtime.bigint();
      const result = spawnSync(command.argv[0], command.argv.slice(1), { env: command.env, stdio: 'ignore' });
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (result.status !== 0) throw new Error(`${command.name} exited ${result.status}`);
      if (round >= WARMUP) times[index].push(ms);
    });
  }
  return times.map(median);
}

/** One hyperfine call per command, since each command has its own environment. */
function measureWithHyperfine(commands) {
  const directory = mkdtempSync(join(tmpdir(), 'taxprep-bench-'));
  const exportPath = join(directory, 'results.json');
  try {
    return commands.map((command) => {
      execFileSync(
        'hyperfine',
        ['--shell=none', '--style', 'none', '--warmup', String(WARMUP), '--runs', String(RUNS), '--export-json', exportPath, command.argv.map(quote).join(' ')],
        { env: command.env, stdio: ['ignore', 'ignore', 'inherit'] },
      );
      return JSON.parse(readFileSync(exportPath, 'utf8')).results[0].median * 1000;
    });
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

/** A GET of one URL with `node:http`, printing the body: what `accounts get` does, without taxprep. */
const BARE_GET = `require('node:http').get(process.argv[1], { headers: { authorization: 'Bearer ${KEY}' } }, (response) => response.pipe(process.stdout));`;

const mock = await startMock();
const configHomes = [mkdtempSync(join(tmpdir(), 'taxprep-bench-config-')), mkdtempSync(join(tmpdir(), 'taxprep-bench-profile-'))];
const cacheHome = mkdtempSync(join(tmpdir(), 'taxprep-bench-cache-'));
const executableHome = mkdtempSync(join(tmpdir(), 'taxprep-bench-executable-'));
try {
  const executable = join(executableHome, 'taxprep');
  await singleExecutable(executableHome, executable);
  // Settings from the environment, as in cron: no profile file is read.
  const fromEnvironment = { ...process.env, XDG_CONFIG_HOME: configHomes[0], XDG_CACHE_HOME: cacheHome, TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: KEY, NO_COLOR: '1' };
  // The same settings from a stored default profile, written by `taxprep profiles add` (so by conf).
  const fromProfile = { ...process.env, XDG_CONFIG_HOME: configHomes[1], XDG_CACHE_HOME: cacheHome, NO_COLOR: '1' };
  for (const name of ['TAXPREP_BASE_URL', 'TAXPREP_API_KEY', 'TAXPREP_PROFILE']) delete fromProfile[name];
  execFileSync(node, [bin, 'profiles', 'add', 'bench', '--api-key-stdin', '--base-url', mock.baseUrl], { env: fromProfile, input: `${KEY}\n`, stdio: 'pipe' });

  const nodeBaseline = { name: 'node -e 0', argv: [node, '-e', '0'], env: fromEnvironment };
  const getBaseline = { name: 'bare node:http GET', argv: [node, '-e', BARE_GET, `${mock.baseUrl}/accounts/1001`], env: fromEnvironment };
  const help = { name: '--help', argv: [node, bin, '--help'], env: fromEnvironment, baseline: nodeBaseline, target: 1.5 };
  const getWithProfile = { name: 'accounts get (profile)', argv: [node, bin, 'accounts', 'get', '1001'], env: fromProfile, baseline: getBaseline, target: 1.6 };
  const commands = [
    nodeBaseline,
    getBaseline,
    { name: '--version', argv: [node, bin, '--version'], env: fromEnvironment, baseline: nodeBaseline },
    help,
    { name: 'health (environment)', argv: [node, bin, 'health'], env: fromEnvironment, baseline: nodeBaseline, target: 2.5 },
    { name: 'health (profile)', argv: [node, bin, 'health'], env: fromProfile, baseline: nodeBaseline, target: 2.5 },
    { name: 'accounts get (environment)', argv: [node, bin, 'accounts', 'get', '1001'], env: fromEnvironment, baseline: getBaseline },
    getWithProfile,
    { name: 'accounts get (no cache)', argv: [node, bin, 'accounts', 'get', '1001'], env: { ...fromProfile, NODE_DISABLE_COMPILE_CACHE: '1' }, baseline: getBaseline },
    { name: 'executable --help', argv: [executable, '--help'], env: fromEnvironment, baseline: nodeBaseline, target: 1.3, versus: help },
    { name: 'executable accounts get', argv: [executable, 'accounts', 'get', '1001'], env: fromProfile, baseline: getBaseline, versus: getWithProfile },
  ];
  const tool = wantsHyperfine() ? 'hyperfine' : 'interleaved loop';
  const medians = tool === 'hyperfine' ? measureWithHyperfine(commands) : measureInterleaved(commands);
  const medianOf = (command) => medians[commands.indexOf(command)];
  process.stdout.write(`start-up, median of ${RUNS} runs (${tool}, Node ${process.versions.node})\n`);
  process.stdout.write(`${'command'.padEnd(28)}${'median'.padStart(10)}${'ratio'.padStart(8)}  of                  target\n`);
  let missed = 0;
  for (const command of commands) {
    const ratio = command.baseline === undefined ? undefined : medianOf(command) / medianOf(command.baseline);
    const verdict = command.target === undefined ? '' : `<= ${command.target}x ${ratio <= command.target ? 'met' : 'MISSED'}`;
    if (command.target !== undefined && ratio > command.target) missed += 1;
    const shownRatio = ratio === undefined ? '' : `${ratio.toFixed(2)}x`;
    process.stdout.write(`${command.name.padEnd(28)}${`${medianOf(command).toFixed(1)} ms`.padStart(10)}${shownRatio.padStart(8)}  ${(command.baseline?.name ?? '').padEnd(20)}${verdict}\n`);
  }
  // The executable against the same command run by Node: no slower is the target.
  for (const command of commands.filter(({ versus }) => versus !== undefined)) {
    const ratio = medianOf(command) / medianOf(command.versus);
    if (ratio > 1) missed += 1;
    process.stdout.write(`${command.name.padEnd(38)}${`${ratio.toFixed(2)}x`.padStart(8)}  ${command.versus.name.padEnd(24)}<= 1x ${ratio <= 1 ? 'met' : 'MISSED'}\n`);
  }
  // Targets are reported, not enforced: a shared machine's noise should not fail `npm run bench`.
  if (missed > 0) process.stdout.write(`${missed} target(s) missed on this run\n`);
} finally {
  await mock.stop();
  for (const directory of [...configHomes, cacheHome, executableHome]) rmSync(directory, { recursive: true, force: true });
}

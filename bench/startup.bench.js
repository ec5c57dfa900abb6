// Start-up cost of the CLI, as ratios to baselines measured in the same run (so a busy or slow
// machine moves both), with NODE_EXTRA_CA_CERTS unset as on most users' machines (it adds tens of
// milliseconds to every Node start and would hide our own cost; `--extra-ca-certs` keeps the
// machine's value, to compare). Two ways of running taxprep, each against its own Node:
//   the npm install   `node bin/taxprep.cjs` on the Node running this bench: `--version`, `--help`
//                     and `health` against `node -e 0`, `accounts get 1001` against a bare
//                     `node:http` GET of the same URL on a mock started here, with settings from the
//                     environment (as in cron) and from a stored profile; targets --help <= 1.6x,
//                     accounts get with a stored profile <= 1.5x, health <= 2.5x;
//   the executable    built here from dist/ (bin/release.js, on the pinned LTS Node), `--help` and
//                     `accounts get` with the same stored profile against `node -e 0` and the bare
//                     GET run by the executable's own Node (its base binary, without the blob);
//                     targets <= 1.3x each.
// Both `--help` rows are also held against GitHub's `gh --help` (Debian's gh package): no slower.
// The npm install keeps compiled code between runs (src/launch.ts), in a cache directory made here:
// the warm-up runs fill it, as a user's first runs do. One more row shows `accounts get` without it
// (NODE_DISABLE_COMPILE_CACHE), as on the first run of a command after an install. The executable
// starts from its V8 start-up snapshot (src/sea/main.ts) and keeps no cache.
// The tool is hyperfine when on PATH (`apt-get install hyperfine`), in rounds: each round runs
// every command a few times, and the medians are over all rounds, so that a shared machine's
// changing load hits all commands alike. Without hyperfine (or with BENCH_TOOL=loop) a loop here
// runs one run of each command in turn. Expects a built dist/ (`npm run bench` builds first).
// With hyperfine, each row also shows its CPU time (user + system) and that ratio: the goals are
// judged on the medians, but on a loaded machine the CPU ratio shows what changed more steadily.
// Usage: node bench/startup.bench.js [runs] [--extra-ca-certs]
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { PINNED_NODE } from '../bin/pinnedNode.js';
import { singleExecutable } from '../bin/release.js';

const args = process.argv.slice(2);
const RUNS = Number(args.find((arg) => /^\d+$/.test(arg)) ?? 40);
const KEEP_EXTRA_CA_CERTS = args.includes('--extra-ca-certs');
const WARMUP = 5;
/** hyperfine's rounds: each runs every command RUNS / ROUNDS times after a warm-up of its own. */
const ROUNDS = 8;
const KEY = 'tpk_mockAcmeLiveKey0000000000001';
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'taxprep.cjs');
const node = process.execPath;

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
  return { medians: times.map(median) };
}

/**
 * hyperfine, one call per command and round (each command has its own environment), rounds
 * interleaved; the median of every run of a command over all rounds.
 */
function measureWithHyperfine(commands) {
  const directory = mkdtempSync(join(tmpdir(), 'taxprep-bench-'));
  const exportPath = join(directory, 'results.json');
  const runsPerRound = Math.max(1, Math.round(RUNS / ROUNDS));
  const times = commands.map(() => []);
  const cpu = commands.map(() => []);
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      commands.forEach((command, index) => {
        execFileSync(
          'hyperfine',
          ['--shell=none', '--style', 'none', '--warmup', String(round === 0 ? WARMUP : 1), '--runs', String(runsPerRound), '--export-json', exportPath, command.argv.map(quote).join(' ')],
          { env: command.env, stdio: ['ignore', 'ignore', 'inherit'] },
        );
        const [result] = JSON.parse(readFileSync(exportPath, 'utf8')).results;
        times[index].push(...result.times.map((seconds) => seconds * 1000));
        cpu[index].push((result.user + result.system) * 1000);
      });
    }
    return { medians: times.map(median), cpuMedians: cpu.map(median) };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

function quote(word) {
  return /^[\w./:=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function found(command) {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
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
  // The executable's own Node: the binary the blob went into, as it was just before.
  const executableNode = join(executableHome, 'node');
  const machine = { ...process.env, XDG_CACHE_HOME: cacheHome, NO_COLOR: '1' };
  if (!KEEP_EXTRA_CA_CERTS) delete machine.NODE_EXTRA_CA_CERTS;
  // Settings from the environment, as in cron: no profile file is read.
  const fromEnvironment = { ...machine, XDG_CONFIG_HOME: configHomes[0], TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: KEY };
  // The same settings from a stored default profile, written by `taxprep profiles add` (so by conf).
  const fromProfile = { ...machine, XDG_CONFIG_HOME: configHomes[1] };
  for (const name of ['TAXPREP_BASE_URL', 'TAXPREP_API_KEY', 'TAXPREP_PROFILE']) delete fromProfile[name];
  execFileSync(node, [bin, 'profiles', 'add', '--insecure-storage', 'bench', '--api-key-stdin', '--base-url', mock.baseUrl], { env: fromProfile, input: `${KEY}\n`, stdio: 'pipe' });

  const accountUrl = `${mock.baseUrl}/accounts/1001`;
  const nodeBaseline = { name: 'node -e 0', argv: [node, '-e', '0'], env: fromEnvironment };
  const getBaseline = { name: 'bare node:http GET', argv: [node, '-e', BARE_GET, accountUrl], env: fromEnvironment };
  const executableNodeBaseline = { name: `node ${PINNED_NODE.version} -e 0`, argv: [executableNode, '-e', '0'], env: fromEnvironment };
  const executableGetBaseline = { name: `bare GET, ${PINNED_NODE.version}`, argv: [executableNode, '-e', BARE_GET, accountUrl], env: fromEnvironment };
  const gh = found('gh') ? { name: 'gh --help', argv: ['gh', '--help'], env: fromEnvironment } : undefined;
  const commands = [
    nodeBaseline,
    getBaseline,
    executableNodeBaseline,
    executableGetBaseline,
    ...(gh === undefined ? [] : [gh]),
    { name: '--version', argv: [node, bin, '--version'], env: fromEnvironment, baseline: nodeBaseline },
    { name: '--help', argv: [node, bin, '--help'], env: fromEnvironment, baseline: nodeBaseline, target: 1.6, versus: gh },
    { name: 'health (environment)', argv: [node, bin, 'health'], env: fromEnvironment, baseline: nodeBaseline, target: 2.5 },
    { name: 'health (profile)', argv: [node, bin, 'health'], env: fromProfile, baseline: nodeBaseline, target: 2.5 },
    { name: 'accounts get (environment)', argv: [node, bin, 'accounts', 'get', '1001'], env: fromEnvironment, baseline: getBaseline },
    { name: 'accounts get (profile)', argv: [node, bin, 'accounts', 'get', '1001'], env: fromProfile, baseline: getBaseline, target: 1.5 },
    { name: 'accounts get (no cache)', argv: [node, bin, 'accounts', 'get', '1001'], env: { ...fromProfile, NODE_DISABLE_COMPILE_CACHE: '1' }, baseline: getBaseline },
    { name: 'executable --help', argv: [executable, '--help'], env: fromEnvironment, baseline: executableNodeBaseline, target: 1.3, versus: gh },
    { name: 'executable accounts get', argv: [executable, 'accounts', 'get', '1001'], env: fromProfile, baseline: executableGetBaseline, target: 1.3 },
  ];
  const tool = process.env.BENCH_TOOL !== 'loop' && found('hyperfine') ? 'hyperfine' : 'interleaved loop';
  const { medians, cpuMedians } = tool === 'hyperfine' ? measureWithHyperfine(commands) : measureInterleaved(commands);
  const medianOf = (command) => medians[commands.indexOf(command)];
  // CPU time (user + system, hyperfine's mean per round, median over rounds): beside the goals, not
  // instead of them; on a loaded machine it moves less than the time a user waits.
  const cpuOf = (command) => cpuMedians?.[commands.indexOf(command)];
  const caCerts = KEEP_EXTRA_CA_CERTS ? `NODE_EXTRA_CA_CERTS=${process.env.NODE_EXTRA_CA_CERTS ?? ''}` : 'NODE_EXTRA_CA_CERTS unset';
  process.stdout.write(`start-up, median of ${RUNS} runs (${tool}${tool === 'hyperfine' ? ` in ${ROUNDS} rounds` : ''}; npm install on Node ${process.versions.node}, executable on Node ${PINNED_NODE.version}; ${caCerts})\n`);
  process.stdout.write(`${'command'.padEnd(28)}${'median'.padStart(10)}${'ratio'.padStart(8)}  ${'of'.padEnd(26)}${'target'.padEnd(17)}${cpuMedians === undefined ? '' : 'CPU (ratio)'}\n`);
  let missed = 0;
  const row = (name, ms, ratio, of, target, cpu = '') => {
    const verdict = target === undefined ? '' : `<= ${target}x ${ratio <= target ? 'met' : 'MISSED'}`;
    if (target !== undefined && ratio > target) missed += 1;
    process.stdout.write(`${name.padEnd(28)}${(ms === undefined ? '' : `${ms.toFixed(1)} ms`).padStart(10)}${(ratio === undefined ? '' : `${ratio.toFixed(2)}x`).padStart(8)}  ${of.padEnd(26)}${verdict.padEnd(17)}${cpu}`.trimEnd() + '\n');
  };
  const cpuColumn = (command, baseline) => {
    const cpu = cpuOf(command);
    if (cpu === undefined) return '';
    return `${cpu.toFixed(1)} ms${baseline === undefined ? '' : ` (${(cpu / cpuOf(baseline)).toFixed(2)}x)`}`;
  };
  for (const command of commands) {
    row(command.name, medianOf(command), command.baseline && medianOf(command) / medianOf(command.baseline), command.baseline?.name ?? '', command.target, cpuColumn(command, command.baseline));
  }
  // Both --help rows against gh's: no slower is the target.
  for (const command of commands.filter(({ versus }) => versus !== undefined)) {
    row(command.name, undefined, medianOf(command) / medianOf(command.versus), command.versus.name, 1, cpuColumn(command, command.versus));
  }
  if (gh === undefined) process.stdout.write('gh is not installed (apt-get install gh): no comparison with gh --help\n');
  // Targets are reported, not enforced: a shared machine's noise should not fail `npm run bench`.
  if (missed > 0) process.stdout.write(`${missed} target(s) missed on this run\n`);
} finally {
  await mock.stop();
  for (const directory of [...configHomes, cacheHome, executableHome]) rmSync(directory, { recursive: true, force: true });
}

// Issue 33, item 8: `accounts get 1001` with the key in the credential store (a real Secret
// Service: gnome-keyring in a D-Bus session) beside the same command with the key in the profile
// file, against a mock it starts, NODE_EXTRA_CA_CERTS unset, each with its compiled-code cache
// filled by the warm-up. hyperfine -N, the two commands in one run, alternating; median and mean,
// the ratio and the difference in ms. Goal: the store adds at most 5 ms (median).
// Without a session bus it runs itself again under .ci/with-secret-service.
//   node bench/secrets.bench.js [RUNS]
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'taxprep.cjs');
const node = process.execPath;
const RUNS = Number(process.argv[2] ?? 60);
const GOAL_MS = 5;
const KEY = 'tpk_mockAcmeLiveKey0000000000001';

if (!process.env.DBUS_SESSION_BUS_ADDRESS) {
  const again = spawnSync(join(root, '.ci', 'with-secret-service'), [node, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(again.status ?? 1);
}

async function startMock() {
  const child = spawn(node, [bin, 'serve', '--mock', '--port', '0', '--json', '--rate-limit', 'off'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const firstLine = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the mock exited (${code}) before it was ready`)));
  });
  return { baseUrl: JSON.parse(firstLine).base_url, stop: () => new Promise((resolve) => child.once('exit', resolve).kill('SIGTERM')) };
}

const mock = await startMock();
const work = mkdtempSync(join(tmpdir(), 'taxprep-bench-secrets-'));
try {
  const homes = {};
  for (const [name, storage] of [['file', ['--insecure-storage']], ['store', []]]) {
    const env = { PATH: process.env.PATH, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS, XDG_CONFIG_HOME: join(work, name, 'config'), XDG_CACHE_HOME: join(work, name, 'cache') };
    execFileSync(node, [bin, 'profiles', 'add', 'bench', ...storage, '--api-key-stdin', '--base-url', mock.baseUrl], { env, input: `${KEY}\n`, stdio: ['pipe', 'ignore', 'inherit'] });
    homes[name] = env;
  }
  const command = (env) => ['env', '-i', ...Object.entries(env).map(([name, value]) => `${name}=${value}`), node, bin, 'accounts', 'get', '1001'].join(' ');
  const report = join(work, 'hyperfine.json');
  execFileSync('hyperfine', ['-N', '--warmup', '5', '--runs', String(RUNS), '--export-json', report, '-n', 'file', command(homes.file), '-n', 'store', command(homes.store)], { stdio: ['ignore', 'ignore', 'inherit'] });
  const results = Object.fromEntries(JSON.parse(readFileSync(report, 'utf8')).results.map((result) => [result.command, result]));
  const ms = (seconds) => seconds * 1000;
  const cpu = (name) => ms(results[name].user + results[name].system);
  const row = (name) => `${name.padEnd(6)} median ${ms(results[name].median).toFixed(1)} ms  mean ${ms(results[name].mean).toFixed(1)} ms  cpu ${cpu(name).toFixed(1)} ms`;
  const delta = ms(results.store.median - results.file.median);
  const signed = (value) => `${value >= 0 ? '+' : ''}${value.toFixed(1)} ms`;
  console.log(`accounts get 1001, ${RUNS} runs each (hyperfine -N), NODE_EXTRA_CA_CERTS unset`);
  console.log(row('file'));
  console.log(row('store'));
  // The CPU time of taxprep's own process (not the keyring daemon's) moves less with the machine's load than the wall time.
  console.log(`store / file: ${(results.store.median / results.file.median).toFixed(3)}x, ${signed(delta)} (median); mean ${signed(ms(results.store.mean - results.file.mean))}; CPU ${signed(cpu('store') - cpu('file'))}`);
  console.log(`goal: the store adds <= ${GOAL_MS} ms (median): ${delta <= GOAL_MS ? 'met' : 'MISSED'}`);
  process.exitCode = delta <= GOAL_MS ? 0 : 1;
} finally {
  await mock.stop();
  rmSync(work, { recursive: true, force: true });
}

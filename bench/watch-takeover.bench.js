// Watch takeover with a shared store (issue 34): how long after the lease's holder is SIGKILLed a
// standby takes over, against the bound `watch --help` states (the lease and a standby's poll: 35 s
// at the default --lease 30s, 3.5 s at --lease 3s). Two "machines" (a home directory each) run
// `taxprep watch --json` on one PostgreSQL store (TAXPREP_TEST_POSTGRES_URL and PGPASSFILE, which
// .ci/with-postgres sets) against one `serve --mock`; the holder is killed at a random point of its renewal period
// (uniform over a third of the lease), and the time runs from the kill to the standby's
// `{"watch":"holding"}` line. ROUNDS rounds at --lease 3s, then one at the default 30s
// (`node bench/watch-takeover.bench.js ROUNDS`). Target: every takeover within its bound.
// Bounded: about ROUNDS x 5 s + 40 s, a few dozen requests to the mock.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROUNDS = Number(process.argv[2] ?? 6);
const STATE_URL = process.env.TAXPREP_TEST_POSTGRES_URL;
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const bin = join(repoRoot, 'bin', 'taxprep.cjs');

if (STATE_URL === undefined) {
  process.stdout.write('skipped: no PostgreSQL (run it as .ci/with-postgres node bench/watch-takeover.bench.js)\n');
  process.exit(0);
}

/** A process of taxprep with its output gathered; `lines(stream)` are its complete lines so far. */
function start(args, env) {
  const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk) => (output.stdout += chunk));
  child.stderr.on('data', (chunk) => (output.stderr += chunk));
  const ended = new Promise((resolve) => child.on('exit', resolve));
  return { child, output, ended };
}

async function until(condition, what, limitMs, watch) {
  const deadline = performance.now() + limitMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}${watch === undefined ? '' : `; it said: ${watch.output.stderr}`}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return performance.now();
}

const told = (watch, event) => watch.output.stderr.split('\n').some((line) => line.startsWith(`{"watch":"${event}"`));

const mock = start(['serve', '--mock', '--port', '0', '--json'], { PATH: process.env.PATH, HOME: mkdtempSync(join(tmpdir(), 'taxprep-bench-takeover-mock-')) });
await until(() => mock.output.stdout.includes('\n'), 'the mock to start', 20_000);
const started = JSON.parse(mock.output.stdout.slice(0, mock.output.stdout.indexOf('\n')));
const key = started.keys.find((entry) => entry.label === 'Acme production key').key;

function machine(namespace) {
  const home = mkdtempSync(join(tmpdir(), 'taxprep-bench-takeover-'));
  writeFileSync(join(home, 'clients.txt'), '1001\n');
  return {
    home,
    env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), XDG_DATA_HOME: join(home, 'data'), XDG_STATE_HOME: join(home, 'state'), TAXPREP_BASE_URL: started.base_url, TAXPREP_API_KEY: key, TAXPREP_STATE_URL: STATE_URL, TAXPREP_STATE_NAMESPACE: namespace, PGPASSFILE: process.env.PGPASSFILE ?? '' },
  };
}

/** One takeover at `leaseMs`: ms from the holder's SIGKILL to the standby's word that it holds the lease. */
async function takeover(leaseMs) {
  const namespace = `bench-${randomBytes(4).toString('hex')}`;
  const watchArgs = (on) => ['watch', '--json', '--budget', '20/min', '--lease', `${leaseMs}ms`, '--accounts', join(on.home, 'clients.txt')];
  const a = machine(namespace);
  const b = machine(namespace);
  const holder = start(watchArgs(a), a.env);
  await until(() => told(holder, 'holding'), 'the first watch to hold the lease', 30_000, holder);
  const standby = start(watchArgs(b), b.env);
  try {
    await until(() => told(standby, 'standby'), 'the second watch to stand by', 30_000, standby);
    // Anywhere in the holder's renewal period: right after a renewal is the worst case.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * (leaseMs / 3)));
    holder.child.kill('SIGKILL');
    const killedAt = performance.now();
    const tookOverAt = await until(() => told(standby, 'holding'), 'the standby to take over', leaseMs * 3, standby);
    return tookOverAt - killedAt;
  } finally {
    holder.child.kill('SIGKILL');
    standby.child.kill('SIGKILL');
    await Promise.all([holder.ended, standby.ended]);
  }
}

const boundOf = (leaseMs) => leaseMs + Math.round(leaseMs / 6);
let failed = false;
try {
  const rows = [];
  for (const [leaseMs, rounds] of [
    [3_000, ROUNDS],
    [30_000, 1],
  ]) {
    const times = [];
    for (let round = 0; round < rounds; round += 1) times.push(await takeover(leaseMs));
    const worst = Math.max(...times);
    const bound = boundOf(leaseMs);
    const met = worst <= bound;
    failed ||= !met;
    rows.push(`| --lease ${leaseMs / 1000}s | ${rounds} | ${times.map((ms) => (ms / 1000).toFixed(2)).join(', ')} | ${(worst / 1000).toFixed(2)} s | ${(bound / 1000).toFixed(1)} s | ${(worst / bound).toFixed(2)}x | ${met ? 'met' : 'MISSED'} |`);
  }
  process.stdout.write(`| lease | rounds | takeover after the holder's SIGKILL (s) | worst | bound | worst / bound | target |\n|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`);
} finally {
  mock.child.kill('SIGTERM');
  await mock.ended;
}
process.exitCode = failed ? 1 : 0;

// The in-process part of bench/watch-latency.bench.js, bundled from src/ by it (esbuild): the real
// `taxprep watch` command (src/cli.ts's main) and the real mock with --simulate
// (src/mock/server.ts), sharing one virtual clock. See the bench for what is measured.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { main } from '../src/cli';
import { parseFixture } from '../src/mock/fixture';
import { createMockServer } from '../src/mock/server';
import { STEP_MS } from '../src/mock/simulation/preparer';

const KEY = 'tpk_benchWatchLatency0000000001';
const FIRST_ID = 40_001;

/** Per account: one project in progress with a client request open, one further along; the simulation moves both. */
function fixture(accounts) {
  const ids = Array.from({ length: accounts }, (_, index) => FIRST_ID + index);
  return parseFixture({
    partners: [{ id: 1, name: 'Bench Partners', api_keys: [{ key: KEY, label: 'bench' }] }],
    accounts: ids.map((id) => ({ id, partner_id: 1, email: `client.${id}@example.com`, first_name: 'Bench', last_name: 'Client' })),
    projects: ids.flatMap((id) => [
      { id: id * 10, account_id: id, type: 'tax_return', tax_year: 2025, status: 'in_progress', progress_percentage: 30, outstanding_items: [{ type: 'client_request', description: 'Confirm the dependents', priority: 'medium' }] },
      { id: id * 10 + 1, account_id: id, type: 'quarterly_estimate', tax_year: 2025, status: 'in_progress', progress_percentage: 65 },
    ]),
  });
}

/** What a watch can report, as keys of its events: `event id[ item]` -> the value it is compared by. */
function truthOf(state) {
  const truth = new Map();
  for (const project of state.projects) {
    truth.set(`project.status ${project.id}`, project.status);
    truth.set(`project.progress ${project.id}`, project.progress_percentage);
    truth.set(`project.estimated_completion ${project.id}`, project.estimated_completion === null ? null : Date.parse(project.estimated_completion));
  }
  for (const item of state.outstandingItems) truth.set(`item ${item.project_id} ${item.description} ${Date.parse(item.requested_at)}`, true);
  for (const deliverable of state.deliverables) truth.set(`deliverable ${deliverable.id}`, deliverable.status);
  return truth;
}

/** The key of a printed change, as truthOf names it. */
function keyOf(change) {
  if (change.event.startsWith('project.')) return `${change.event} ${change.project_id}`;
  if (change.event.startsWith('item.')) return `item ${change.project_id} ${change.item.description} ${Date.parse(change.item.requested_at)}`;
  return `deliverable ${change.deliverable_id}`;
}

/**
 * One watch at `budget` a minute over `accounts` accounts, for `steps` simulated hours after its
 * first look (or until `maxRequests`, or `wallMs` of real time): the latency of every change, from
 * the simulation's step that made it to the moment the watch printed it.
 */
export async function measure({ accounts, budget, steps, maxRequests, wallMs }) {
  const home = mkdtempSync(join(tmpdir(), 'taxprep-bench-watch-latency-'));
  let requests = 0;
  const server = await createMockServer({ host: '127.0.0.1', port: 0, rateLimits: [], fixture: fixture(accounts), simulationSeed: 7, onRequest: () => (requests += 1) });
  const { store } = server.deps;
  const idsPath = join(home, 'clients.txt');
  writeFileSync(idsPath, `${Array.from({ length: accounts }, (_, index) => FIRST_ID + index).join('\n')}\n`);
  // A full look at the start: 1 deliverable page, each account's list, each project's status.
  const firstLook = 1 + accounts + 2 * accounts;
  const boundMs = (1.25 * firstLook * 60_000) / budget;

  let offsetMs = 0;
  const now = () => Date.now() + offsetMs;
  // Changes not printed yet: key -> { since (virtual ms), was (the value the watch last knew) }.
  const pending = new Map();
  const latencies = [];
  let truth;
  let tracking = false;
  let reverted = 0;
  let stepsTracked = 0;
  let stop = false;
  const startedWall = Date.now();
  let stopReason = `${steps} simulated hours`;

  /** Takes the simulation up to now (any request does) and notes what changed, at the time of its step. */
  async function observe() {
    await fetch(`${server.appUrl}/_mock/clock`);
    const cursor = store.state.simulation;
    const stepAt = cursor.started_at_ms + cursor.steps_done * STEP_MS;
    const next = truthOf(store.state);
    for (const [key, value] of next) {
      const before = truth.get(key);
      if (before === value) continue;
      const open = pending.get(key);
      if (open === undefined) pending.set(key, { since: stepAt, was: before });
      else if (open.was === value) {
        // Moved and back before any look could see it: nothing for a watch to report.
        pending.delete(key);
        reverted += 1;
      }
    }
    for (const [key, value] of truth) {
      if (next.has(key)) continue;
      const open = pending.get(key);
      if (open === undefined) pending.set(key, { since: stepAt, was: value });
      else if (open.was === undefined) {
        pending.delete(key);
        reverted += 1;
      }
    }
    truth = next;
  }

  const clock = {
    now: () => new Date(now()),
    async sleep(ms, signal) {
      if (signal?.aborted) throw signal.reason;
      let advance = ms;
      if (tracking) {
        const cursor = store.state.simulation;
        const nextStep = cursor.started_at_ms + (cursor.steps_done + 1) * STEP_MS;
        // Nothing left to report: the quiet time until the next step is skipped (see the bench).
        if (pending.size === 0 && nextStep > now() + ms) advance = nextStep - now();
        if (now() + advance >= nextStep) stepsTracked += 1;
      }
      offsetMs += advance;
      await server.deps.clock.advance(advance);
      if (!tracking && requests >= firstLook) {
        tracking = true;
        await fetch(`${server.appUrl}/_mock/clock`);
        truth = truthOf(store.state);
      } else if (tracking && Math.floor((now() - store.state.simulation.started_at_ms) / STEP_MS) > store.state.simulation.steps_done) await observe();
      if (stepsTracked > steps) stop = true;
      else if (requests >= maxRequests) [stop, stopReason] = [true, `${maxRequests} requests`];
      else if (Date.now() - startedWall > wallMs) [stop, stopReason] = [true, `the ${wallMs / 1000} s time guard`];
      if (stop) process.emit('SIGINT');
      if (signal?.aborted) throw signal.reason;
    },
  };

  const stdout = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue;
        const open = pending.get(keyOf(JSON.parse(line)));
        if (open === undefined) continue;
        latencies.push(now() - open.since);
        pending.delete(keyOf(JSON.parse(line)));
      }
      callback();
    },
  });
  const stderrLines = [];
  const stderr = new Writable({
    write(chunk, _encoding, callback) {
      stderrLines.push(chunk.toString('utf8'));
      callback();
    },
  });
  const env = { HOME: home, XDG_STATE_HOME: join(home, 'state'), XDG_CONFIG_HOME: join(home, 'config'), XDG_DATA_HOME: join(home, 'data'), TAXPREP_BASE_URL: server.baseUrl, TAXPREP_API_KEY: KEY };
  let exitCode;
  try {
    exitCode = await main(['watch', '--json', '--budget', `${budget}/min`, '--accounts', idsPath], {
      env,
      clock,
      io: { stdout, stderr, stdoutIsTTY: false, stderrIsTTY: false, stdoutColor: false },
    });
  } finally {
    await server.close();
    rmSync(home, { recursive: true, force: true });
  }
  // A change still waiting longer than the bound is a miss; a younger one is not due yet.
  const missed = [...pending.values()].filter((open) => now() - open.since > boundMs).length;
  return { accounts, budget, firstLook, boundMs, latencies, missed, notDue: pending.size - missed, reverted, requests, exitCode, stopReason, wallMs: Date.now() - startedWall, stderr: stderrLines.join('') };
}

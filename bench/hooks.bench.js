// Webhook delivery (issue 24):
//  1. throughput: `taxprep hooks deliver` of 1,000 queued events to a local receiver, beside a bare
//     undici POST loop of the same 1,000 requests at the same concurrency (8), each a process of its
//     own (start-up included in both). The loop sends what taxprep sends, less the work of making
//     it: the same bodies to the same receiver, with the same headers (names, and values of the same
//     lengths: a fixed signature instead of an HMAC). taxprep also signs each request, reads each
//     body back from its outbox and appends (fdatasync, group-committed) each outcome.
//     A warm-up pair first (taxprep's first run of a command compiles and caches its code, as a
//     user's first run does), then ROUNDS pairs, one run of each side after the other in
//     alternating order; the ratio is the median of the pairs' ratios, so that a shared machine's
//     changing load hits both sides of a pair alike. Target: taxprep's rate at least 0.9x the bare
//     loop's.
//  2. memory: `taxprep hooks deliver` over an outbox of 100,000 pending deliveries, none due yet
//     (it reads them all and sends nothing), peak RSS from GNU time beside `node -e 0`. Target: under 100 MB.
// Bounded: (1 + ROUNDS) x 2 x 1,000 requests to 127.0.0.1, one file of 100,000 lines; under a minute.
import { createServer } from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCounted } from './pacing.js';

const EVENTS = 1_000;
const PENDING = 100_000;
const CONCURRENCY = 8;
const ROUNDS = 7;
const TARGET_RATIO = 0.9;
const TARGET_MB = 100;
const BASE_URL = 'http://127.0.0.1:9/v1beta';
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const bin = join(repoRoot, 'bin', 'taxprep.cjs');
const workDir = mkdtempSync(join(tmpdir(), 'taxprep-bench-hooks-'));
const env = { PATH: process.env.PATH, HOME: workDir, XDG_CONFIG_HOME: join(workDir, 'config'), XDG_DATA_HOME: join(workDir, 'data'), TAXPREP_BASE_URL: BASE_URL };

let received = 0;
const receiver = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    received += 1;
    response.writeHead(204).end();
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${receiver.address().port}/hook`;

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const eventId = (index) => `msg_bench${String(index).padStart(22, '0')}`;

function body(index) {
  const change = { event: 'project.progress', account_id: 1001, project_id: 5000 + index, old: 20, new: 45, seen_at: '2026-11-25T10:00:00.000Z' };
  return JSON.stringify({ type: change.event, timestamp: change.seen_at, data: change });
}

/** An outbox of `count` committed events for `hook`, due at `at`. */
function writeOutbox(count, hook, at) {
  const digest = createHash('sha256').update(BASE_URL).digest('hex').slice(0, 12);
  const directory = join(workDir, 'data', 'taxprep', 'outbox');
  mkdirSync(directory, { recursive: true });
  const lines = Array.from({ length: count }, (_, index) =>
    JSON.stringify({ type: 'event', id: eventId(index), event: 'project.progress', hooks: [hook], body: body(index), seen_at: '2026-11-25T10:00:00.000Z', at }),
  );
  writeFileSync(join(directory, `no-profile-${digest}.ndjson`), `${lines.join('\n')}\n`);
}

async function taxprep(args, timeFile) {
  const result = await runCounted([process.execPath, bin, ...args], env, timeFile);
  if (result.exitCode !== 0) throw new Error(`taxprep ${args.join(' ')} exited ${result.exitCode}: ${result.stderr}`);
  return result;
}

try {
  await taxprep(['hooks', 'add', url]);
  const hookId = JSON.parse(readFileSync(join(workDir, 'config', 'taxprep', 'hooks.json'), 'utf8')).hooks[0].id;

  // 1. Throughput.
  const ids = Array.from({ length: EVENTS }, (_, index) => eventId(index));
  const loopScript = `
    const { Agent } = require(${JSON.stringify(join(repoRoot, 'node_modules', 'undici'))});
    const agent = new Agent({ connections: ${CONCURRENCY} });
    const { ids, bodies } = require(${JSON.stringify(join(workDir, 'requests.json'))});
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = 'v1,' + 'A'.repeat(43) + '=';
    let next = 0;
    const origin = ${JSON.stringify(new URL(url).origin)};
    const worker = async () => {
      while (next < bodies.length) {
        const index = next++;
        const headers = { 'content-type': 'application/json', 'user-agent': 'taxprep-webhooks', 'webhook-id': ids[index], 'webhook-timestamp': timestamp, 'webhook-signature': signature };
        const r = await agent.request({ origin, path: '/hook', method: 'POST', headers, body: bodies[index] });
        await r.body.dump();
      }
    };
    Promise.all(Array.from({ length: ${CONCURRENCY} }, worker)).then(() => agent.close());`;
  writeFileSync(join(workDir, 'requests.json'), JSON.stringify({ ids, bodies: ids.map((_, index) => body(index)) }));
  writeFileSync(join(workDir, 'loop.cjs'), loopScript);
  const deliver = async () => {
    writeOutbox(EVENTS, hookId, '2026-11-25T10:00:00.000Z');
    received = 0;
    const { seconds } = await taxprep(['hooks', 'deliver']);
    if (received !== EVENTS) throw new Error(`taxprep delivered ${received} of ${EVENTS}`);
    return seconds;
  };
  const loop = async () => {
    received = 0;
    const bare = await runCounted([process.execPath, join(workDir, 'loop.cjs')], env);
    if (bare.exitCode !== 0 || received !== EVENTS) throw new Error(`bare loop: exit ${bare.exitCode}, ${received} received: ${bare.stderr}`);
    return bare.seconds;
  };
  const times = { ours: [], bare: [] };
  for (let round = 0; round <= ROUNDS; round += 1) {
    const pair = round % 2 === 0 ? [['ours', deliver], ['bare', loop]] : [['bare', loop], ['ours', deliver]];
    for (const [side, measure] of pair) {
      const seconds = await measure();
      if (round > 0) times[side].push(seconds);
    }
  }
  const ratio = median(times.bare.map((bare, index) => bare / times.ours[index]));
  console.log(`| delivery of ${EVENTS} events, concurrency ${CONCURRENCY}, ${ROUNDS} pairs | taxprep hooks deliver ${median(times.ours).toFixed(2)} s | bare undici loop ${median(times.bare).toFixed(2)} s | ratio ${ratio.toFixed(2)}x (goal >= ${TARGET_RATIO}) |`);

  // 2. Memory with 100,000 pending deliveries, none due.
  writeOutbox(PENDING, hookId, '2099-01-01T00:00:00.000Z');
  received = 0;
  const pending = await taxprep(['hooks', 'deliver'], join(workDir, 'deliver.time'));
  if (received !== 0) throw new Error(`taxprep sent ${received} deliveries not due`);
  const baseline = await runCounted([process.execPath, '-e', '0'], env, join(workDir, 'node.time'));
  console.log(`| peak RSS, ${PENDING} pending deliveries | taxprep hooks deliver ${pending.mb.toFixed(1)} MB | node -e 0 ${baseline.mb.toFixed(1)} MB | goal < ${TARGET_MB} MB |`);
  if (ratio < TARGET_RATIO || pending.mb >= TARGET_MB) process.exitCode = 1;
} finally {
  receiver.closeAllConnections();
  receiver.close();
  rmSync(workDir, { recursive: true, force: true });
}

// Batch login links:
//  1. limits off, against `taxprep serve --mock` seeded with 1,000 clients: `taxprep login-link
//     --from ids --json` for 1,000 links (links a second), beside a baseline of the same 1,000 POSTs
//     sent straight from this process with the same concurrency;
//  2. paced, against a limiter in this bench of each kind a service may use (fixed windows aligned
//     to their length, and an exact sliding log), 250 links at 50 per 5 s (the numbers of the issue that found the pacer leaving slots unused), several rounds each: the
//     time from the first admitted request to the last, as a ratio to an ideal client's (one that
//     sends every request the moment the limit admits it); target at least 0.95 in every round,
//     with no item failing and no 429. The limiter is here, not in the mock, so that the pacing is
//     measured against both kinds whatever the mock does;
//  3. the same 250 links against the mock itself, its limit set to 50 per 5 s (`PUT
//     /_mock/rate-limits`), the admissions read from its request log: what a user who tries the
//     issue's numbers with `taxprep serve --mock --rate-limit 50/5s` sees.
// Wall-clock times include the CLI's start-up; the ledger is written (fsync'd) as in real use.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { idealSpanMs } from './pacing.js';

const ACCOUNTS = 1000;
const PACED_LINKS = 250;
const PACED_LIMIT = 50;
const PACED_WINDOW_MS = 5000;
const ROUNDS = Number(process.argv[2] ?? 3);
const CONCURRENCY = 4;
const TARGET_RATIO = 0.95;
const KEY = 'tpk_benchLoginLinksKey0000000001';
const FIRST_ID = 10_001;
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const bin = join(repoRoot, 'bin', 'taxprep.cjs');

function fixture() {
  return {
    partners: [{ id: 1, name: 'Bench Partners', api_keys: [{ key: KEY, label: 'bench' }] }],
    accounts: Array.from({ length: ACCOUNTS }, (_, index) => ({
      id: FIRST_ID + index,
      partner_id: 1,
      email: `client.${FIRST_ID + index}@example.com`,
      first_name: 'Bench',
      last_name: 'Client',
    })),
  };
}

async function startMock(seedPath) {
  const child = spawn(process.execPath, [bin, 'serve', '--mock', '--port', '0', '--json', '--seed', seedPath, '--rate-limit', 'off'], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = await once(createInterface({ input: child.stdout }), 'line');
  const started = JSON.parse(line);
  return { child, baseUrl: started.base_url, appUrl: started.app_url };
}

async function control(mock, method, path, body) {
  const response = await fetch(`${mock.appUrl}/_mock${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} /_mock${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** Runs the CLI; resolves with its exit code, NDJSON lines and wall time. */
async function runBatch(baseUrl, ids, workDir, name) {
  const idsPath = join(workDir, `${name}.txt`);
  writeFileSync(idsPath, `${ids.join('\n')}\n`);
  const started = performance.now();
  const child = spawn(process.execPath, [bin, '--json', 'login-link', '--from', idsPath, '--concurrency', String(CONCURRENCY), '--ledger', join(workDir, `${name}.ndjson`)], {
    env: { PATH: process.env.PATH, HOME: workDir, TAXPREP_BASE_URL: baseUrl, TAXPREP_API_KEY: KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const [exitCode] = await once(child, 'exit');
  const seconds = (performance.now() - started) / 1000;
  const lines = stdout.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
  return { exitCode, seconds, failed: lines.filter((line) => 'error' in line).length, issued: lines.filter((line) => 'login_link' in line).length, stderr };
}

/** The same POSTs straight from this process, `CONCURRENCY` at a time: the ceiling a client can reach. */
async function baseline(mock, ids) {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++];
      const response = await fetch(`${mock.baseUrl}/accounts/${id}/login-link`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: '{}',
      });
      if (response.status !== 201) throw new Error(`baseline POST for ${id}: ${response.status}`);
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return (performance.now() - started) / 1000;
}

/** Fixed windows aligned to multiples of their length; returns the headers of an admission, or undefined (429). */
function fixedWindow() {
  const counts = new Map();
  return {
    admit(nowMs) {
      const window = Math.floor(nowMs / PACED_WINDOW_MS);
      const used = counts.get(window) ?? 0;
      if (used >= PACED_LIMIT) return { resetMs: (window + 1) * PACED_WINDOW_MS };
      counts.set(window, used + 1);
      return { remaining: PACED_LIMIT - used - 1, resetMs: (window + 1) * PACED_WINDOW_MS };
    },
    /** When an ideal client's last request is admitted, given when its first was. */
    idealEndMs: (firstMs) => (Math.floor(firstMs / PACED_WINDOW_MS) + Math.ceil(PACED_LINKS / PACED_LIMIT) - 1) * PACED_WINDOW_MS,
  };
}

/** At most the limit in any window's length; Reset is when the oldest admission leaves the log. */
function slidingLog() {
  const log = [];
  return {
    admit(nowMs) {
      while (log.length > 0 && log[0] <= nowMs - PACED_WINDOW_MS) log.shift();
      if (log.length >= PACED_LIMIT) return { resetMs: log[0] + PACED_WINDOW_MS };
      log.push(nowMs);
      return { remaining: PACED_LIMIT - log.length, resetMs: log[0] + PACED_WINDOW_MS };
    },
    idealEndMs: (firstMs) => firstMs + idealSpanMs(PACED_LINKS, PACED_LIMIT, PACED_WINDOW_MS),
  };
}

/** Answers POST .../accounts/:id/login-link as the contract says, limited by `limiter`; records admission times. */
async function startLimitedService(limiter) {
  const admitted = [];
  let refused = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const match = /\/accounts\/(\d+)\/login-link$/.exec(request.url ?? '');
      const nowMs = Date.now();
      if (request.method !== 'POST' || !match) {
        response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'not found' } }));
        return;
      }
      const admission = limiter.admit(nowMs);
      // Epoch seconds with the milliseconds as a fraction: a whole-second reset would hide when a sliding log frees a slot.
      const headers = { 'content-type': 'application/json', 'x-ratelimit-limit': String(PACED_LIMIT), 'x-ratelimit-reset': String(admission.resetMs / 1000) };
      if (admission.remaining === undefined) {
        refused += 1;
        const retryAfter = String(Math.max(1, Math.ceil((admission.resetMs - nowMs) / 1000)));
        const details = { limit: PACED_LIMIT, window_seconds: PACED_WINDOW_MS / 1000, reset_at: new Date(admission.resetMs).toISOString() };
        response
          .writeHead(429, { ...headers, 'x-ratelimit-remaining': '0', 'retry-after': retryAfter })
          .end(JSON.stringify({ error: { code: 'RATE_LIMIT_EXCEEDED', message: 'Rate limit exceeded', details } }));
        return;
      }
      admitted.push(nowMs);
      const createdAt = new Date(nowMs);
      response.writeHead(201, { ...headers, 'x-ratelimit-remaining': String(admission.remaining) }).end(
        JSON.stringify({
          login_link: `https://app.example.test/login/${match[1]}-${admitted.length}`,
          user_email: `client.${match[1]}@example.com`,
          expires_at: new Date(nowMs + 168 * 3_600_000).toISOString(),
          expires_in_hours: 168,
          purpose: 'expired_link',
          redirect_url: null,
          notification_sent: true,
          previous_links_invalidated: 0,
          created_at: createdAt.toISOString(),
          account_id: Number(match[1]),
        }),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/v1beta`,
    admitted,
    refused: () => refused,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** One paced round: the CLI's span from first to last admission against an ideal client's. */
async function pacedRound(kind, makeLimiter, ids, workDir, round) {
  const limiter = makeLimiter();
  const service = await startLimitedService(limiter);
  try {
    const result = await runBatch(service.baseUrl, ids, workDir, `paced-${kind}-${round}`);
    const first = service.admitted[0];
    const last = service.admitted.at(-1);
    const ratio = (limiter.idealEndMs(first) - first) / (last - first);
    const ok = result.exitCode === 0 && result.failed === 0 && result.issued === ids.length && service.refused() === 0 && ratio >= TARGET_RATIO;
    return { kind, round, seconds: (last - first) / 1000, idealSeconds: (limiter.idealEndMs(first) - first) / 1000, ratio, refused: service.refused(), failed: result.failed, ok };
  } finally {
    await service.close();
  }
}

/** One paced round against the mock's own sliding-log limiter, timed by its request log. */
async function mockRound(mock, ids, workDir, round) {
  await control(mock, 'POST', '/reset');
  await control(mock, 'PUT', '/rate-limits', { windows: [{ limit: PACED_LIMIT, window_seconds: PACED_WINDOW_MS / 1000 }] });
  const result = await runBatch(mock.baseUrl, ids, workDir, `paced-mock-${round}`);
  const { requests } = await control(mock, 'GET', '/requests');
  const admitted = requests.filter((request) => request.status === 201).map((request) => Date.parse(request.at));
  const refused = requests.filter((request) => request.status === 429).length;
  const first = admitted[0];
  const last = admitted.at(-1);
  const ideal = slidingLog().idealEndMs(first) - first;
  const ratio = ideal / (last - first);
  const ok = result.exitCode === 0 && result.failed === 0 && result.issued === ids.length && refused === 0 && ratio >= TARGET_RATIO;
  await control(mock, 'PUT', '/rate-limits', { windows: [] });
  return { kind: 'the mock', round, seconds: (last - first) / 1000, idealSeconds: ideal / 1000, ratio, refused, failed: result.failed, ok };
}

const workDir = mkdtempSync(join(tmpdir(), 'taxprep-bench-links-'));
const seedPath = join(workDir, 'seed.json');
writeFileSync(seedPath, JSON.stringify(fixture()));
const mock = await startMock(seedPath);
try {
  const ids = Array.from({ length: ACCOUNTS }, (_, index) => FIRST_ID + index);

  const baselineSeconds = await baseline(mock, ids);
  await control(mock, 'POST', '/reset');
  const unpaced = await runBatch(mock.baseUrl, ids, workDir, 'unpaced');
  if (unpaced.exitCode !== 0) throw new Error(`unpaced batch exited ${unpaced.exitCode}: ${unpaced.stderr}`);

  const rows = [
    ['baseline: 1,000 POSTs from this process', `${(ACCOUNTS / baselineSeconds).toFixed(0)} links/s`, `${baselineSeconds.toFixed(2)} s`],
    ['taxprep login-link, 1,000 links, limits off', `${(unpaced.issued / unpaced.seconds).toFixed(0)} links/s`, `${unpaced.seconds.toFixed(2)} s (${(baselineSeconds / unpaced.seconds).toFixed(2)}x baseline speed)`],
  ];
  for (const row of rows) process.stdout.write(`${row[0].padEnd(48)} ${row[1].padEnd(20)} ${row[2]}\n`);

  const pacedIds = ids.slice(0, PACED_LINKS);
  const rounds = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    const kinds = [
      () => pacedRound('fixed windows', fixedWindow, pacedIds, workDir, round),
      () => pacedRound('sliding log', slidingLog, pacedIds, workDir, round),
      () => mockRound(mock, pacedIds, workDir, round),
    ];
    for (const paced of kinds) {
      const result = await paced();
      rounds.push(result);
      process.stdout.write(
        `paced ${PACED_LINKS} links at ${PACED_LIMIT}/${PACED_WINDOW_MS / 1000}s, ${result.kind.padEnd(13)} round ${round}: ` +
          `${result.seconds.toFixed(2)} s, ideal ${result.idealSeconds.toFixed(2)} s, ratio ${result.ratio.toFixed(3)}, ${result.failed} failed, ${result.refused} answered 429\n`,
      );
    }
  }
  const ok = rounds.every((result) => result.ok);
  process.stdout.write(`paced batches: ${ok ? 'meet' : 'MISS'} the target (ratio to an ideal client >= ${TARGET_RATIO} in every round, no item failing, no 429)\n`);
  process.exitCode = ok ? 0 : 1;
} finally {
  mock.child.kill('SIGTERM');
  if (mock.child.exitCode === null) await once(mock.child, 'exit');
  rmSync(workDir, { recursive: true, force: true });
}

import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeHome, runCli, startCli } from '../helpers/cli';
import { startMock, type RunningMock } from '../helpers/mock';
import { startReceiver, type Received, type ReceiverAnswer } from '../helpers/webhookReceiver';

/**
 * `taxprep hooks` with `watch`, the real CLI against the mock, with receivers in this process
 * that verify every request with the `standardwebhooks` reference library (not taxprep's code).
 */

let mock: RunningMock;
let home: string;
const servers: Server[] = [];

beforeAll(async () => {
  mock = await startMock({ rateLimits: [] });
});
afterAll(() => mock.close());
beforeEach(async () => {
  await mock.deps.store.reset();
  mock.deps.settings.faults.latencyMs = 0;
  home = makeHome();
});
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const env = () => ({ TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: mock.keys.acme });
const taxprep = (args: string[]) => runCli(args, { env: env(), home });
const ACCOUNTS = () => {
  const path = join(home, 'clients.txt');
  require('node:fs').writeFileSync(path, '1001\n1002\n1003\n1004\n1005\n1006\n');
  return path;
};

async function control(path: string, body?: unknown, method = 'POST'): Promise<any> {
  const response = await mock.request(`/_mock${path}`, { method, body });
  expect(response.status).toBeLessThan(300);
  return response.json;
}

/** A receiver of this suite's, closed after each test. */
const receiver = (answer: ReceiverAnswer) => startReceiver(servers, answer);

async function addHook(args: string[]): Promise<{ id: string; secret: string }> {
  const result = await taxprep(['hooks', 'add', '--insecure-storage', ...args, '--retry-schedule', '100ms,200ms,300ms,400ms,500ms,500ms,500ms,500ms', '--timeout', '1s', '--json']);
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { id: string; secret: string };
}

const changesOf = (received: Received[]) => received.filter((request) => request.verified).map((request) => JSON.parse(request.body) as { type: string; data: Record<string, unknown> });

/** Every id carries one body only. */
function expectOneBodyPerId(received: Received[]): void {
  const bodies = new Map<string, string>();
  for (const request of received) {
    if (bodies.has(request.id)) expect(request.body).toBe(bodies.get(request.id));
    bodies.set(request.id, request.body);
  }
}

describe('hooks add and the hooks file', () => {
  it('stores hooks 0600, prints the secret once, redacts headers and secrets everywhere else', async () => {
    const added = await taxprep(['hooks', 'add', '--insecure-storage', 'https://crm.example.com/in', '--header', 'Authorization: Bearer very-secret-token', '--events', 'deliverable.*', '--json']);
    expect(added.exitCode).toBe(0);
    const hook = JSON.parse(added.stdout);
    expect(hook).toMatchObject({ url: 'https://crm.example.com/in', events: ['deliverable.*'], format: 'standard', headers: ['Authorization: …oken'] });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const hooksFile = join(home, '.config', 'taxprep', 'hooks.json');
    expect(statSync(hooksFile).mode & 0o777).toBe(0o600);
    for (const args of [['hooks', 'list'], ['hooks', 'list', '--json'], ['hooks', 'show', hook.id], ['hooks', 'show', hook.id, '--json']]) {
      const shown = await taxprep(args);
      expect(shown.exitCode).toBe(0);
      expect(`${shown.stdout}${shown.stderr}`).not.toContain('very-secret-token');
      expect(`${shown.stdout}${shown.stderr}`).not.toContain(hook.secret);
    }
    expect(await taxprep(['hooks', 'show', hook.id, '--secret'])).toEqual({ exitCode: 0, stdout: `${hook.secret}\n`, stderr: '' });
  });

  it('refuses bad input with exit 2, naming the thing and the rule, and changes nothing on disk', async () => {
    await taxprep(['hooks', 'add', '--insecure-storage', 'https://crm.example.com/in']);
    const hooksFile = join(home, '.config', 'taxprep', 'hooks.json');
    const before = readFileSync(hooksFile, 'utf8');
    const cases: Array<[string[], string]> = [
      [['hooks', 'show', 'hk_000000000000'], 'unknown hook hk_000000000000'],
      [['hooks', 'remove', 'hk_000000000000'], 'unknown hook hk_000000000000'],
      [['hooks', 'add', '--insecure-storage', 'not a url'], '"not a url" is not a URL'],
      [['hooks', 'add', '--insecure-storage', 'http://crm.example.com/in'], 'plain http is refused to any host but loopback'],
      [['hooks', 'add', '--insecure-storage', 'https://crm.example.com/in', '--header', 'NoColonHere'], 'must be "Name: value"'],
      [['hooks', 'add', '--insecure-storage', 'https://crm.example.com/in', '--events', 'deliverables.*'], '--events: "deliverables.*" matches no event name'],
    ];
    for (const [args, message] of cases) {
      const result = await taxprep(args);
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
      expect(result.stdout).toBe('');
      expect(readFileSync(hooksFile, 'utf8')).toBe(before);
    }
    require('node:fs').writeFileSync(hooksFile, '{"format":"taxprep-hooks","version":1,"hooks":[{"id":');
    const damaged = await taxprep(['hooks', 'list']);
    expect(damaged.exitCode).toBe(2);
    expect(damaged.stderr).toContain(`the hooks file ${hooksFile} is damaged: not valid JSON; it was left as it is`);
    expect(readFileSync(hooksFile, 'utf8')).toBe('{"format":"taxprep-hooks","version":1,"hooks":[{"id":');
  });
});

describe('watch delivers every change to every matching hook', () => {
  it('through 500s, timeouts, a 410, a 429 with Retry-After, an --exec that fails twice and a secret rotation', async () => {
    const clients = ACCOUNTS();
    let random = 7;
    const flaky = await receiver(() => ((random = (random * 48271) % 2147483647) % 3 === 0 ? { status: 500 } : { status: 204 }));
    const slow = await receiver((_request, count) => (count % 3 === 1 ? { status: 200, delayMs: 1500 } : { status: 200 }));
    const gone = await receiver(() => ({ status: 410 }));
    const limited = await receiver((_request, count) => (count === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 202 }));
    const hooks = {
      flaky: await addHook([flaky.url]),
      slow: await addHook([slow.url]),
      gone: await addHook([gone.url]),
      limited: await addHook([limited.url, '--events', 'deliverable.*']),
    };
    flaky.secrets.push(hooks.flaky.secret);
    slow.secrets.push(hooks.slow.secret);
    gone.secrets.push(hooks.gone.secret);
    limited.secrets.push(hooks.limited.secret);
    const execLog = join(home, 'exec.ndjson');
    const counter = join(home, 'exec.count');
    const script = `n=$(cat ${counter} 2>/dev/null || echo 0); echo $((n+1)) > ${counter}; [ "$n" -ge 2 ] || exit 3; { cat; echo; } >> ${execLog}; echo "$TAXPREP_WEBHOOK_ID $TAXPREP_EVENT_TYPE" >> ${execLog}.env`;
    await addHook(['--exec', script, '--ordered']);

    const once = ['watch', '--once', '--budget', '100/min', '--accounts', clients];
    expect((await taxprep(once)).exitCode).toBe(0);
    await control('/projects/5001', { status: 'in_progress', progress_percentage: 45 });
    await control('/deliverables/9001', { status: 'completed' });
    await control('/projects/5002/outstanding-items', { type: 'client_request', description: 'Confirm the Q4 payment date', priority: 'high' });
    const seen = await taxprep([...once, '--json']);
    expect(seen.exitCode, seen.stderr).toBe(0);
    const changes = seen.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { event: string });
    expect(changes.map((change) => change.event).sort()).toEqual(['deliverable.status', 'item.appeared', 'project.progress', 'project.status']);
    expect(seen.stderr).toContain('is disabled: the receiver answered 410 Gone');

    const rest = await taxprep(['hooks', 'deliver', '--wait']);
    expect(rest.exitCode, rest.stderr).toBe(0);
    const pending = await taxprep(['hooks', 'deliveries', '--status', 'pending', '--json']);
    expect(JSON.parse(pending.stdout).deliveries).toEqual([]);

    for (const target of [flaky, slow]) {
      expect(target.received.every((request) => request.verified)).toBe(true);
      expect(changesOf(target.received).map((change) => change.data)).toEqual(expect.arrayContaining(changes));
      expectOneBodyPerId(target.received);
    }
    expect(changesOf(limited.received).map((change) => change.type)).toContain('deliverable.status');
    expect(changesOf(limited.received).every((change) => change.type.startsWith('deliverable.'))).toBe(true);
    expect(gone.received).toHaveLength(1);
    const status = JSON.parse((await taxprep(['status', '--json', '--accounts', clients])).stdout);
    expect(status.hooks_needing_attention).toEqual([{ hook: hooks.gone.id, target: gone.url, problem: expect.stringMatching(/^disabled \(the receiver answered 410 Gone/) }]);
    const doctor = await taxprep(['doctor', '--offline']);
    expect(doctor.stdout).toContain(`${hooks.gone.id} (${gone.url}) is disabled`);
    const list = JSON.parse((await taxprep(['hooks', 'list', '--json'])).stdout).hooks;
    expect(list.find((hook: { id: string }) => hook.id === hooks.gone.id)).toMatchObject({ enabled: false, disabled_reason: expect.stringContaining('410') });
    const execBodies = readFileSync(execLog, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { data: unknown });
    expect(execBodies.map((body) => body.data)).toEqual(expect.arrayContaining(changes));
    expect(readFileSync(counter, 'utf8').trim()).toBe(String(changes.length + 2));

    // Rotation: for 24 hours both secrets sign; each verifies on its own.
    const rotated = await taxprep(['hooks', 'rotate-secret', hooks.flaky.id, '--json']);
    const fresh = JSON.parse(rotated.stdout).secret as string;
    flaky.secrets.push(fresh);
    random = 1;
    const ping = await taxprep(['hooks', 'test', hooks.flaky.id]);
    expect(ping.exitCode).toBe(0);
    const last = flaky.received.at(-1)!;
    expect(last.verified).toBe(true);
    expect(JSON.parse(last.body).type).toBe('taxprep.ping');
  }, 60_000);
});

describe('a watch killed at any moment', () => {
  it('loses no change and never gives one id two changes (5 SIGKILLs at random moments, and at the named crash point)', async () => {
    const clients = ACCOUNTS();
    const target = await receiver(() => ({ status: 204 }));
    const hook = await addHook([target.url, '--events', 'item.*']);
    target.secrets.push(hook.secret);
    expect((await taxprep(['watch', '--once', '--budget', '100/min', '--accounts', clients])).exitCode).toBe(0);

    // Killed right after queueing a pass's changes, before recording them as seen; and right
    // after recording them, before the outbox hears that they were.
    const descriptions: string[] = [];
    for (const point of ['hooks.after-queue', 'watch.after-commit']) {
      const description = `item at ${point}`;
      descriptions.push(description);
      await control('/projects/5001/outstanding-items', { type: 'client_request', description, priority: 'low' });
      const crashed = await runCli(['watch', '--once', '--budget', '100/min', '--accounts', clients], { env: { ...env(), TAXPREP_TEST_CRASH_AT: point }, home });
      expect(crashed.exitCode).not.toBe(0);
    }

    mock.deps.settings.faults.latencyMs = 20;
    for (let round = 0; round < 5; round += 1) {
      const child = spawnWatch(['watch', '--budget', '100/min', '--accounts', clients]);
      const description = `item round ${round}`;
      descriptions.push(description);
      await control(`/projects/${round % 2 === 0 ? 5001 : 5002}/outstanding-items`, { type: 'client_request', description, priority: 'low' });
      await new Promise((resolve) => setTimeout(resolve, 200 + Math.floor(Math.random() * 1800)));
      child.kill('SIGKILL');
      await child.result;
    }
    mock.deps.settings.faults.latencyMs = 0;
    const finish = spawnWatch(['watch', '--budget', '100/min', '--accounts', clients]);
    await until(() => descriptions.every((description) => changesOf(target.received).some((change) => (change.data.new as { description?: string } | null)?.description === description)), 'every item delivered', 40_000);
    finish.kill('SIGINT');
    await finish.result;

    expect(target.received.every((request) => request.verified)).toBe(true);
    expectOneBodyPerId(target.received);
    const pending = await taxprep(['hooks', 'deliveries', '--status', 'pending', '--json']);
    expect(JSON.parse(pending.stdout).deliveries).toEqual([]);
    const outbox = join(home, '.local', 'share', 'taxprep', 'outbox');
    const lines = readFileSync(join(outbox, readdirSync(outbox).find((name) => name.endsWith('.ndjson'))!), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
    // Each change reached the receiver under one id only (the pass killed before its record was dropped, never sent).
    for (const description of descriptions) {
      const ids = new Set(target.received.filter((request) => request.body.includes(`"${description}"`) && request.body.includes('item.appeared')).map((request) => request.id));
      expect(ids.size, description).toBe(1);
    }
    expect(lines.filter((line) => line.type === 'pass').map((line) => line.result)).toContain('dropped');
  }, 120_000);
});

/** A running watch, its output scanned for a leaked key like every run's. */
function spawnWatch(args: string[]) {
  const { child, result } = startCli(args, { env: env(), home, stdin: 'ignore' });
  return { kill: (signal: NodeJS.Signals) => child.kill(signal), result };
}

async function until(condition: () => boolean, what: string, limitMs = 15_000): Promise<void> {
  for (let waited = 0; !condition(); waited += 50) {
    if (waited > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}


describe('hooks deliver', () => {
  it('keeps a hook\'s --rate: 5 due deliveries at 2/s reach it at most 2 in any second, each verified', async () => {
    const target = await receiver(() => ({ status: 204 }));
    const arrivals: number[] = [];
    const counted = receiverArrivals(target, arrivals);
    const hook = await addHook([target.url, '--rate', '2/s']);
    target.secrets.push(hook.secret);
    // Five changes a watch queued and committed, due now: the outbox as watch leaves it.
    const seenAt = new Date().toISOString();
    const outbox = join(home, '.local', 'share', 'taxprep', 'outbox');
    mkdirSync(outbox, { recursive: true });
    const digest = createHash('sha256').update(mock.baseUrl).digest('hex').slice(0, 12);
    const lines = [5001, 5002, 5003, 5004, 5005].map((project, index) => {
      const data = { event: 'project.progress', account_id: 1001, project_id: project, old: 20, new: 45, seen_at: seenAt };
      return JSON.stringify({ type: 'event', id: `msg_rate${index}`, event: 'project.progress', hooks: [hook.id], body: JSON.stringify({ type: 'project.progress', timestamp: seenAt, data }), seen_at: seenAt, at: seenAt });
    });
    writeFileSync(join(outbox, `no-profile-${digest}.ndjson`), `${lines.join('\n')}\n`);

    const delivered = await taxprep(['hooks', 'deliver', '--json']);
    expect(delivered.exitCode, delivered.stderr).toBe(0);
    expect(JSON.parse(delivered.stdout)).toEqual({ delivered: 5, retried: 0, failed: 0, next_due_at: null });
    counted();
    // Without --ordered no order is promised: the two a window admits race on two connections.
    expect(target.received.map((request) => request.id).sort()).toEqual(['msg_rate0', 'msg_rate1', 'msg_rate2', 'msg_rate3', 'msg_rate4']);
    expect(target.received.every((request) => request.verified)).toBe(true);
    // At 2/s the fifth is sent two seconds after the first; unpaced, all five come within a few
    // milliseconds. The bounds leave room for the receiver's own delays (arrivals, not sends, are timed).
    expect(arrivals[4]! - arrivals[0]!).toBeGreaterThanOrEqual(1500);
    for (let index = 2; index < arrivals.length; index += 1) expect(arrivals[index]! - arrivals[index - 2]!).toBeGreaterThanOrEqual(500);
  });
});

/** Records when each request reached `target` (ms), from now on; the returned function checks that every request was timed. */
function receiverArrivals(target: { received: Received[] }, arrivals: number[]): () => void {
  const push = target.received.push.bind(target.received);
  target.received.push = (...requests: Received[]) => {
    for (const _request of requests) arrivals.push(performance.now());
    return push(...requests);
  };
  return () => expect(arrivals).toHaveLength(target.received.length);
}

describe('hooks redeliver, recover and deliver beside a running watch', () => {
  it('hand the watch their work, which sends it at once under the same webhook-id; a second watch is told another watch is running', async () => {
    const clients = ACCOUNTS();
    let up = false;
    const target = await receiver(() => ({ status: up ? 204 : 500 }));
    // A retry an hour away: what a receiver back after failures would otherwise wait for.
    const added = await taxprep(['hooks', 'add', target.url, '--insecure-storage', '--events', 'item.*', '--retry-schedule', '1h,1h', '--timeout', '1s', '--json']);
    const hook = JSON.parse(added.stdout) as { id: string; secret: string };
    target.secrets.push(hook.secret);
    expect((await taxprep(['watch', '--once', '--budget', '100/min', '--accounts', clients])).exitCode).toBe(0);
    const watch = spawnWatch(['watch', '--budget', '100/min', '--accounts', clients]);
    try {
      await control('/projects/5001/outstanding-items', { type: 'client_request', description: 'Sign the engagement letter', priority: 'low' });
      await until(() => target.received.length === 1, 'the first attempt (answered 500)', 30_000);

      const second = await taxprep(['watch', '--once', '--accounts', clients]);
      expect(second.exitCode).toBe(10);
      expect(second.stderr).toMatch(/another watch is running \(pid \d+, since \d{4}-\d\d-\d\dT/);
      expect(second.stderr).not.toContain('webhook outbox ledger');

      up = true;
      const retried = await taxprep(['--verbose', 'hooks', 'deliver', '--retry-now']);
      expect(retried.exitCode, retried.stderr).toBe(0);
      expect(retried.stderr).toMatch(/^hooks deliver: 1 delivered, 0 to retry, 0 failed; a watch is running \(pid \d+, since [^)]+\) and sent them\.\n$/);
      expect(target.received).toHaveLength(2);
      const id = target.received[0]!.id;

      const redelivered = await taxprep(['hooks', 'redeliver', id]);
      expect(redelivered.exitCode, redelivered.stderr).toBe(0);
      expect(redelivered.stderr).toMatch(/^1 delivery is due again; a watch is running \(pid \d+, since [^)]+\) and sends it now\.\n$/);
      await until(() => target.received.length === 3, 'the redelivery');

      const recovered = await taxprep(['hooks', 'recover', hook.id, '--since', '1h']);
      expect(recovered.exitCode, recovered.stderr).toBe(0);
      expect(recovered.stderr).toContain('1 change is due again for');
      await until(() => target.received.length === 4, 'the recovery');

      // Nothing more: each request was applied once.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(target.received).toHaveLength(4);
      expect(target.received.map((request) => request.id)).toEqual([id, id, id, id]);
      expect(target.received.every((request) => request.verified)).toBe(true);
      expectOneBodyPerId(target.received);
      const outbox = join(home, '.local', 'share', 'taxprep', 'outbox');
      expect(readdirSync(outbox).filter((name) => name.endsWith('.requests')).flatMap((name) => readdirSync(join(outbox, name)))).toEqual([]);
    } finally {
      watch.kill('SIGINT');
      await watch.result;
    }
    // The watch gone, a redelivery is applied here and waits for hooks deliver.
    const after = await taxprep(['hooks', 'redeliver', target.received[0]!.id]);
    expect(after.stderr).toBe('1 delivery is due again; taxprep hooks deliver (or the next watch) sends it.\n');
    up = false;
    expect(JSON.parse((await taxprep(['hooks', 'deliver', '--json'])).stdout)).toMatchObject({ delivered: 0, retried: 1, failed: 0 });
    expect(target.received).toHaveLength(5);
    // Without a watch, --retry-now sends here what waits for its retry an hour away.
    up = true;
    expect(JSON.parse((await taxprep(['hooks', 'deliver', '--json'])).stdout)).toMatchObject({ delivered: 0, retried: 0 });
    expect(JSON.parse((await taxprep(['hooks', 'deliver', '--retry-now', '--json'])).stdout)).toMatchObject({ delivered: 1, retried: 0, failed: 0 });
    expect(target.received).toHaveLength(6);
    expect(new Set(target.received.map((request) => request.id)).size).toBe(1);
  }, 90_000);
});

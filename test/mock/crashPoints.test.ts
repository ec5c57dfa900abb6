import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRASH_AT_VARIABLE } from '../../src/lib/crashPoints';
import { DEMO_API_KEYS } from '../../src/mock/seed';
import { startServeMock, type ServedMock } from '../helpers/serveMock';

/**
 * Every kind of write of `serve --mock --data-dir`, killed by SIGKILL at the two named points of
 * its commit (src/mock/persistence.ts): just before the new state replaces the old one, and just
 * after. Before: after a restart nothing of the request is there. After: all of it is. Never a
 * part (a link without its email, an account without its login links). The kill is at a named
 * point, not a timed one, so each test reaches the same moment on every run.
 */

const auth = { authorization: `Bearer ${DEMO_API_KEYS.acme}` };
const PROJECT = 5001;
const CONTENT = 'crash point upload\n';

let workDir: string;
let seededDir: string;
/** Made while seeding: the next account's id, and an unopened login link of account 1001's primary holder (its path under the app's URL, whose port changes with every start). */
let seeded: { nextAccountId: number; loginLinkPath: string; primaryEmail: string };
let baseline: Observed;
const running = new Set<ServedMock>();

/** A contract request (`/accounts/...`), or a control's (`/_mock/...`, served beside the app). */
async function call(mock: ServedMock, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${path.startsWith('/_mock') ? mock.appUrl : mock.baseUrl}${path}`, {
    method,
    headers: body === undefined ? auth : { ...auth, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    redirect: 'manual',
  });
  const text = await response.text();
  return { status: response.status, json: text.startsWith('{') ? JSON.parse(text) : text };
}

async function start(dataDir: string, crashAt?: string): Promise<ServedMock> {
  const mock = await startServeMock(['--data-dir', dataDir, '--rate-limit', 'off'], crashAt === undefined ? {} : { env: { [CRASH_AT_VARIABLE]: crashAt } });
  running.add(mock);
  return mock;
}

async function stop(mock: ServedMock): Promise<void> {
  expect(await mock.stop()).toBe(0);
  running.delete(mock);
}

/** What the writes below can change, as the contract and the controls show it. */
interface Observed {
  account: { status: number; email?: string };
  accountLinks: number;
  loginLinks: Array<{ id: number; account_id: number; invalidated_at: string | null; used_at: string | null }>;
  outbox: Array<{ id: number; to: string; kind: string }>;
  documents: Array<{ id: number; description: string; stored: number }>;
  project: { status: string; progress_percentage: number };
  clockOffsetMs: number;
  probe: number;
}

async function observe(mock: ServedMock): Promise<Observed> {
  const account = await call(mock, 'GET', `/accounts/${seeded.nextAccountId}`);
  const links = (await call(mock, 'GET', '/_mock/login-links')).json.login_links as Array<Observed['loginLinks'][number]>;
  const outbox = (await call(mock, 'GET', '/_mock/outbox')).json.emails as Array<Observed['outbox'][number]>;
  const documents = (await call(mock, 'GET', '/accounts/1001/documents?limit=100')).json.documents as Array<{ id: number; description: string }>;
  const project = (await call(mock, 'GET', `/projects/${PROJECT}/status`)).json as Observed['project'];
  return {
    account: account.status === 200 ? { status: 200, email: account.json.email } : { status: account.status },
    accountLinks: links.filter((link) => link.account_id === seeded.nextAccountId).length,
    loginLinks: links.map(({ id, account_id, invalidated_at, used_at }) => ({ id, account_id, invalidated_at, used_at })),
    outbox: outbox.map(({ id, to, kind }) => ({ id, to, kind })),
    // With the size of the stored file: a record whose file is missing would show here.
    documents: await Promise.all(
      documents.map(async ({ id, description }) => ({ id, description, stored: (await call(mock, 'GET', `/_mock/documents/${id}/content`)).json.length as number })),
    ),
    project: { status: project.status, progress_percentage: project.progress_percentage },
    clockOffsetMs: (await call(mock, 'GET', '/_mock/clock')).json.offset_ms,
    // The account made while seeding: a reset removes it.
    probe: (await call(mock, 'GET', `/accounts/${seeded.nextAccountId - 1}`)).status,
  };
}

interface Write {
  name: string;
  send(mock: ServedMock): Promise<unknown>;
  /** Checks that all of the write is in `after`, the state restarted after a kill once it was on disk. */
  applied(after: Observed, before: Observed): void;
}

const upload = (mock: ServedMock) => {
  const form = new FormData();
  form.set('tax_year', '2025');
  form.set('description', 'crash point');
  form.set('file', new Blob([CONTENT], { type: 'text/plain' }), 'crash.txt');
  return fetch(`${mock.baseUrl}/accounts/1001/documents`, { method: 'POST', headers: auth, body: form });
};

const WRITES: Write[] = [
  {
    name: 'an account with a spouse (account, two users, two login links, one email)',
    send: (mock) =>
      call(mock, 'POST', '/accounts', {
        email: 'crash-primary@example.com',
        first_name: 'Crash',
        last_name: 'Point',
        spouse: { email: 'crash-spouse@example.com', first_name: 'Spouse', last_name: 'Point' },
      }),
    applied(after, before) {
      expect(after.account).toEqual({ status: 200, email: 'crash-primary@example.com' });
      expect(after.accountLinks).toBe(2);
      expect(after.outbox.slice(before.outbox.length)).toEqual([expect.objectContaining({ to: 'crash-spouse@example.com', kind: 'spouse_invitation' })]);
    },
  },
  {
    name: 'an upload (record and file)',
    send: upload,
    applied(after, before) {
      const added = after.documents.filter((document) => !before.documents.some((earlier) => earlier.id === document.id));
      expect(added.map(({ description, stored }) => ({ description, stored }))).toEqual([{ description: 'crash point', stored: CONTENT.length }]);
    },
  },
  {
    name: 'a login link (the earlier link replaced, the new one made, its email sent)',
    send: (mock) => call(mock, 'POST', '/accounts/1001/login-link', {}),
    applied(after, before) {
      const added = after.loginLinks.slice(before.loginLinks.length);
      expect(added).toEqual([expect.objectContaining({ account_id: 1001, invalidated_at: null, used_at: null })]);
      const replaced = after.loginLinks.filter((link, index) => before.loginLinks[index]?.invalidated_at === null && link.invalidated_at !== null);
      expect(replaced.length).toBeGreaterThan(0);
      expect(after.outbox.slice(before.outbox.length)).toEqual([expect.objectContaining({ to: seeded.primaryEmail, kind: 'login_link' })]);
    },
  },
  {
    name: 'a login link opened (marked used)',
    send: (mock) => fetch(`${mock.appUrl}${seeded.loginLinkPath}`, { redirect: 'manual' }),
    applied(after, before) {
      const used = after.loginLinks.filter((link, index) => before.loginLinks[index]?.used_at === null && link.used_at !== null);
      expect(used).toHaveLength(1);
    },
  },
  {
    name: 'a /_mock control moving a project',
    send: (mock) => call(mock, 'POST', `/_mock/projects/${PROJECT}`, { status: 'completed', progress_percentage: 100 }),
    applied(after) {
      expect(after.project).toEqual({ status: 'completed', progress_percentage: 100 });
    },
  },
  {
    name: 'a /_mock control emptying the outbox',
    send: (mock) => call(mock, 'DELETE', '/_mock/outbox'),
    applied(after) {
      expect(after.outbox).toEqual([]);
    },
  },
  {
    name: 'a /_mock reset',
    send: (mock) => call(mock, 'POST', '/_mock/reset'),
    applied(after) {
      expect(after.probe).toBe(404);
      expect(after.outbox).toEqual([]);
    },
  },
  {
    name: 'a clock advance',
    send: (mock) => call(mock, 'POST', '/_mock/clock', { advance_seconds: 86_400 }),
    applied(after, before) {
      expect(after.clockOffsetMs).toBe(before.clockOffsetMs + 86_400_000);
    },
  },
];

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'taxprep-crash-points-'));
  seededDir = join(workDir, 'seeded');
  const mock = await start(seededDir);
  const probe = await call(mock, 'POST', '/accounts', { email: 'probe@example.com', first_name: 'Probe', last_name: 'Account' });
  expect(probe.status).toBe(201);
  const link = await call(mock, 'POST', '/accounts/1001/login-link', {});
  expect(link.status).toBe(201);
  seeded = { nextAccountId: probe.json.id + 1, loginLinkPath: link.json.login_link.slice(mock.appUrl.length), primaryEmail: link.json.user_email };
  baseline = await observe(mock);
  // Each write below changes what it observes: the link to open (or replace) is valid, the outbox to empty is not empty.
  expect(baseline.loginLinks.at(-1)).toMatchObject({ account_id: 1001, invalidated_at: null, used_at: null });
  expect(baseline.outbox.length).toBeGreaterThan(0);
  await stop(mock);
}, 60_000);

afterAll(async () => {
  for (const mock of running) {
    mock.process.kill('SIGKILL');
    await mock.process;
  }
  await rm(workDir, { recursive: true, force: true });
});

/** Starts on a copy of the seeded directory with the crash point set, sends the write, and restarts once it is killed. */
async function killedAt(write: Write, point: 'mock.before-commit' | 'mock.after-commit', index: number): Promise<Observed> {
  const dataDir = join(workDir, `${index}-${point}`);
  await cp(seededDir, dataDir, { recursive: true });
  const doomed = await start(dataDir, point);
  const answer = await write.send(doomed).then(
    () => 'answered',
    () => 'no answer',
  );
  // A write that never reached the point was answered: end that process, and the test fails below.
  if (answer === 'answered') doomed.process.kill('SIGTERM');
  const ended = await doomed.process;
  running.delete(doomed);
  expect({ answer, signal: ended.signal }).toEqual({ answer: 'no answer', signal: 'SIGKILL' });
  const restarted = await start(dataDir);
  try {
    return await observe(restarted);
  } finally {
    await stop(restarted);
  }
}

describe('serve --mock --data-dir killed at its commit', () => {
  it.each(WRITES.map((write, index) => [write.name, write, index] as const))('%s: nothing of it before the commit, all of it after', async (_, write, index) => {
    const [before, after] = await Promise.all([killedAt(write, 'mock.before-commit', index), killedAt(write, 'mock.after-commit', index)]);
    expect(before).toEqual(baseline);
    write.applied(after, baseline);
  }, 60_000);

  it('keeps an acknowledged login link through a SIGKILL: it opens after the restart', async () => {
    const dataDir = join(workDir, 'acknowledged-link');
    await cp(seededDir, dataDir, { recursive: true });
    const mock = await start(dataDir);
    const link = await call(mock, 'POST', '/accounts/1001/login-link', {});
    expect(link.status).toBe(201);
    mock.process.kill('SIGKILL');
    await mock.process;
    running.delete(mock);
    const restarted = await start(dataDir);
    const opened = await fetch(`${restarted.appUrl}${link.json.login_link.slice(mock.appUrl.length)}`, { redirect: 'manual' });
    expect(opened.status).toBe(200);
    await stop(restarted);
  }, 60_000);
});

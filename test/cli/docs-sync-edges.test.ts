import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseFixture } from '../../src/mock/fixture';
import { makeHome, runMain } from '../helpers/cli';
import { startMock, type RunningMock } from '../helpers/mock';
import { BATCH_KEYS, FIRST_ACCOUNT_ID, batchFixture } from '../e2e/login-link.fixture';

/**
 * `docs sync` in process, at its edges: the words of a manifest's refusals, the order of the
 * problems it lists, a file gone between the walk and its read, an upload acknowledged without a
 * document id, and the progress it draws on a terminal. test/cli/docs-sync-run.test.ts has the rest.
 *
 * The first test runs a manifest's refusals: it is the one that loads the command's module in this
 * file, so the mutation tests check the manifest's columns and rules (module-level constants) here.
 */

/** A path whose read fails as if the file was deleted after the walk saw it (see the mock of hashFile below). */
let vanishing: string | undefined;
vi.mock('../../src/commands/docs/lib/syncSources', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/commands/docs/lib/syncSources')>();
  return {
    ...original,
    hashFile: (path: string, buffer?: Buffer) => {
      if (path === vanishing) rmSync(path);
      return original.hashFile(path, buffer);
    },
  };
});

const A = FIRST_ACCOUNT_ID;
let mock: RunningMock;
/** Called as the mock answers each request (to press Ctrl-C at an exact moment: `process.emit('SIGINT')`). */
let onRequest: ((request: { method: string; path: string }) => void) | undefined;
let home: string;
let dir: string;

beforeAll(async () => {
  mock = await startMock({ fixture: parseFixture(batchFixture({ accounts: 2 })), rateLimits: [], onRequest: (request) => onRequest?.(request) });
});
afterAll(() => mock.close());
beforeEach(async () => {
  await mock.deps.store.reset();
  mock.deps.requestLog.clear();
  mock.deps.settings.rateLimits = [];
  onRequest = undefined;
  vanishing = undefined;
  home = makeHome();
  dir = mkdtempSync(join(tmpdir(), 'taxprep-sync-edges-'));
});

const env = (baseUrl = mock.baseUrl) => ({ TAXPREP_BASE_URL: baseUrl, TAXPREP_API_KEY: BATCH_KEYS.acme, NO_COLOR: '1' });
const sync = (args: string[], options: { globals?: string[]; baseUrl?: string } = {}) => runMain([...(options.globals ?? []), 'docs', 'sync', dir, ...args], { env: env(options.baseUrl), home });
const ledger = (): Array<Record<string, any>> =>
  readFileSync(join(home, '.local', 'share', 'taxprep', 'documents.ndjson'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
const HINT = 'Fix or --exclude them, or pass --skip-invalid to sync the rest and report these as failed.';

function put(files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

describe('docs sync --manifest refuses, in these words (exit 2, nothing sent)', () => {
  it('a column it does not take, naming those it does; rows without a path, with an empty one, or breaking two rules, by line and in order', async () => {
    put({ 'ada/k1.pdf': 'k1' });
    const manifest = join(home, 'manifest.csv');
    writeFileSync(manifest, `path,acount_id,tax_year\nada/k1.pdf,${A},2025\n`);
    const column = await sync(['--manifest', manifest]);
    expect([column.exitCode, column.stdout, column.stderr]).toEqual([2, '', `error: ${manifest}: line 1: unknown column "acount_id"; columns are path, account_id, tax_year, description\n`]);

    const rows = join(home, 'manifest.ndjson');
    writeFileSync(
      rows,
      [
        { account_id: A, tax_year: 2025 },
        { path: '', account_id: A, tax_year: 2025 },
        { path: 'ada/k1.pdf', account_id: 0, tax_year: 'next year', description: 'K-1' },
        { path: 'ada/k1.pdf', account_id: A, tax_year: 2025, description: 'bell\u0007' },
      ]
        .map((row) => JSON.stringify(row))
        .join('\n'),
    );
    const bad = await sync(['--manifest', rows]);
    expect([bad.exitCode, bad.stdout]).toEqual([2, '']);
    expect(bad.stderr).toBe(
      `error: cannot sync 4 entries of ${rows}; nothing was sent:\n` +
        '  line 1: path is required\n' +
        '  line 2: path must not be empty\n' +
        '  line 3: account_id must be a positive integer\n' +
        '  line 3: tax_year must be a year of four digits\n' +
        '  line 4: description must not contain control characters (such as NUL) or bidirectional overrides; tabs and line breaks are fine\n' +
        `${HINT}\n`,
    );
    expect(mock.deps.store.state.documents).toEqual([]);
  });
});

describe('docs sync lists the problems of a walk', () => {
  it("by path, those of the folders and those of the files together: a type the service refused before, a folder that is not an account's", async () => {
    put({ [`${A}/2025/notes.rtf`]: 'rtf' });
    expect((await sync([])).exitCode).toBe(9);
    put({ [`${A}/2025/more.rtf`]: 'rtf 2', 'zeta/x.pdf': 'x', 'alpha/y.pdf': 'y' });
    const again = await sync([]);
    expect(again.exitCode).toBe(2);
    expect(again.stderr.split('\n').map((line) => line.split(' ')[2] ?? line)).toEqual([
      'sync',
      `${A}/2025/more.rtf`,
      `${A}/2025/notes.rtf`,
      'alpha',
      'zeta',
      '--exclude',
      '',
    ]);
  });

  it('a file gone between the walk and its read, by its path: nothing is sent', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2', [`${A}/2025/k1.pdf`]: 'k1' });
    vanishing = join(dir, `${A}/2025/w2.pdf`);
    const result = await sync([]);
    expect([result.exitCode, result.stdout, result.stderr]).toEqual([2, '', `error: cannot sync 1 entry of ${dir}; nothing was sent:\n  ${A}/2025/w2.pdf does not exist\n${HINT}\n`]);
    expect(mock.deps.store.state.documents).toEqual([]);
  });
});

describe('an upload the service acknowledges without a document id', () => {
  let server: Server;
  let uploads = 0;
  beforeAll(async () => {
    // A service that keeps the contract's letter but answers an upload with an empty object.
    server = createServer((request, response) => {
      const send = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (request.method === 'GET' && /^\/v1\/accounts\/\d+\/documents\?/.test(request.url ?? '')) return send(200, { documents: [], has_more: false });
      if (request.method === 'POST' && /^\/v1\/accounts\/\d+\/documents$/.test(request.url ?? '')) {
        uploads += 1;
        request.resume().on('end', () => send(201, {}));
        return;
      }
      send(404, { error: { code: 'NOT_FOUND', message: 'no such route' } });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is uploaded (exit 0) and recorded with no document id, so that its content is never sent again', async () => {
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    put({ [`${A}/2025/w2.pdf`]: 'w2' });
    const first = await sync([], { baseUrl });
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toBe(`uploaded\t${A}/2025/w2.pdf\t${A}\t2025\n`);
    expect(first.stderr).toContain('but its answer carries no id');
    expect(ledger().at(-1)).toMatchObject({ type: 'uploaded', filename: 'w2.pdf', document_id: '', size: 2 });
    const again = await sync([], { baseUrl, globals: ['--json', '--verbose'] });
    expect(again.exitCode).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ result: 'skipped', reason: 'uploaded_before', document_id: '' });
    expect(uploads).toBe(1);
  });
});

describe("an account's document list that cannot be read", () => {
  it('fails the run with the service error and its exit code (404: 4, declared), before any upload: it is no Ctrl-C', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2', '99999/2025/w2.pdf': 'w2' });
    const result = await sync([]);
    expect({ exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr }).toEqual({ exitCode: 4, stdout: '', stderr: 'error: No account with id 99999 exists.\n' });
    expect(mock.deps.requestLog.entries().filter((entry) => entry.method === 'POST')).toEqual([]);
  });
});

/** A second passes between any two looks at the clock: every progress update is drawn. */
function steppingClock() {
  let calls = 0;
  return { now: () => new Date(Date.UTC(2026, 0, 1) + 1000 * calls++), sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) };
}

describe('docs sync on a terminal', () => {
  it("draws each file's bytes as they go and the set's total on stderr, wiping each finished file's line", async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2', [`${A}/2025/k1.pdf`]: 'k1-2' });
    const result = await runMain(['docs', 'sync', dir, '--concurrency', '1'], { env: env(), home, tty: true, clock: steppingClock() });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(`uploaded  ${A}/2025/k1.pdf  document 1  4 B\nuploaded  ${A}/2025/w2.pdf  document 2  2 B\n`);
    const screen = result.stderr;
    expect(screen.startsWith(`${A}/2025/k1.pdf ░░░░░░░░░░   0%  0 B of 4 B  -/s\n0 of 2 files ░░░░░░░░░░   0%  0 B of 6 B  -/s`)).toBe(true);
    expect(screen).toContain(`${A}/2025/k1.pdf ██████████ 100%  4 B of 4 B`);
    expect(screen).toContain(`${A}/2025/w2.pdf ██████████ 100%  2 B of 2 B`);
    expect(screen).toContain('2 of 2 files ██████████ 100%  6 B of 6 B');
    // A finished file's line goes (the result line on stdout says it), none is left with its time.
    expect(screen).not.toMatch(/ B in \d/);
    expect(screen).toMatch(/\r\u001b\[Kdocuments: 2 uploaded, 0 skipped, 0 failed in \d+s \([\d.]+\/min\)\n$/);
  });

  it('starts each result line at the left margin of the screen: the progress lines are wiped first', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2', [`${A}/2025/k1.pdf`]: 'k1-2' });
    const result = await runMain(['docs', 'sync', dir, '--concurrency', '1'], { env: env(), home, tty: true, oneScreen: true, clock: steppingClock() });
    expect(result.exitCode).toBe(0);
    const starts = [...result.stdout.matchAll(/uploaded {2}/g)].map((match) => result.stdout.slice(Math.max(0, match.index - 4), match.index));
    expect(starts).toEqual(['\r\u001b[K', '\r\u001b[K']);
  });

  it('wipes the progress of an upload that Ctrl-C stopped before it was sent, before saying what was not sent', async () => {
    // Two requests in 10 s: the list and the first upload spend them, and the second upload waits in the pacer,
    // where Ctrl-C is pressed (the run's clock presses it as a wait that long starts).
    mock.deps.settings.rateLimits = [{ limit: 2, windowSeconds: 10 }];
    put({ [`${A}/2025/a.pdf`]: 'a', [`${A}/2025/b.pdf`]: 'b' });
    const clock = {
      now: () => new Date(),
      sleep: (ms: number, signal?: AbortSignal) => {
        if (ms > 1000) process.emit('SIGINT');
        return new Promise<void>((resolve, reject) => {
          if (signal?.aborted) return reject(signal.reason);
          const timer = setTimeout(resolve, ms);
          signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
        });
      },
    };
    const result = await runMain(['docs', 'sync', dir, '--concurrency', '1'], { env: env(), home, tty: true, clock });
    expect(result.exitCode).toBe(130);
    expect(result.stdout).toBe(`uploaded  ${A}/2025/a.pdf  document 1  1 B\n`);
    expect(result.stderr).toMatch(/1 of 2 files [^\r]*\r\u001b\[Kerror: interrupted: documents: 1 uploaded, 0 skipped, 0 failed, 1 not sent in /);
    // While it waits, the screen says so and until when; the waiting file is not shown at 0% of a transfer.
    expect(result.stderr).toMatch(/1 of 2 files waiting for the rate limit until \d\d:\d\d:\d\d UTC/);
    expect(result.stderr).not.toContain('b.pdf ░');
    expect(mock.deps.store.state.documents.map((document) => document.filename)).toEqual(['a.pdf']);
  });
});

describe('docs sync under a rate limit', () => {
  it("paces the lists and the uploads to the service's limit: the service never has to refuse one", async () => {
    mock.deps.settings.rateLimits = [{ limit: 2, windowSeconds: 1 }];
    try {
      put({ [`${A}/2025/a.pdf`]: 'a', [`${A}/2025/b.pdf`]: 'b', [`${A}/2025/c.pdf`]: 'c', [`${A + 1}/2025/d.pdf`]: 'd' });
      const result = await sync(['--concurrency', '2']);
      expect(result.exitCode).toBe(0);
      expect(mock.deps.requestLog.entries().map((entry) => entry.status)).toEqual([200, 200, 201, 201, 201, 201]);
    } finally {
      mock.deps.settings.rateLimits = [];
    }
  });
});

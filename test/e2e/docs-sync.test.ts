import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseFixture } from '../../src/mock/fixture';
import { cliCommandLine, inProcess, makeHome, runCli, runScanned, startCli } from '../helpers/cli';
import { startMock, type RunningMock } from '../helpers/mock';
import { BATCH_KEYS, FIRST_ACCOUNT_ID, batchFixture } from './login-link.fixture';

/**
 * `taxprep docs sync` against one in-process mock: plans, re-runs, conflicts, bad input, a chain
 * of SIGKILLs, Ctrl-C, an overlapping run and a file that changes while it uploads.
 */

const A = FIRST_ACCOUNT_ID;
const B = FIRST_ACCOUNT_ID + 1;
let mock: RunningMock;
let home: string;
let dir: string;

beforeAll(async () => {
  mock = await startMock({ fixture: parseFixture(batchFixture({ accounts: 4 })), rateLimits: [] });
});
afterAll(() => mock.close());
beforeEach(async () => {
  await mock.deps.store.reset();
  mock.deps.settings.faults.latencyMs = 0;
  mock.deps.requestLog.clear();
  home = makeHome();
  dir = mkdtempSync(join(tmpdir(), 'taxprep-sync-e2e-'));
});

const env = () => ({ TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: BATCH_KEYS.acme });
const sync = (args: string[]) => runCli(['docs', 'sync', dir, ...args], { env: env(), home });
const ledgerPath = () => join(home, '.local', 'share', 'taxprep', 'documents.ndjson');

function put(files: Record<string, string | Buffer>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** The mock's documents of the test's accounts, counted by account, tax year and filename. */
function storedCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const document of mock.deps.store.state.documents) {
    if (document.account_id < A || document.account_id > A + 3) continue;
    const key = `${document.account_id}/${document.tax_year}/${document.filename}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

const requests = (method: string, pattern: RegExp) => mock.deps.requestLog.entries().filter((entry) => entry.method === method && pattern.test(entry.path));

describe('docs sync', () => {
  it('uploads what is missing, then a re-run sends no upload and prints nothing; a changed file is a conflict (exit 9) until --upload-changed', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2', [`${A}/2025/1099.txt`]: '1099', [`${B}/2024/scan.png`]: 'png', [`${A}/2025/.DS_Store`]: 'x', [`${A}/2025/notes.tmp`]: 'tmp' });
    const first = await sync(['--exclude', '*.tmp']);
    expect(first.exitCode).toBe(0);
    // A line per file as its upload ends: 4 at a time, so in any order.
    expect(first.stdout.trim().split('\n').map((line) => line.split('\t').slice(0, 4)).sort()).toEqual([
      ['uploaded', `${A}/2025/1099.txt`, String(A), '2025'],
      ['uploaded', `${A}/2025/w2.pdf`, String(A), '2025'],
      ['uploaded', `${B}/2024/scan.png`, String(B), '2024'],
    ]);
    expect(first.stderr).toMatch(/^left out: 1 hidden, 1 excluded\ndocuments: 3 uploaded, 0 skipped, 0 failed in /);

    mock.deps.requestLog.clear();
    const again = await sync(['--exclude', '*.tmp']);
    expect([again.exitCode, again.stdout]).toEqual([0, '']);
    expect(again.stderr).toContain('documents: 0 uploaded, 3 skipped, 0 failed');
    // The ledger knew every file: not even a list request.
    expect(mock.deps.requestLog.entries()).toEqual([]);

    writeFileSync(join(dir, `${A}/2025/w2.pdf`), 'w2, corrected');
    const conflict = await sync(['--exclude', '*.tmp', '--json']);
    expect(conflict.exitCode).toBe(9);
    const line = JSON.parse(conflict.stdout.trim());
    expect(line).toMatchObject({ path: `${A}/2025/w2.pdf`, result: 'conflict', error: { code: 'DOCUMENT_CONFLICT' } });
    expect(conflict.stderr).toContain(`failed: ${A}/2025/w2.pdf DOCUMENT_CONFLICT`);

    const changed = await sync(['--exclude', '*.tmp', '--upload-changed']);
    expect(changed.exitCode).toBe(0);
    expect(changed.stdout).toMatch(new RegExp(`^uploaded\\t${A}/2025/w2.pdf\\t`));
    expect(storedCounts().get(`${A}/2025/w2.pdf`)).toBe(2);
  });

  it('a name the account already has is skipped without a ledger entry; --dry-run sends only list requests, --offline none', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2', [`${A}/2025/new.pdf`]: 'new' });
    await runCli(['docs', 'upload', String(A), join(dir, `${A}/2025/w2.pdf`), '--tax-year', '2025'], { env: env(), home });
    mock.deps.requestLog.clear();

    const plan = await sync(['--dry-run']);
    expect(plan.exitCode).toBe(0);
    expect(plan.stdout).toBe(`upload\t${A}/2025/new.pdf\t${A}\t2025\tnew\nskip\t${A}/2025/w2.pdf\t${A}\t2025\tname_on_service\n`);
    expect(plan.stderr).toBe('dry run: 1 to upload (3 B), 1 to skip, 0 in conflict; nothing was uploaded\n');
    expect(mock.deps.requestLog.entries().map((entry) => `${entry.method} ${entry.path}`)).toEqual([`GET /v1beta/accounts/${A}/documents?tax_year=2025&limit=100&offset=0`]);
    expect(existsSync(`${ledgerPath()}.lock`)).toBe(false);

    mock.deps.requestLog.clear();
    const offline = await sync(['--dry-run', '--offline', '--json']);
    expect(offline.exitCode).toBe(0);
    expect(offline.stdout.trim().split('\n').map((text) => JSON.parse(text).plan)).toEqual([
      { action: 'upload', reason: 'not_in_ledger' },
      { action: 'upload', reason: 'not_in_ledger' },
    ]);
    expect(mock.deps.requestLog.entries()).toEqual([]);

    const real = await sync([]);
    expect(real.exitCode).toBe(0);
    // Files settled without sending are printed first.
    expect(real.stdout).toMatch(new RegExp(`^skipped\\t${A}/2025/w2.pdf\\t${A}\\t2025\\tname_on_service\\t\\d+\\nuploaded\\t${A}/2025/new.pdf\\t.*\\n$`));
    expect([...storedCounts().values()].every((count) => count === 1)).toBe(true);
  });

  it('--manifest: paths from <dir> with their own account, year and description', async () => {
    put({ 'ada/w2.pdf': 'w2', 'ada/k1.pdf': 'k1' });
    const manifest = join(dir, 'manifest.csv');
    writeFileSync(manifest, `path,account_id,tax_year,description\nada/w2.pdf,${A},2025,"W-2, employer"\nada/k1.pdf,${B},2024,\n`);
    const result = await sync(['--manifest', manifest]);
    expect(result.exitCode).toBe(0);
    const stored = mock.deps.store.state.documents.filter((document) => document.account_id === A || document.account_id === B);
    expect(stored.map((document) => [document.account_id, document.tax_year, document.filename, document.description])).toEqual(
      expect.arrayContaining([
        [A, 2025, 'w2.pdf', 'W-2, employer'],
        [B, 2024, 'k1.pdf', ''],
      ]),
    );
  });
});

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 20_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function spawnSync(args: string[] = []) {
  return startCli(['docs', 'sync', dir, ...args], { home, env: env(), stdin: 'ignore' });
}

describe('docs sync: bad input ends with a clear message, exit 2, nothing sent and the ledger intact', () => {
  it('names every problem: out of <dir>, a directory as the file, a link loop, a missing file, a bad row', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2', 'folder/inner.pdf': 'x' });
    symlinkSync('loop.pdf', join(dir, 'loop.pdf'));
    const manifest = join(dir, 'manifest.ndjson');
    const rows = [
      { path: `${A}/2025/w2.pdf`, account_id: A, tax_year: 2025 },
      { path: '../outside.pdf', account_id: A, tax_year: 2025 },
      { path: 'folder', account_id: A, tax_year: 2025 },
      { path: 'loop.pdf', account_id: A, tax_year: 2025 },
      { path: 'gone.pdf', account_id: A, tax_year: 2025 },
      { path: 'x.pdf', account_id: 'abc', tax_year: 1800 },
    ];
    writeFileSync(manifest, rows.map((row) => JSON.stringify(row)).join('\n'));
    expect((await sync(['--exclude', 'manifest.ndjson', '--exclude', 'folder', '--exclude', 'loop.pdf'])).exitCode).toBe(0);
    const ledgerBefore = readFileSync(ledgerPath(), 'utf8');
    mock.deps.requestLog.clear();
    const result = await sync(['--manifest', manifest]);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`error: cannot sync 5 entries of ${manifest}; nothing was sent:\n`);
    for (const text of [
      `line 2: path ../outside.pdf is outside ${dir}`,
      'line 3: folder is a directory, not a file',
      'line 4: loop.pdf is a symbolic link that loops',
      'line 5: gone.pdf does not exist',
      'line 6: account_id must be a positive integer',
    ]) {
      expect(result.stderr).toContain(text);
    }
    expect(mock.deps.requestLog.entries()).toEqual([]);
    expect(readFileSync(ledgerPath(), 'utf8')).toBe(ledgerBefore);
  });

  it("a type the service refuses: its refusal is a failed file and the rest go on (exit 9); the rule it named keeps the next such file from being sent", async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2', [`${A}/2025/notes.rtf`]: 'rtf' });
    const first = await sync([]);
    expect(first.exitCode).toBe(9);
    expect(first.stdout).toMatch(new RegExp(`^failed\t${A}/2025/notes\.rtf\t${A}\t2025\tUNSUPPORTED_MEDIA_TYPE\tDocuments of type application/octet-stream are not accepted\.$`, 'm'));
    expect(first.stdout).toMatch(new RegExp(`^uploaded\t${A}/2025/w2\.pdf\t`, 'm'));
    expect(storedCounts()).toEqual(new Map([[`${A}/2025/w2.pdf`, 1]]));

    put({ [`${A}/2025/more.rtf`]: 'rtf 2' });
    mock.deps.requestLog.clear();
    const again = await sync([]);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toMatch(/more\.rtf is of a type \(\.rtf, sent as application\/octet-stream\) the service does not take: it takes application\/pdf, .* \(learned from the service \(HTTP 415 UNSUPPORTED_MEDIA_TYPE\) on /);
    expect(requests('POST', /documents$/)).toEqual([]);
  });

  it('a folder out of the layout, and a loop of links in the walk; --skip-invalid syncs the rest and exits 9', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2', 'clients/2025/a.pdf': 'a' });
    symlinkSync(join(dir, String(A)), join(dir, String(A), '2025', 'again'));
    const refused = await sync([]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(`${A}/2025/again is a symbolic link that loops (a directory inside itself)`);
    expect(refused.stderr).toContain('clients is not an account id');
    expect(storedCounts().size).toBe(0);

    const skipping = await sync(['--skip-invalid']);
    expect(skipping.exitCode).toBe(9);
    expect(skipping.stdout).toContain(`uploaded\t${A}/2025/w2.pdf`);
    expect(skipping.stdout).toContain(`failed\t${A}/2025/again\tINVALID_FILE\t`);
    expect(skipping.stderr).toContain('documents: 1 uploaded, 0 skipped, 2 failed');
  });

  it.skipIf(process.getuid?.() === 0)('an unreadable file', async () => {
    put({ [`${A}/2025/secret.pdf`]: 'x' });
    chmodSync(join(dir, `${A}/2025/secret.pdf`), 0o000);
    const result = await sync([]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`${A}/2025/secret.pdf cannot be read (permission denied)`);
  });

  it.skipIf(inProcess)('a file that changes while it uploads is stopped before the service stores it (exit 9); the next run uploads it once', async () => {
    const path = join(dir, `${A}/2025/big.pdf`);
    put({ [`${A}/2025/big.pdf`]: Buffer.alloc(24 * 1024 * 1024, 1) });
    // The mock waits before reading each request: the upload's body stalls in the socket, a few MB in.
    mock.deps.settings.faults.latencyMs = 800;
    const running = spawnSync();
    await until(() => existsSync(ledgerPath()) && readFileSync(ledgerPath(), 'utf8').includes('"type":"intent"'), 'the upload to start');
    const handle = await open(path, 'r+');
    await handle.write(Buffer.alloc(1024, 2), 0, 1024, 24 * 1024 * 1024 - 1024);
    await handle.close();
    const result = await running.result;
    expect(result.exitCode).toBe(9);
    expect(String(result.stdout)).toContain(`failed\t${A}/2025/big.pdf\t${A}\t2025\tFILE_CHANGED\t${A}/2025/big.pdf changed while it was being uploaded; nothing was stored`);
    mock.deps.settings.faults.latencyMs = 0;
    expect(storedCounts().size).toBe(0);

    const next = await sync([]);
    expect(next.exitCode).toBe(0);
    expect(storedCounts().get(`${A}/2025/big.pdf`)).toBe(1);
  });
});

describe('docs sync: durability', () => {
  it.skipIf(inProcess)('a chain of SIGKILLs at random moments (mid-upload included), then a clean run: every file stored exactly once', async () => {
    const files: Record<string, string | Buffer> = {};
    for (let index = 0; index < 36; index += 1) {
      const account = A + (index % 3);
      files[`${account}/${2023 + (index % 2)}/doc-${index}.pdf`] = index % 6 === 0 ? Buffer.alloc(2 * 1024 * 1024, index) : `document ${index}`;
    }
    put(files);
    mock.deps.settings.faults.latencyMs = 60;
    let kills = 0;
    for (let round = 0; round < 6; round += 1) {
      const intents = () => (existsSync(ledgerPath()) ? (readFileSync(ledgerPath(), 'utf8').match(/"type":"intent"/g) ?? []).length : 0);
      const before = intents();
      const running = spawnSync(['--concurrency', '3']);
      // Every other round after this run's first upload started (the kill lands mid-request most of
      // the time), the others anywhere from start-up on (taking the lock, hashing, listing).
      if (round % 2 === 0) await until(() => intents() > before, 'an upload');
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 300)));
      running.child.kill('SIGKILL');
      const killed = await running.result;
      if (killed.signal === 'SIGKILL') kills += 1;
      // Requests already at the mock finish there: wait them out before the next run lists.
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(kills).toBeGreaterThanOrEqual(5);
    mock.deps.settings.faults.latencyMs = 0;
    // A run killed while writing its lock leaves one that cannot be read: taken over once 10 s old.
    const clean = await runCli(['--json', 'docs', 'sync', dir, '--lock-wait', '15'], { env: env(), home });
    expect(clean.exitCode).toBe(0);
    const lines = clean.stdout.trim() === '' ? [] : clean.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.every((line) => line.result === 'uploaded' || line.result === 'skipped')).toBe(true);
    const counts = storedCounts();
    expect(counts.size).toBe(36);
    expect([...counts.entries()].filter(([, count]) => count !== 1)).toEqual([]);
    expect(clean.stderr).toMatch(/documents: \d+ uploaded, \d+ skipped, 0 failed/);
  }, 60_000);

  it.skipIf(inProcess)('Ctrl-C finishes what is in flight, writes the ledger and exits 130; the next run finishes the rest', async () => {
    const files: Record<string, string> = {};
    for (let index = 0; index < 20; index += 1) files[`${A}/2025/doc-${index}.pdf`] = `document ${index}`;
    put(files);
    mock.deps.settings.faults.latencyMs = 80;
    const running = spawnSync(['--concurrency', '2']);
    await until(() => existsSync(ledgerPath()) && (readFileSync(ledgerPath(), 'utf8').match(/"type":"uploaded"/g) ?? []).length >= 3, 'three uploads');
    running.child.kill('SIGINT');
    const stopped = await running.result;
    expect(stopped.exitCode).toBe(130);
    expect(String(stopped.stderr)).toMatch(/error: interrupted: documents: \d+ uploaded, 0 skipped, 0 failed, \d+ not sent/);
    const printed = String(stopped.stdout).trim().split('\n').length;
    const recorded = (readFileSync(ledgerPath(), 'utf8').match(/"type":"uploaded"/g) ?? []).length;
    expect(recorded).toBe(printed);
    expect(existsSync(`${ledgerPath()}.lock`)).toBe(false);
    mock.deps.settings.faults.latencyMs = 0;
    const rest = await sync([]);
    expect(rest.exitCode).toBe(0);
    expect(rest.stderr).toContain(`documents: ${20 - printed} uploaded, ${printed} skipped, 0 failed`);
    expect([...storedCounts().values()]).toEqual(Array.from({ length: 20 }, () => 1));
  });

  it('a second run while one holds the ledger exits 10 after --lock-wait, sending nothing', async () => {
    put({ [`${A}/2025/a.pdf`]: 'a', [`${A}/2025/b.pdf`]: 'b' });
    mock.deps.settings.faults.latencyMs = 300;
    const first = spawnSync(['--concurrency', '1']);
    await until(() => existsSync(`${ledgerPath()}.lock`), 'the lock');
    const second = await sync(['--lock-wait', '0']);
    expect(second.exitCode).toBe(10);
    expect(second.stderr).toContain(`the documents ledger ${ledgerPath()} is in use by taxprep (pid ${first.child.pid} on `);
    expect((await first.result).exitCode).toBe(0);
    expect(storedCounts().size).toBe(2);
  });
});

describe("the nightly sync recipe of docs/cron.md, run as cron runs it", () => {
  /** The recipe's script, word for word but for the two paths a machine chooses: taxprep's and the shared folder's. */
  function recipe(folder: string): string {
    const guide = readFileSync(fileURLToPath(new URL('../../docs/cron.md', import.meta.url)), 'utf8');
    const script = /```sh\n(#!\/bin\/sh\n# \/usr\/local\/bin\/taxprep-sync:[\s\S]*?)```/.exec(guide)?.[1];
    expect(script).toBeDefined();
    return script!.replace('/usr/local/bin/taxprep ', `${cliCommandLine()} `).replace('/srv/shared/clients', folder);
  }

  it('uploads the new files once, is quiet while all is well, logs each night and mails a conflict', async () => {
    await runCli(['profiles', 'add', '--insecure-storage', 'cron', '--base-url', mock.baseUrl, '--api-key-stdin'], { home, input: `${BATCH_KEYS.acme}\n` });
    put({ [`${A}/2025/w2.pdf`]: 'w2', [`${B}/2024/k1.pdf`]: 'k1', [`${A}/2025/drafts/todo.txt`]: 'later' });
    const script = join(home, 'taxprep-sync');
    writeFileSync(script, recipe(dir), { mode: 0o755 });
    // cron: no terminal (a session of its own), no stdin, an environment of a few variables.
    const state = join(home, '.local', 'state', 'taxprep');
    const cron = () =>
      runScanned(script, [], { env: { PATH: '/usr/bin:/bin', HOME: home, SHELL: '/bin/sh', LOGNAME: 'cron' }, extendEnv: false, stdin: 'ignore', detached: true, files: [join(state, 'sync.ndjson'), join(state, 'sync.log')] });
    const results = () => readFileSync(join(state, 'sync.ndjson'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));

    const first = await cron();
    expect([first.exitCode, first.stdout, first.stderr]).toEqual([0, '', '']);
    // Lines come as uploads end: with 4 at a time, in any order.
    expect(results().map((line) => [line.path, line.result]).sort()).toEqual([
      [`${A}/2025/w2.pdf`, 'uploaded'],
      [`${B}/2024/k1.pdf`, 'uploaded'],
    ]);

    put({ [`${A}/2025/1099.txt`]: '1099' });
    const second = await cron();
    expect([second.exitCode, second.stdout, second.stderr]).toEqual([0, '', '']);
    expect(results().map((line) => line.path).at(-1)).toBe(`${A}/2025/1099.txt`);
    expect(results()).toHaveLength(3);
    expect([...storedCounts().values()]).toEqual([1, 1, 1]);

    writeFileSync(join(dir, `${A}/2025/w2.pdf`), 'w2, edited');
    const conflict = await cron();
    expect(conflict.exitCode).toBe(9);
    const mail = String(conflict.stdout);
    expect(mail).toContain(`taxprep docs sync exited 9 (see taxprep help exit-codes); this run, also in ${join(state, 'sync.log')}:`);
    expect(mail).toContain(`failed: ${A}/2025/w2.pdf DOCUMENT_CONFLICT`);
    const log = readFileSync(join(state, 'sync.log'), 'utf8');
    expect(log.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (left out: .*\n)?documents: /gm)).toHaveLength(3);
    expect(log).toContain('documents: 0 uploaded, 2 skipped, 1 failed');
    expect(results().at(-1)).toMatchObject({ path: `${A}/2025/w2.pdf`, result: 'conflict', error: { code: 'DOCUMENT_CONFLICT' } });
  });
});

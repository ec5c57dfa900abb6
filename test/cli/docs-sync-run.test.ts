import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DocumentsLedger } from '../../src/batch/ledgers/documents';
import { parseFixture } from '../../src/mock/fixture';
import { makeHome, runMain } from '../helpers/cli';
import { startMock, type RunningMock } from '../helpers/mock';
import { BATCH_KEYS, FIRST_ACCOUNT_ID, batchFixture } from '../e2e/login-link.fixture';

/**
 * `taxprep docs sync` run in process (`main`) against one mock: every line it prints on a terminal,
 * in a pipe and as JSON, every refusal of a manifest, what its ledger holds after each kind of
 * upload, a file that changes between its plan and its upload, and an upload an interrupted run
 * left unrecorded. test/e2e/docs-sync.test.ts runs the build against the same mock.
 */

const A = FIRST_ACCOUNT_ID;
const NOT_AN_ACCOUNT = 'notes is not an account id (a positive integer written plainly, such as 1001); the layout is <account-id>/<tax-year>/<file>';
const B = FIRST_ACCOUNT_ID + 1;
let mock: RunningMock;
let home: string;
let dir: string;
/** Called once, as the mock answers the next document list: between a run's plan and its uploads. */
let onList: (() => void) | undefined;

beforeAll(async () => {
  mock = await startMock({
    fixture: parseFixture(batchFixture({ accounts: 4 })),
    rateLimits: [],
    onRequest: (request) => {
      if (request.method !== 'GET' || !/\/documents\?/.test(request.path)) return;
      const hook = onList;
      onList = undefined;
      hook?.();
    },
  });
});
afterAll(() => mock.close());
beforeEach(async () => {
  await mock.deps.store.reset();
  mock.deps.requestLog.clear();
  onList = undefined;
  home = makeHome();
  dir = mkdtempSync(join(tmpdir(), 'taxprep-sync-run-'));
});

const env = () => ({ TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: BATCH_KEYS.acme, NO_COLOR: '1' });
const sync = (args: string[], options: { tty?: boolean; globals?: string[] } = {}) => runMain([...(options.globals ?? []), 'docs', 'sync', dir, ...args], { env: env(), home, tty: options.tty });
const ledgerPath = () => join(home, '.local', 'share', 'taxprep', 'documents.ndjson');
const ledger = (): Array<Record<string, any>> => readFileSync(ledgerPath(), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
const ndjson = (text: string): Array<Record<string, any>> => text.trim().split('\n').map((line) => JSON.parse(line));

function put(files: Record<string, string | Buffer>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** The mock's documents of account `account`: [tax year, filename, description], in the order stored. */
const stored = (account: number) => mock.deps.store.state.documents.filter((document) => document.account_id === account).map((document) => [document.tax_year, document.filename, document.description]);
const idOf = (account: number, filename: string) => String(mock.deps.store.state.documents.find((document) => document.account_id === account && document.filename === filename)?.id);

describe('docs sync prints', () => {
  it('in a pipe: the result, the path, account, year and document id; settled files first, then uploads; nothing left out, no note', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2' });
    expect((await sync([])).exitCode).toBe(0);
    put({ [`${A}/2025/w2.pdf`]: 'w2, corrected', [`${A}/2025/k1.pdf`]: 'k1', [`${B}/2024/scan.png`]: 'png' });
    const result = await sync(['--concurrency', '1']);
    expect(result.exitCode).toBe(9);
    expect(result.stdout).toBe(
      `conflict\t${A}/2025/w2.pdf\t${A}\t2025\tDOCUMENT_CONFLICT\tcontent differs from what was uploaded under this name (document ${idOf(A, 'w2.pdf')}); pass --upload-changed to upload it\n` +
        `uploaded\t${A}/2025/k1.pdf\t${A}\t2025\t${idOf(A, 'k1.pdf')}\n` +
        `uploaded\t${B}/2024/scan.png\t${B}\t2024\t${idOf(B, 'scan.png')}\n`,
    );
    expect(result.stderr).toMatch(new RegExp(`^documents: 2 uploaded, 0 skipped, 1 failed in [^\\n]+\\nfailed: ${A}/2025/w2.pdf DOCUMENT_CONFLICT\\n$`));
  });

  it('on a terminal: the columns aligned to the widest result and path, the document and its size, a skip and a conflict in words', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2' });
    expect((await sync([])).exitCode).toBe(0);
    await runMain(['docs', 'upload', String(A), join(dir, `${A}/2025/w2.pdf`), '--tax-year', '2024'], { env: env(), home });
    put({ [`${A}/2025/w2.pdf`]: 'w2, corrected', [`${A}/2025/a-much-longer-name.pdf`]: 'long', [`${A}/2024/w2.pdf`]: 'w2 again' });
    const result = await sync(['--concurrency', '1'], { tty: true });
    expect(result.exitCode).toBe(9);
    const [w2, w2of2024] = mock.deps.store.state.documents.map((document) => document.id);
    expect(result.stdout).toBe(
      `skipped   ${A}/2024/w2.pdf                  the account has this name for the year (document ${w2of2024})\n` +
        // The conflict wrapped between words to the terminal's 100 columns, under the path.
        `conflict  ${A}/2025/w2.pdf                  DOCUMENT_CONFLICT  content differs from what was\n` +
        `          uploaded under this name (document ${w2}); pass --upload-changed to upload it\n` +
        `uploaded  ${A}/2025/a-much-longer-name.pdf  document ${idOf(A, 'a-much-longer-name.pdf')}  4 B\n`,
    );
  });

  it('with --json: every field of a skip, a conflict and an entry that cannot be synced (--skip-invalid)', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2' });
    expect((await sync([])).exitCode).toBe(0);
    const w2 = idOf(A, 'w2.pdf');
    await runMain(['docs', 'upload', String(B), join(dir, `${A}/2025/w2.pdf`), '--tax-year', '2025'], { env: env(), home });
    put({ [`${A}/2025/w2.pdf`]: 'w2, corrected', [`${B}/2025/w2.pdf`]: 'other', 'notes/x.pdf': 'x' });
    const result = await sync(['--skip-invalid', '--concurrency', '1'], { globals: ['--json'] });
    expect(result.exitCode).toBe(9);
    expect(ndjson(result.stdout)).toEqual([
      { path: 'notes', result: 'failed', error: { code: 'INVALID_FILE', message: NOT_AN_ACCOUNT } },
      { path: `${A}/2025/w2.pdf`, account_id: A, tax_year: 2025, filename: 'w2.pdf', result: 'conflict', error: { code: 'DOCUMENT_CONFLICT', message: `content differs from what was uploaded under this name (document ${w2}); pass --upload-changed to upload it`, details: { reason: 'content_changed', document_id: w2 } } },
      { path: `${B}/2025/w2.pdf`, account_id: B, tax_year: 2025, filename: 'w2.pdf', result: 'skipped', reason: 'name_on_service', document_id: idOf(B, 'w2.pdf') },
    ]);
  });

  it('left out: hidden, excluded and not regular files, counted in words', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2', [`${A}/2025/.hidden.pdf`]: 'h', [`${A}/2025/draft.tmp`]: 't' });
    const sockets: Server[] = [];
    for (const name of ['one.sock', 'two.sock']) {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(join(dir, `${A}/2025/${name}`), resolve));
      sockets.push(server);
    }
    try {
      const two = await sync(['--exclude', '*.tmp']);
      expect(two.stderr).toMatch(/^left out: 1 hidden, 1 excluded, 2 not regular files\ndocuments: 1 uploaded, /);
      sockets.pop()!.close();
      const one = await sync(['--dry-run', '--exclude', '*.tmp']);
      expect(one.stderr).toBe('dry run: 0 to upload (0 B), 1 to skip, 0 in conflict; left out: 1 hidden, 1 excluded, 1 not a regular file; nothing was uploaded\n');
    } finally {
      for (const server of sockets) server.close();
    }
  });
});

describe('docs sync --dry-run prints the plan', () => {
  it('on a terminal, in words; with --json, the document a skip or a conflict names', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2' });
    expect((await sync([])).exitCode).toBe(0);
    const w2 = idOf(A, 'w2.pdf');
    put({ [`${A}/2025/w2.pdf`]: 'w2, corrected', [`${A}/2025/copy-of-w2.pdf`]: 'w2', [`${A}/2025/new.pdf`]: 'new!' });
    const words = await sync(['--dry-run'], { tty: true });
    expect(words.exitCode).toBe(0);
    expect(words.stdout).toBe(
      `skip  ${A}/2025/copy-of-w2.pdf  uploaded before with this content (document ${w2})\n` +
        `upload  ${A}/2025/new.pdf  not on the service\n` +
        `conflict  ${A}/2025/w2.pdf  content differs from what was uploaded under this name (document ${w2});\n` +
        `                            pass --upload-changed to upload it\n`,
    );
    expect(words.stderr).toBe('dry run: 1 to upload (4 B), 1 to skip, 1 in conflict; nothing was uploaded\n');
    const json = await sync(['--dry-run'], { globals: ['--json'] });
    expect(ndjson(json.stdout).map((line) => [line.path, line.plan])).toEqual([
      [`${A}/2025/copy-of-w2.pdf`, { action: 'skip', reason: 'uploaded_before', document_id: w2 }],
      [`${A}/2025/new.pdf`, { action: 'upload', reason: 'new' }],
      [`${A}/2025/w2.pdf`, { action: 'conflict', reason: 'content_changed', document_id: w2 }],
    ]);
  });

  it('with --skip-invalid, the entries that cannot be synced as failures, counted; --offline says nothing was sent', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2', 'notes/x.pdf': 'x' });
    const text = await sync(['--dry-run', '--skip-invalid', '--offline']);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toBe(`upload\t${A}/2025/w2.pdf\t${A}\t2025\tnot_in_ledger\nfail\tnotes\t${NOT_AN_ACCOUNT}\n`);
    expect(text.stderr).toBe('dry run: 1 to upload (2 B), 0 to skip, 0 in conflict, 1 invalid; nothing was sent (planned from the ledger alone)\n');
    const json = await sync(['--dry-run', '--skip-invalid', '--offline'], { globals: ['--json'] });
    expect(ndjson(json.stdout)[1]).toEqual({ path: 'notes', plan: { action: 'fail', reason: 'invalid_file' }, error: { code: 'INVALID_FILE', message: NOT_AN_ACCOUNT } });
  });

  it('--offline: a changed file is a conflict with the document the ledger recorded under its name', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2' });
    expect((await sync([])).exitCode).toBe(0);
    put({ [`${A}/2025/w2.pdf`]: 'w2, corrected' });
    mock.deps.requestLog.clear();
    const offline = await sync(['--dry-run', '--offline'], { globals: ['--json'] });
    expect(ndjson(offline.stdout).map((line) => line.plan)).toEqual([{ action: 'conflict', reason: 'content_changed', document_id: idOf(A, 'w2.pdf') }]);
    expect(mock.deps.requestLog.entries()).toEqual([]);
  });

  it('--offline goes with --dry-run only', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2' });
    const result = await sync(['--offline']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--offline plans from the ledger alone and sends nothing, so it goes with --dry-run');
    expect(mock.deps.requestLog.entries()).toEqual([]);
  });
});

describe('docs sync --description and --manifest', () => {
  it('--description goes with every file of a walk; a manifest row keeps its own, or takes it when it has none', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2', 'ada/k1.pdf': 'k1', 'ada/1099.pdf': '1099' });
    expect((await sync(['--description', 'Sent by the nightly sync', '--exclude', 'ada'])).exitCode).toBe(0);
    expect(stored(A)).toEqual([[2025, 'w2.pdf', 'Sent by the nightly sync']]);
    const manifest = join(home, 'manifest.ndjson');
    writeFileSync(manifest, `{"path": "ada/k1.pdf", "account_id": ${B}, "tax_year": 2024, "description": "K-1"}\n{"path": "ada/1099.pdf", "account_id": ${B}, "tax_year": 2024}\n`);
    expect((await sync(['--manifest', manifest, '--description', 'From the manifest', '--concurrency', '1'])).exitCode).toBe(0);
    expect(stored(B)).toEqual([
      [2024, 'k1.pdf', 'K-1'],
      [2024, '1099.pdf', 'From the manifest'],
    ]);
  });

  it('rows that are hidden or excluded are left out, and said so', async () => {
    put({ 'ada/k1.pdf': 'k1', 'ada/.k1.pdf': 'hidden', 'ada/k1.tmp': 'tmp' });
    const manifest = join(home, 'manifest.csv');
    writeFileSync(manifest, `path,account_id,tax_year\nada/k1.pdf,${A},2025\nada/.k1.pdf,${A},2025\nada/k1.tmp,${A},2025\n`);
    const result = await sync(['--manifest', manifest, '--exclude', '*.tmp']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/^left out: 1 hidden, 1 excluded\ndocuments: 1 uploaded, 0 skipped, 0 failed in /);
    expect(stored(A)).toEqual([[2025, 'k1.pdf', '']]);
  });

  it('an empty manifest, one that cannot be read, an unknown column, a line that is not JSON: exit 2, each named', async () => {
    const manifest = join(home, 'manifest');
    writeFileSync(manifest, '\n');
    const empty = await sync(['--manifest', manifest]);
    expect([empty.exitCode, empty.stderr]).toEqual([2, `error: --manifest ${manifest} names no files\nGive a CSV with a path,account_id,tax_year header, or NDJSON objects with those keys.\n`]);
    const missing = await sync(['--manifest', join(home, 'gone.csv')]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/^error: --manifest /);
    writeFileSync(manifest, `path,account,tax_year\nada/k1.pdf,${A},2025\n`);
    const column = await sync(['--manifest', manifest]);
    expect(column.exitCode).toBe(2);
    expect(column.stderr).toContain('path, account_id, tax_year, description');
    writeFileSync(manifest, `{"path": "ada/k1.pdf", "account_id": ${A}, "tax_year": 2025}\n["ada/k1.pdf"]\n`);
    const json = await sync(['--manifest', manifest]);
    expect(json.exitCode).toBe(2);
    expect(json.stderr).toContain('{"path": "ada/w2.pdf", "account_id": 1001, "tax_year": 2025}');
    expect(mock.deps.requestLog.entries()).toEqual([]);
  });

  it('bad rows: listed by line, the first 20 and how many more, a path missing or empty; one entry said in the singular', async () => {
    put({ 'ada/k1.pdf': 'k1' });
    const manifest = join(home, 'manifest.ndjson');
    const rows = [{ account_id: A, tax_year: 2025 }, { path: 'gone.pdf', account_id: A, tax_year: 2025 }, { path: '', account_id: A, tax_year: 2025 }];
    for (let index = 0; index < 21; index += 1) rows.push({ path: 'ada/k1.pdf', account_id: 0, tax_year: 2025 });
    writeFileSync(manifest, rows.map((row) => JSON.stringify(row)).join('\n'));
    const many = await sync(['--manifest', manifest]);
    expect(many.exitCode).toBe(2);
    const lines = many.stderr.split('\n');
    expect(lines.slice(0, 4)).toEqual([`error: cannot sync 24 entries of ${manifest}; nothing was sent:`, '  line 1: path is required', '  line 2: gone.pdf does not exist', '  line 3: path must not be empty']);
    expect(lines.slice(20, 23)).toEqual(['  line 20: account_id must be a positive integer', '  (and 4 more)', 'Fix or --exclude them, or pass --skip-invalid to sync the rest and report these as failed.']);

    writeFileSync(manifest, JSON.stringify(rows[1]));
    const one = await sync(['--manifest', manifest], { globals: ['--json'] });
    expect(one.exitCode).toBe(2);
    expect(JSON.parse(one.stderr).error).toMatchObject({ message: `cannot sync 1 entry of ${manifest}; nothing was sent:\n  line 1: gone.pdf does not exist`, details: { problems: ['line 1: gone.pdf does not exist'] } });
  });

  it('a walk lists its problems by path', async () => {
    put({ 'zeta/a.pdf': 'z', 'alpha/a.pdf': 'a', [`${A}/2025/w2.pdf`]: 'w2' });
    const result = await sync([]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr.split('\n').slice(0, 3)).toEqual([
      `error: cannot sync 2 entries of ${dir}; nothing was sent:`,
      `  alpha ${NOT_AN_ACCOUNT.slice(6)}`,
      `  zeta ${NOT_AN_ACCOUNT.slice(6)}`,
    ]);
  });
});

describe('docs sync keeps its ledger', () => {
  it('an intent before each upload, with the documents of that name seen then; the document id after; a refusal with its code', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2', [`${A}/2025/notes.rtf`]: 'rtf' });
    expect((await sync(['--concurrency', '1'])).exitCode).toBe(9);
    const first = idOf(A, 'w2.pdf');
    put({ [`${A}/2025/w2.pdf`]: 'w2, corrected' });
    expect((await sync(['--upload-changed', '--exclude', '*.rtf'])).exitCode).toBe(0);
    const second = String(mock.deps.store.state.documents.filter((document) => document.filename === 'w2.pdf').at(-1)?.id);
    const lines = ledger().map(({ type, filename, known_ids, document_id, code, size }) => ({ type, filename, known_ids, document_id, code, size }));
    expect(lines).toEqual([
      { type: 'intent', filename: 'notes.rtf', known_ids: [], size: 3 },
      { type: 'refused', filename: 'notes.rtf', code: 'UNSUPPORTED_MEDIA_TYPE' },
      { type: 'intent', filename: 'w2.pdf', known_ids: [], size: 2 },
      { type: 'uploaded', filename: 'w2.pdf', document_id: first, size: 2 },
      { type: 'intent', filename: 'w2.pdf', known_ids: [first], size: 13 },
      { type: 'uploaded', filename: 'w2.pdf', document_id: second, size: 13 },
    ]);
  });

  it('an upload an interrupted run left open and the service stored is recorded, and its content is never sent again, under any name', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2' });
    // What a run killed mid-upload leaves: the intent on disk, the document on the service.
    const open = await DocumentsLedger.open(ledgerPath());
    await open.recordIntent({ origin: new URL(mock.baseUrl).origin, account_id: A, tax_year: 2025, filename: 'w2.pdf' }, { sha256: createHash('sha256').update('w2').digest('hex'), size: 2, known_ids: [], profile: null, at: new Date() });
    await open.close();
    await runMain(['docs', 'upload', String(A), join(dir, `${A}/2025/w2.pdf`), '--tax-year', '2025'], { env: env(), home });
    const id = idOf(A, 'w2.pdf');
    const resumed = await sync([], { globals: ['--json'] });
    expect(resumed.exitCode).toBe(0);
    expect(ndjson(resumed.stdout)).toEqual([{ path: `${A}/2025/w2.pdf`, account_id: A, tax_year: 2025, filename: 'w2.pdf', result: 'skipped', reason: 'interrupted_upload_stored', document_id: id }]);
    expect(ledger().at(-1)).toMatchObject({ type: 'uploaded', filename: 'w2.pdf', document_id: id, size: 2 });
    expect(ledger().at(-1)).not.toHaveProperty('intent');

    rmSync(join(dir, `${A}/2025/w2.pdf`));
    put({ [`${A}/2025/w2-renamed.pdf`]: 'w2' });
    mock.deps.requestLog.clear();
    const renamed = await sync([], { globals: ['--json', '--verbose'] });
    expect(ndjson(renamed.stdout)).toEqual([{ path: `${A}/2025/w2-renamed.pdf`, account_id: A, tax_year: 2025, filename: 'w2-renamed.pdf', result: 'skipped', reason: 'uploaded_before', document_id: id }]);
    expect(mock.deps.requestLog.entries()).toEqual([]);
    expect(stored(A)).toHaveLength(1);
  });
});

describe('docs sync stops an upload whose file changed after it was planned', () => {
  const cases: Array<[string, (path: string) => void]> = [
    ['grew', (path) => appendFileSync(path, ' and more')],
    ['shrank', (path) => truncateSync(path, 4)],
    ['changed', (path) => writeFileSync(path, 'W2 2025 form')],
    ['could not be read (does not exist)', (path) => rmSync(path)],
  ];
  it.each(cases)('%s: FILE_CHANGED, nothing stored, the next run sends it once', async (how, change) => {
    const path = join(dir, `${A}/2025/w2.pdf`);
    put({ [`${A}/2025/w2.pdf`]: 'w2 2025 form' });
    onList = () => change(path);
    const result = await sync([]);
    expect(result.exitCode).toBe(9);
    expect(result.stdout).toBe(`failed\t${A}/2025/w2.pdf\t${A}\t2025\tFILE_CHANGED\t${A}/2025/w2.pdf ${how} while it was being uploaded; nothing was stored\n`);
    expect(stored(A)).toEqual([]);
    put({ [`${A}/2025/w2.pdf`]: 'w2 2025 form' });
    expect((await sync([])).exitCode).toBe(0);
    expect(stored(A)).toEqual([[2025, 'w2.pdf', '']]);
  });
});

describe('docs sync, more of what it prints', () => {
  it('with --json, an upload as the document the service answered; a second copy in the run as a skip without a document', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2', [`${A}/2025/copy/w2.pdf`]: 'w2' });
    const manifest = join(home, 'manifest.csv');
    writeFileSync(manifest, `path,account_id,tax_year\n${A}/2025/w2.pdf,${A},2025\n${A}/2025/copy/w2.pdf,${A},2025\n`);
    const json = await sync(['--manifest', manifest], { globals: ['--json'] });
    expect(json.exitCode).toBe(0);
    const document = mock.deps.store.state.documents.find((stored) => stored.account_id === A)!;
    expect(ndjson(json.stdout)).toEqual([
      { path: `${A}/2025/copy/w2.pdf`, account_id: A, tax_year: 2025, filename: 'w2.pdf', result: 'skipped', reason: 'same_file_in_run' },
      { path: `${A}/2025/w2.pdf`, account_id: A, tax_year: 2025, filename: 'w2.pdf', result: 'uploaded', document: expect.objectContaining({ id: document.id, filename: 'w2.pdf', tax_year: 2025 }) },
    ]);
    await mock.deps.store.reset();
    const piped = await sync(['--manifest', manifest, '--ledger', join(home, 'other-ledger.ndjson')]);
    expect(piped.stdout.split('\n')[0]).toBe(`skipped\t${A}/2025/copy/w2.pdf\t${A}\t2025\tsame_file_in_run`);
  });

  it("a file of a type the service refused before is named by its path alone, before anything is sent", async () => {
    put({ [`${A}/2025/notes.rtf`]: 'rtf' });
    expect((await sync([])).exitCode).toBe(9);
    put({ [`${A}/2025/more.rtf`]: 'rtf 2' });
    const again = await sync([]);
    expect(again.exitCode).toBe(2);
    expect(again.stderr.split('\n').slice(0, 3)).toEqual([
      `error: cannot sync 2 entries of ${dir}; nothing was sent:`,
      expect.stringMatching(new RegExp(`^  ${A}/2025/more\\.rtf is of a type \\(\\.rtf, sent as application/octet-stream\\) the service does not take: `)),
      expect.stringMatching(new RegExp(`^  ${A}/2025/notes\\.rtf is of a type `)),
    ]);
  });

  it("a manifest's file over a profile's upload_max_size is refused before anything is sent, by its line", async () => {
    await runMain(['profiles', 'add', '--insecure-storage', 'strict', '--base-url', mock.baseUrl, '--api-key-stdin'], { home, input: `${BATCH_KEYS.acme}\n` });
    const profiles = join(home, '.config', 'taxprep', 'profiles.json');
    const stored = JSON.parse(readFileSync(profiles, 'utf8'));
    stored.profiles.strict.upload_max_size = '1KB';
    writeFileSync(profiles, JSON.stringify(stored));
    put({ 'ada/big.pdf': Buffer.alloc(2048, 1) });
    const manifest = join(home, 'manifest.csv');
    writeFileSync(manifest, `path,account_id,tax_year\nada/big.pdf,${A},2025\n`);
    const result = await runMain(['docs', 'sync', dir, '--manifest', manifest], { home, env: { NO_COLOR: '1' } });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`\n  line 2: ada/big.pdf is 2.0 KB, over the service's upload limit of 1.0 KB (set in profile "strict" (upload_max_size))\n`);
    expect(mock.deps.requestLog.entries().filter((entry) => entry.method === 'POST')).toEqual([]);
  });

  it('an interrupted upload that landed, of a file changed since: recorded as what landed (its size), and the file is a conflict', async () => {
    put({ [`${A}/2025/w2.pdf`]: 'w2' });
    const open = await DocumentsLedger.open(ledgerPath());
    await open.recordIntent({ origin: new URL(mock.baseUrl).origin, account_id: A, tax_year: 2025, filename: 'w2.pdf' }, { sha256: createHash('sha256').update('w2').digest('hex'), size: 2, known_ids: [], profile: null, at: new Date() });
    await open.close();
    await runMain(['docs', 'upload', String(A), join(dir, `${A}/2025/w2.pdf`), '--tax-year', '2025'], { env: env(), home });
    put({ [`${A}/2025/w2.pdf`]: 'w2, edited after the kill' });
    const result = await sync([]);
    expect(result.exitCode).toBe(9);
    expect(result.stdout).toMatch(new RegExp(`^conflict\\t${A}/2025/w2.pdf\\t`));
    expect(ledger().at(-1)).toMatchObject({ type: 'uploaded', filename: 'w2.pdf', document_id: idOf(A, 'w2.pdf'), size: 2, sha256: createHash('sha256').update('w2').digest('hex') });
  });
});

import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as createAccount from '../../src/commands/accounts/create';
import * as getAccount from '../../src/commands/accounts/get';
import * as getDeliverable from '../../src/commands/deliverables/get';
import * as listDeliverables from '../../src/commands/deliverables/list';
import * as getDocument from '../../src/commands/docs/get';
import * as listDocuments from '../../src/commands/docs/list';
import * as uploadDocuments from '../../src/commands/docs/upload';
import * as health from '../../src/commands/health/health';
import * as listProjects from '../../src/commands/projects/list';
import * as projectStatus from '../../src/commands/projects/status';
import { ApiError, EXIT, ProtocolError, UsageError } from '../../src/errors';
import type { Clock } from '../../src/types';
import { createTestContext, type TestContext, type TestContextOptions } from '../helpers/context';
import { CONFIGURABLE_QUERY_PARAMETERS, DEFAULT_MAX_RESPONSE_BYTES } from '../../src/config/settings';
import { stubApi, type StubApi, type Stubs } from '../helpers/stubApi';

const ESC = '\u001b';

const STUB_BASE_URL = 'http://127.0.0.1:4010/v1beta';

const FIXED_NOW = new Date('2026-11-17T10:15:00Z');

const fixedClock: Clock = {
  now: () => FIXED_NOW,
  sleep: async () => undefined,
};

/** Points a test context at a stub: every `ctx.api()` answers from it. */
function useStub(test: TestContext, stubs: Stubs): StubApi {
  const api = stubApi(stubs);
  test.ctx.api = async () => api;
  test.ctx.settings = async () => ({
    profileName: null,
    baseUrl: STUB_BASE_URL,
    baseUrlSource: 'flag',
    apiKey: undefined,
    apiKeySource: undefined,
    maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
    queryParameters: { ...CONFIGURABLE_QUERY_PARAMETERS },
  });
  return api;
}

function setUp(stubs: Stubs, options: TestContextOptions = {}) {
  const test = createTestContext({ clock: fixedClock, ...options });
  const api = useStub(test, stubs);
  return { ...test, api };
}

const document = (id: number, extra: Record<string, unknown> = {}) => ({
  id,
  filename: `w2-${id}.pdf`,
  tax_year: 2024,
  description: 'W-2 from employer',
  uploaded_at: '2026-11-16T09:00:00Z',
  ...extra,
});

const project = {
  id: 2001,
  type: 'tax_return',
  tax_year: 2024,
  status: 'waiting_on_client',
  progress_percentage: 45,
  created_at: '2026-01-10T09:00:00Z',
  estimated_completion: '2026-11-23T10:15:00Z',
};

const deliverableItem = (id: number) => ({
  id,
  project_id: 2000 + id,
  account_id: 1001,
  document_id: 5000 + id,
  title: `2024 return ${id}`,
  project_type: 'tax_return',
  status: 'delivered',
  view_link: `https://app.example/view/${id}`,
  summary: 'Refund expected',
  prepared_date: '2026-11-01T12:00:00Z',
  expires_at: '2026-11-18T12:00:00Z',
});

describe('health', () => {
  it('shows a card with a readable date on a terminal and exits 0 when ok', async () => {
    const t = setUp({ call: { health: { status: 'ok', timestamp: '2026-11-17T10:14:00Z' } } }, { tty: true });
    expect(await health.run(t.ctx, {})).toBe(EXIT.OK);
    expect(t.stdout()).toBe(
      'Status:   \u001b[32mok\u001b[39m\nService:  http://127.0.0.1:4010/v1beta\nChecked:  2026-11-17 10:14 UTC (1 minute ago)\n'.replace(
        /(Status:|Service:|Checked:)( +)/g,
        (_, label: string, pad: string) => `\u001b[2m${label}${pad}\u001b[22m`,
      ),
    );
  });

  it('prints the document as sent with --json, unknown fields included, compact off a terminal', async () => {
    const sent = { status: 'ok', timestamp: '2026-11-17T10:14:00Z', region: 'eu-1' };
    const t = setUp({ call: { health: sent } }, { globals: { json: true } });
    expect(await health.run(t.ctx, {})).toBe(EXIT.OK);
    expect(t.stdout()).toBe(`${JSON.stringify(sent)}\n`);
    expect(t.stderr()).toBe('');
  });

  it('exits 8 and says why when the service reports another status', async () => {
    const t = setUp({ call: { health: { status: 'degraded', timestamp: '2026-11-17T10:14:00Z' } } });
    expect(await health.run(t.ctx, {})).toBe(EXIT.SERVER);
    expect(t.stdout()).toContain('Status:   degraded');
    expect(t.stderr()).toContain('reports status "degraded"');
  });
});

describe('accounts', () => {
  const created = {
    id: 1042,
    email: 'jane@example.com',
    first_name: 'Jane',
    last_name: 'Doe',
    status: 'active',
    login_link: 'https://app.example/auth/partner-login/abc',
    login_link_expires_at: '2026-11-24T10:15:00Z',
    created_at: '2026-11-17T10:15:00Z',
    spouse: { id: 77, email: 'john@example.com', first_name: 'John', last_name: 'Doe', status: 'pending' },
  };

  it('create shows the login link, its expiry and the spouse section off a terminal without colour', async () => {
    const t = setUp({ call: { createAccount: created } });
    await createAccount.run(t.ctx, { body: { email: 'jane@example.com', first_name: 'Jane', last_name: 'Doe' }, yes: false });
    expect(t.stdout()).toBe(
      [
        'Account 1042',
        'Name:          Jane Doe',
        'Email:         jane@example.com',
        'Status:        active',
        'Created:       2026-11-17T10:15:00Z',
        'Login link:    https://app.example/auth/partner-login/abc',
        'Link expires:  2026-11-24T10:15:00Z',
        '',
        'Spouse user 77',
        'Name:          John Doe',
        'Email:         john@example.com',
        'Status:        pending',
        'Login link:    none yet (no invitation sent)',
        '',
      ].join('\n'),
    );
    expect(t.api.calls).toEqual([{ name: 'createAccount', input: { body: { email: 'jane@example.com', first_name: 'Jane', last_name: 'Doe' } } }]);
  });

  it('create shows when the link expires, relative to now, on a terminal', async () => {
    const t = setUp({ call: { createAccount: created } }, { tty: true, env: { NO_COLOR: '1' } });
    await createAccount.run(t.ctx, { body: { email: 'jane@example.com', first_name: 'Jane', last_name: 'Doe' }, yes: false });
    expect(t.stdout()).toContain('Link expires:  2026-11-24 10:15 UTC (in 7 days)');
  });

  it('get strips escape sequences a hostile name carries', async () => {
    const t = setUp({
      call: { getAccount: { id: 1001, email: 'a@example.com', first_name: `Ann${ESC}]0;pwned\u0007`, last_name: `Lee${ESC}[2J`, status: 'active' } },
    });
    await getAccount.run(t.ctx, { accountId: 1001 });
    expect(t.stdout()).toContain('Name:    Ann Lee\n');
    expect(t.stdout()).not.toContain(ESC);
  });
});

describe('docs list', () => {
  const page = { documents: [document(5001), document(5002, { description: 'a'.repeat(60) })], total_count: 2, has_more: false };

  it('prints tab-separated rows off a terminal, with dates as sent', async () => {
    const t = setUp({ call: { listDocuments: page } });
    await listDocuments.run(t.ctx, { accountId: 1001, query: {}, all: false, ndjson: false });
    expect(t.stdout()).toBe(
      `5001\tw2-5001.pdf\t2024\tW-2 from employer\t2026-11-16T09:00:00Z\n5002\tw2-5002.pdf\t2024\t${'a'.repeat(60)}\t2026-11-16T09:00:00Z\n`,
    );
    expect(t.stderr()).toBe('');
  });

  it('prints a table with a header, dates shortened before text to fit the terminal', async () => {
    const t = setUp({ call: { listDocuments: page } }, { tty: true, env: { NO_COLOR: '1' } });
    await listDocuments.run(t.ctx, { accountId: 1001, query: {}, all: false, ndjson: false });
    const lines = t.stdout().trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID {4}FILENAME {5}TAX YEAR {2}DESCRIPTION +UPLOADED$/);
    expect(lines[1]).toMatch(/ 2026-11-16$/);
    expect(lines[2]).toMatch(/ a{12,}… {2}/);
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(t.ctx.io.columns);
  });

  it('says so on stderr when the list is empty, and prints nothing on stdout', async () => {
    const t = setUp({ call: { listDocuments: { documents: [], total_count: 0, has_more: false } } });
    await listDocuments.run(t.ctx, { accountId: 1001, query: { tax_year: 2024 }, all: false, ndjson: false });
    expect(t.stdout()).toBe('');
    expect(t.stderr()).toBe('No documents for account 1001 in 2024.\n');
  });

  it('prints the empty document, and no message, with --json', async () => {
    const empty = { documents: [], total_count: 0, has_more: false };
    const t = setUp({ call: { listDocuments: empty } }, { globals: { json: true } });
    await listDocuments.run(t.ctx, { accountId: 1001, query: {}, all: false, ndjson: false });
    expect(t.stdout()).toBe(`${JSON.stringify(empty)}\n`);
    expect(t.stderr()).toBe('');
  });

  it('tells how to get the next page when there are more', async () => {
    const t = setUp({ call: { listDocuments: { ...page, total_count: 7, has_more: true } } });
    await listDocuments.run(t.ctx, { accountId: 1001, query: { limit: 2, offset: 2 }, all: false, ndjson: false });
    expect(t.stderr()).toBe('Showing 2 of 7 documents; next page: --offset 4, or --all for every one.\n');
  });

  it('--ndjson prints each item as sent, one a line', async () => {
    const t = setUp({ call: { listDocuments: { ...page, documents: [document(5001, { pages: 3 })] } } });
    await listDocuments.run(t.ctx, { accountId: 1001, query: {}, all: false, ndjson: true });
    expect(t.stdout()).toBe(`${JSON.stringify(document(5001, { pages: 3 }))}\n`);
  });

  const threePages = [
    { documents: [document(1), document(2)], total_count: 5, has_more: true },
    { documents: [document(3), document(4, { ocr: true })], total_count: 5, has_more: true },
    { documents: [document(5)], total_count: 5, has_more: false },
  ];

  it('--all --json prints ONE document with every item, unknown fields kept', async () => {
    const t = setUp({ pages: { listDocuments: threePages } }, { globals: { json: true } });
    await listDocuments.run(t.ctx, { accountId: 1001, query: { limit: 2 }, all: true, ndjson: false });
    const whole = { documents: threePages.flatMap((p) => p.documents), total_count: 5, has_more: false };
    expect(t.stdout()).toBe(`${JSON.stringify(whole)}\n`);
    expect(t.api.calls).toEqual([{ name: 'pages:listDocuments', input: { params: { account_id: 1001 }, query: { limit: 2 } } }]);
  });

  it('--all --json is pretty on a terminal, and still one document', async () => {
    const t = setUp({ pages: { listDocuments: threePages } }, { globals: { json: true }, tty: true });
    await listDocuments.run(t.ctx, { accountId: 1001, query: {}, all: true, ndjson: false });
    const whole = { documents: threePages.flatMap((p) => p.documents), total_count: 5, has_more: false };
    expect(t.stdout()).toBe(`${JSON.stringify(whole, null, 2)}\n`);
  });

  it('--all --ndjson prints every item of every page', async () => {
    const t = setUp({ pages: { listDocuments: threePages } });
    await listDocuments.run(t.ctx, { accountId: 1001, query: {}, all: true, ndjson: true });
    expect(t.stdout().trimEnd().split('\n').map((line) => JSON.parse(line).id)).toEqual([1, 2, 3, 4, 5]);
  });

  it('--all on a terminal prints one table with every row', async () => {
    const t = setUp({ pages: { listDocuments: threePages } }, { tty: true, env: { NO_COLOR: '1' } });
    await listDocuments.run(t.ctx, { accountId: 1001, query: {}, all: true, ndjson: false });
    const lines = t.stdout().trimEnd().split('\n');
    expect(lines).toHaveLength(6);
    expect(lines.filter((line) => line.startsWith('ID'))).toHaveLength(1);
    expect(t.stderr()).toBe('');
  });
});

describe('docs get', () => {
  it('shows the full document as a card with a readable size', async () => {
    const t = setUp(
      { call: { getDocument: { ...document(5001), account_id: 1001, file_size: 1536, file_type: 'application/pdf' } } },
      { tty: true, env: { NO_COLOR: '1' } },
    );
    await getDocument.run(t.ctx, { documentId: 5001 });
    expect(t.stdout()).toContain('Document 5001\n');
    expect(t.stdout()).toContain('Size:         1.5 KB\n');
    expect(t.stdout()).toContain('Description:  W-2 from employer\n');
  });
});

describe('docs upload', () => {
  const directory = mkdtempSync(join(tmpdir(), 'taxprep-upload-'));
  const w2 = join(directory, 'w2.pdf');
  const scan = join(directory, 'scan.PNG');
  const notes = join(directory, 'notes.rtf');
  const readme = join(directory, 'README');
  const sheet = join(directory, 'sheet.xlsx');
  writeFileSync(w2, 'x'.repeat(2048));
  writeFileSync(scan, 'png');
  writeFileSync(notes, 'notes');
  writeFileSync(readme, 'readme');
  writeFileSync(sheet, 'xlsx');
  mkdirSync(join(directory, 'folder'));
  mkdirSync(join(directory, 'again'));
  writeFileSync(join(directory, 'again', 'w2.pdf'), 'other');
  const uploadedDoc = (id: number, filename: string) => ({
    ...document(id),
    filename,
    account_id: 1001,
    file_size: 2048,
    file_type: 'application/pdf',
  });
  const fields = { tax_year: 2024 };
  const options = (paths: string[]) => ({ accountId: 1001, paths, fields, allowDuplicate: true });

  it('checks every file before uploading any, and names each problem', async () => {
    const t = setUp({});
    const missing = join(directory, 'missing.pdf');
    const error = await uploadDocuments.run(t.ctx, options([w2, missing, join(directory, 'folder')])).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).details).toEqual({ [missing]: ['does not exist'], [join(directory, 'folder')]: ['is a directory, not a file'] });
    expect(t.api.calls).toEqual([]);
  });

  it('sends files of types taxprep has no media type for as application/octet-stream: the service decides, nothing refuses them before', async () => {
    const t = setUp({ uploads: [uploadedDoc(1, 'w2.pdf'), uploadedDoc(2, 'notes.rtf'), uploadedDoc(3, 'scan.PNG'), uploadedDoc(4, 'README')] });
    expect(await uploadDocuments.run(t.ctx, options([w2, notes, scan, readme]))).toBe(EXIT.OK);
    expect(t.api.uploaded.map((file) => [file.filename, file.contentType])).toEqual([
      ['w2.pdf', 'application/pdf'],
      ['notes.rtf', 'application/octet-stream'],
      ['scan.PNG', 'image/png'],
      ['README', 'application/octet-stream'],
    ]);
  });

  it('refuses two files that would be stored under one name', async () => {
    const t = setUp({});
    const error = await uploadDocuments.run(t.ctx, options([w2, join(directory, 'again', 'w2.pdf')])).catch((thrown: unknown) => thrown);
    expect((error as UsageError).message).toBe(`nothing was uploaded: ${join(directory, 'again', 'w2.pdf')} would be stored under the same name as ${w2}`);
    expect(t.api.calls).toEqual([]);
  });

  it('refuses a file whose name and tax year the account already has, naming the document; --allow-duplicate sends it', async () => {
    const listed = { documents: [document(7001, { filename: 'w2.pdf' }), document(7002, { filename: 'other.pdf' })], total_count: 2, has_more: false };
    const t = setUp({ pages: { listDocuments: [listed] } });
    const error = await uploadDocuments.run(t.ctx, { ...options([scan, w2]), allowDuplicate: false }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(`nothing was uploaded: ${w2} is already on account 1001 for 2024 as document 7001 (w2.pdf, uploaded 2026-11-16T09:00:00Z)`);
    expect((error as UsageError).hint).toBe('Pass --allow-duplicate to store another document of the same name.');
    expect(t.api.calls).toEqual([{ name: 'pages:listDocuments', input: expect.objectContaining({ params: { account_id: 1001 }, query: { tax_year: 2024 } }) }]);

    const allowed = setUp({ uploads: [uploadedDoc(1, 'w2.pdf')] });
    await uploadDocuments.run(allowed.ctx, options([w2]));
    expect(allowed.api.uploaded.map((file) => file.filename)).toEqual(['w2.pdf']);
  });

  it('sends each file with its media type from the extension, after checking the names are new', async () => {
    const t = setUp({ pages: { listDocuments: [{ documents: [], total_count: 0, has_more: false }] }, uploads: [uploadedDoc(1, 'w2.pdf'), uploadedDoc(2, 'scan.PNG'), uploadedDoc(3, 'sheet.xlsx')] });
    await uploadDocuments.run(t.ctx, { ...options([w2, scan, sheet]), allowDuplicate: false });
    expect(t.api.uploaded.map((file) => [file.filename, file.contentType, file.size])).toEqual([
      ['w2.pdf', 'application/pdf', 2048],
      ['scan.PNG', 'image/png', 3],
      ['sheet.xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 4],
    ]);
    expect(t.stdout().split('\n').map((line) => line.split('\t')[0])).toEqual(['1', '2', '3', '']);
  });

  it('--json prints the document for one file and an array for several', async () => {
    const one = setUp({ uploads: [uploadedDoc(1, 'w2.pdf')] }, { globals: { json: true } });
    await uploadDocuments.run(one.ctx, options([w2]));
    expect(JSON.parse(one.stdout())).toEqual(uploadedDoc(1, 'w2.pdf'));

    const two = setUp({ uploads: [uploadedDoc(1, 'w2.pdf'), uploadedDoc(2, 'scan.PNG')] }, { globals: { json: true } });
    await uploadDocuments.run(two.ctx, options([w2, scan]));
    expect(JSON.parse(two.stdout())).toEqual([uploadedDoc(1, 'w2.pdf'), uploadedDoc(2, 'scan.PNG')]);
  });

  it('a file the service refuses is reported and the others go on: one summary, exit 9', async () => {
    const refused = new ApiError(413, { error: { code: 'PAYLOAD_TOO_LARGE', message: 'too large' } });
    const t = setUp({ uploads: [uploadedDoc(1, 'w2.pdf'), refused, uploadedDoc(3, 'scan.PNG')] }, { globals: { json: true } });
    expect(await uploadDocuments.run(t.ctx, options([w2, sheet, scan]))).toBe(EXIT.PARTIAL);
    expect(JSON.parse(t.stdout())).toEqual([uploadedDoc(1, 'w2.pdf'), uploadedDoc(3, 'scan.PNG')]);
    expect(t.stderr()).toBe('error: sheet.xlsx was not uploaded: too large\nUploaded 2 of 3 files: w2.pdf (id 1), scan.PNG (id 3); refused: sheet.xlsx.\n');
  });

  it('reports which files were uploaded when the service fails midway, and fails with its error', async () => {
    const failing = new ApiError(503, { error: { code: 'SERVICE_UNAVAILABLE', message: 'down' } });
    const t = setUp({ uploads: [uploadedDoc(1, 'w2.pdf'), failing] }, { globals: { json: true } });
    const error = await uploadDocuments.run(t.ctx, options([w2, sheet, scan])).catch((thrown: unknown) => thrown);
    expect(error).toBe(failing);
    expect(JSON.parse(t.stdout())).toEqual([uploadedDoc(1, 'w2.pdf')]);
    expect(t.stderr()).toBe('Uploaded 1 of 3 files: w2.pdf (id 1); sheet.xlsx failed; not uploaded: scan.PNG.\n');
  });

  it('draws progress with bytes on a terminal, and a line per file in a log', async () => {
    const onTerminal = setUp({ uploads: [uploadedDoc(1, 'w2.pdf')] }, { tty: { stderr: true }, env: { NO_COLOR: '1' } });
    await uploadDocuments.run(onTerminal.ctx, options([w2]));
    expect(onTerminal.stderr()).toBe('w2.pdf ░░░░░░░░░░   0%  0 B of 2.0 KB  -/s\r\u001b[Kw2.pdf ██████████ 100%  2.0 KB in 0s\n');

    const inLog = setUp({ uploads: [uploadedDoc(1, 'w2.pdf'), uploadedDoc(2, 'scan.PNG')] });
    await uploadDocuments.run(inLog.ctx, options([w2, scan]));
    expect(inLog.stderr()).toBe('w2.pdf: 2.0 KB in 0s\nscan.PNG: 3 B in 0s\nUploaded 2 of 2 files: w2.pdf (id 1), scan.PNG (id 2).\n');

    const json = setUp({ uploads: [uploadedDoc(1, 'w2.pdf')] }, { globals: { json: true } });
    await uploadDocuments.run(json.ctx, options([w2]));
    expect(json.stderr()).toBe('');
  });

  it('wipes the line of a failed upload, and never draws wider than the terminal', async () => {
    const refused = new ApiError(503, { error: { code: 'SERVICE_UNAVAILABLE', message: 'down' } });
    const t = setUp({ uploads: [uploadedDoc(1, 'w2.pdf'), refused] }, { tty: { stderr: true }, env: { NO_COLOR: '1' }, columns: 40 });
    await uploadDocuments.run(t.ctx, options([w2, sheet])).catch(() => undefined);
    expect(t.stderr()).toMatch(/\r\u001b\[KUploaded 1 of 2 files: w2\.pdf \(id 1\); sheet\.xlsx failed\.\n$/);
    const draws = t.stderr().split(/\r\u001b\[K|\u001b\[1A|\n/).filter((part) => part.includes('%'));
    expect(draws.length).toBeGreaterThan(3);
    for (const draw of draws) expect([...draw].length).toBeLessThan(40);
  });
});

describe('projects', () => {
  it('list draws progress bars and coloured statuses on a colour terminal', async () => {
    const t = setUp({ call: { listProjects: { projects: [project], total_count: 1 } } }, { tty: true });
    await listProjects.run(t.ctx, { accountId: 1001, query: {} });
    expect(t.stdout()).toContain('████░░░░░░  45%');
    expect(t.stdout()).toContain('\u001b[33mwaiting_on_client\u001b[39m');
    expect(t.stdout()).toContain('2026-11-23 10:15 UTC (in 6 days)');
  });

  it('list prints plain values off a terminal', async () => {
    const t = setUp({ call: { listProjects: { projects: [project], total_count: 1 } } });
    await listProjects.run(t.ctx, { accountId: 1001, query: {} });
    expect(t.stdout()).toBe('2001\ttax_return\t2024\twaiting_on_client\t45%\t2026-11-23T10:15:00Z\n');
  });

  it('list names the filters when nothing matches', async () => {
    const t = setUp({ call: { listProjects: { projects: [], total_count: 0 } } });
    await listProjects.run(t.ctx, { accountId: 1001, query: { tax_year: 2023, type: 'tax_planning', status: 'completed' } });
    expect(t.stderr()).toBe('No projects for account 1001 in 2023 of type tax_planning with status completed.\n');
  });

  it('status shows the card and a table of outstanding items', async () => {
    const status = {
      ...project,
      account_id: 1001,
      last_updated: '2026-11-16T10:15:00Z',
      outstanding_items: [
        { type: 'missing_document', description: '1099-INT from the bank', priority: 'high', requested_at: '2026-11-10T10:15:00Z' },
      ],
    };
    const t = setUp({ call: { getProjectStatus: status } }, { tty: true, env: { NO_COLOR: '1' } });
    await projectStatus.run(t.ctx, { projectId: 2001 });
    expect(t.stdout()).toContain('Outstanding:      1 item\n');
    expect(t.stdout()).toContain('\nOutstanding items\nTYPE              PRIORITY  DESCRIPTION             REQUESTED\n');
    expect(t.stdout()).toContain('missing_document  high      1099-INT from the bank  2026-11-10 10:15 UTC (7 days ago)\n');
  });
});

describe('deliverables', () => {
  it('list --all --ndjson streams items of every page', async () => {
    const pages = [
      { deliverables: [deliverableItem(1)], total_count: 2, has_more: true },
      { deliverables: [deliverableItem(2)], total_count: 2, has_more: false },
    ];
    const t = setUp({ pages: { listDeliverables: pages } });
    await listDeliverables.run(t.ctx, { query: { status: 'delivered' }, all: true, ndjson: true });
    expect(t.stdout()).toBe(`${JSON.stringify(deliverableItem(1))}\n${JSON.stringify(deliverableItem(2))}\n`);
  });

  it('list says so when no deliverable matches', async () => {
    const t = setUp({ call: { listDeliverables: { deliverables: [], total_count: 0, has_more: false } } });
    await listDeliverables.run(t.ctx, { query: { account_id: 1001, status: 'draft' }, all: false, ndjson: false });
    expect(t.stderr()).toBe('No deliverables for account 1001 with status draft.\n');
  });

  const single = {
    deliverable_id: 9,
    project_id: 2001,
    document_id: 5009,
    title: '2024 return',
    type: 'tax_return',
    status: 'completed',
    view_link: 'https://app.example/view/9',
    summary: 'Refund of $1,200.\nFiled electronically.',
    prepared_date: '2026-11-01T12:00:00Z',
    expires_at: '2026-11-18T12:00:00Z',
  };

  it('get shows the summary on several lines and opens the view link with --open', async () => {
    const t = setUp({ call: { getProjectDeliverable: single } });
    await getDeliverable.run(t.ctx, { projectId: 2001, open: true });
    expect(t.stdout()).toContain('Summary:       Refund of $1,200.\n               Filed electronically.\n');
    expect(t.opened).toEqual(['https://app.example/view/9']);
  });

  it('get refuses to open a view link that is not a web address', async () => {
    const t = setUp({ call: { getProjectDeliverable: { ...single, view_link: 'file:///etc/passwd' } } });
    await expect(getDeliverable.run(t.ctx, { projectId: 2001, open: true })).rejects.toBeInstanceOf(ProtocolError);
    expect(t.opened).toEqual([]);
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_API_KEYS } from '../../src/mock/seed';
import { makeHome, registerSecret, runCli, withoutColor, type RunCliOptions } from '../helpers/cli';
import { startServeMock, type ServedMock } from '../helpers/serveMock';

/**
 * Every command of `accounts`, `docs`, `projects`, `deliverables` and `health`, run as a user runs
 * it (the built `bin/taxprep.cjs`) against one `taxprep serve --mock` for the whole file. Tests that
 * change state use fresh emails and files, so they do not depend on each other.
 */

let mock: ServedMock;
const ESC = '\u001b';

beforeAll(async () => {
  mock = await startServeMock();
  for (const key of Object.values(mock.keys)) registerSecret(key);
});
afterAll(async () => {
  await mock?.stop();
});

function as(key: string | undefined, options: RunCliOptions = {}): RunCliOptions {
  const env: Record<string, string> = { TAXPREP_BASE_URL: mock.baseUrl, ...options.env };
  if (key !== undefined) env.TAXPREP_API_KEY = key;
  return { ...options, env };
}
const acme = (options: RunCliOptions = {}) => as(DEMO_API_KEYS.acme, options);

async function putMock(path: string, body: unknown): Promise<void> {
  const response = await fetch(`${mock.appUrl}/_mock${path}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
}

function errorBody(stderr: string): { error: { code: string; message: string; details?: Record<string, unknown> } } {
  return JSON.parse(stderr.trim().split('\n').at(-1)!);
}

let emailCounter = 0;
const freshEmail = () => `e2e.${process.pid}.${Date.now()}.${(emailCounter += 1)}@example.com`;

describe('health', () => {
  it('prints a card and exits 0 without a key', async () => {
    const result = await runCli(['health'], as(undefined));
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^Status: {3}ok\nService: {2}http:\/\/127\.0\.0\.1:\d+\/v1beta\nChecked: {2}\d{4}-\d\d-\d\dT/);
    expect(result.stderr).toBe('');
  });

  it('--json prints the service document', async () => {
    const result = await runCli(['health', '--json'], as(undefined));
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ status: 'ok', timestamp: expect.any(String) });
    expect(result.stdout.endsWith('}\n')).toBe(true);
  });

  it('colours the status and shows readable dates on a terminal', async () => {
    const result = await runCli(['health'], as(undefined, { tty: true }));
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain(`${ESC}[32mok${ESC}[39m`);
    expect(result.stdout).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d UTC \((just now|\d+ \w+ ago)\)/);
  });

  it('exits 7 with NETWORK_ERROR on stderr when nothing is listening', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const result = await runCli(['health', '--json', '--no-retry'], { env: { TAXPREP_BASE_URL: `http://127.0.0.1:${closedPort}/v1beta` } });
    expect(result.exitCode).toBe(7);
    expect(result.stdout).toBe('');
    expect(errorBody(result.stderr).error.code).toBe('NETWORK_ERROR');
  });
});

describe('accounts', () => {
  it('create prints the account with its login link and spouse, and get reads it back', async () => {
    const email = freshEmail();
    const created = await runCli(
      ['accounts', 'create', '--email', email, '--first-name', 'Jane', '--last-name', 'Doe',
        '--spouse-email', freshEmail(), '--spouse-first-name', 'John', '--spouse-last-name', 'Doe', '--json'],
      acme(),
    );
    expect(created.exitCode).toBe(0);
    const account = JSON.parse(created.stdout);
    expect(account).toMatchObject({ email, first_name: 'Jane', last_name: 'Doe', status: 'active', spouse: { first_name: 'John', status: 'invited' } });
    expect(account.login_link).toMatch(/\/auth\/partner-login\/[^/]+$/);

    const shown = await runCli(['accounts', 'get', String(account.id)], acme({ tty: true }));
    expect(shown.exitCode).toBe(0);
    expect(shown.stdout).toContain(`Account ${account.id}`);
    expect(shown.stdout).toContain(`${ESC}[32mactive${ESC}[39m`);
  });

  it('create without --json shows a card with the login link', async () => {
    const result = await runCli(['accounts', 'create', '--email', freshEmail(), '--first-name', 'Ann', '--last-name', 'Lee'], acme());
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^Account \d+\n/);
    expect(result.stdout).toMatch(/\nLogin link: {4}http:\/\/127\.0\.0\.1:\d+\/auth\/partner-login\/\S+\n/);
  });

  it('a duplicate email exits 5 with the service error body on stderr', async () => {
    const result = await runCli(
      ['accounts', 'create', '--email', 'maria.gonzalez@example.com', '--first-name', 'Maria', '--last-name', 'G', '--json'],
      acme(),
    );
    expect(result.exitCode).toBe(5);
    expect(result.stdout).toBe('');
    expect(errorBody(result.stderr).error).toMatchObject({ code: 'DUPLICATE_EMAIL', details: { email: 'maria.gonzalez@example.com', existing_account_id: 1001 } });
  });

  it('bad flags exit 2 naming the flag, before any request (even with no key)', async () => {
    const result = await runCli(['accounts', 'create', '--email', 'not-an-email', '--first-name', 'J', '--last-name', 'D'], as(undefined));
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('--email must be a valid email address');
  });

  it('an unknown account exits 4', async () => {
    const result = await runCli(['accounts', 'get', '999999', '--json'], acme());
    expect(result.exitCode).toBe(4);
    expect(errorBody(result.stderr).error.code).toBe('ACCOUNT_NOT_FOUND');
  });

  it("another partner's account exits 3 with ACCESS_DENIED", async () => {
    const result = await runCli(['accounts', 'get', '2001', '--json'], acme());
    expect(result.exitCode).toBe(3);
    expect(errorBody(result.stderr).error.code).toBe('ACCESS_DENIED');
  });

  it('an expired key exits 3', async () => {
    const result = await runCli(['accounts', 'get', '1001', '--json'], as(DEMO_API_KEYS.expired));
    expect(result.exitCode).toBe(3);
    expect(errorBody(result.stderr).error.code).toBe('EXPIRED_API_KEY');
  });

  it('a read-only key exits 3 on create, and nothing is created', async () => {
    const email = freshEmail();
    const result = await runCli(['accounts', 'create', '--email', email, '--first-name', 'R', '--last-name', 'O', '--json'], as(DEMO_API_KEYS.readOnly));
    expect(result.exitCode).toBe(3);
    expect(errorBody(result.stderr).error.code).toBe('INSUFFICIENT_PERMISSIONS');
  });

  it('no key at all exits 3 and says how to set one', async () => {
    const result = await runCli(['accounts', 'get', '1001'], as(undefined));
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toMatch(/profiles add|TAXPREP_API_KEY/);
  });

  it('a request slower than --timeout exits 7 with TIMEOUT', async () => {
    await putMock('/faults', { latency_ms: 3000 });
    try {
      const result = await runCli(['accounts', 'get', '1001', '--timeout', '1s', '--no-retry', '--json'], acme());
      expect(result.exitCode).toBe(7);
      expect(errorBody(result.stderr).error.code).toBe('TIMEOUT');
    } finally {
      await putMock('/faults', { latency_ms: 0 });
    }
  });
});

describe('docs', () => {
  const directory = mkdtempSync(join(tmpdir(), 'taxprep-e2e-docs-'));
  const w2 = join(directory, 'w2-e2e.pdf');
  const receipts = join(directory, 'receipts-e2e.csv');
  writeFileSync(w2, '%PDF-1.4 e2e\n');
  writeFileSync(receipts, 'date,amount\n2024-01-02,10\n');

  it('upload sends several files in one command and docs get reads one back', async () => {
    const uploaded = await runCli(['docs', 'upload', '1005', w2, receipts, '--tax-year', '2023', '--description', 'e2e upload', '--json'], acme());
    expect(uploaded.exitCode).toBe(0);
    const documents = JSON.parse(uploaded.stdout);
    expect(documents).toHaveLength(2);
    expect(documents.map((document: { filename: string }) => document.filename)).toEqual(['w2-e2e.pdf', 'receipts-e2e.csv']);

    const shown = await runCli(['docs', 'get', String(documents[1].id)], acme());
    expect(shown.exitCode).toBe(0);
    expect(shown.stdout).toContain('Filename:     receipts-e2e.csv\n');
    expect(shown.stdout).toContain('Type:         text/csv\n');
    expect(shown.stdout).toContain('Account:      1005\n');

    const listed = await runCli(['docs', 'list', '1005', '--tax-year', '2023'], acme());
    expect(listed.exitCode).toBe(0);
    expect(listed.stdout.trimEnd().split('\n').map((line) => line.split('\t')[1])).toEqual(expect.arrayContaining(['w2-e2e.pdf', 'receipts-e2e.csv']));
  });

  it('upload refuses a missing file with exit 2 and uploads nothing', async () => {
    const before = await runCli(['docs', 'list', '1004', '--json'], acme());
    const result = await runCli(['docs', 'upload', '1004', w2, join(directory, 'missing.pdf'), '--tax-year', '2024'], acme());
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('missing.pdf does not exist');
    const after = await runCli(['docs', 'list', '1004', '--json'], acme());
    expect(JSON.parse(after.stdout).total_count).toBe(JSON.parse(before.stdout).total_count);
  });

  it("a type the mock does not take: its 415 is reported with the types it takes and remembered; the next such file is refused before sending", async () => {
    const notes = join(directory, 'notes-e2e.rtf');
    writeFileSync(notes, '{\\rtf1 notes}');
    const home = makeHome();
    const first = await runCli(['docs', 'upload', '1005', notes, '--tax-year', '2024'], acme({ home }));
    expect(first.exitCode).toBe(5);
    expect(first.stderr).toContain('error: Documents of type application/octet-stream are not accepted.\n');
    expect(first.stderr).toContain('The service named the file types application/pdf, image/jpeg, image/png');
    const before = await runCli(['docs', 'list', '1005', '--json'], acme());
    const result = await runCli(['docs', 'upload', '1005', w2, notes, '--tax-year', '2024', '--json'], acme({ home }));
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    const error = errorBody(result.stderr).error;
    expect(error.code).toBe('USAGE_ERROR');
    expect(error.message).toMatch(/notes-e2e\.rtf is of a type \(\.rtf, sent as application\/octet-stream\) the service does not take: it takes application\/pdf, .* \(learned from the service \(HTTP 415 UNSUPPORTED_MEDIA_TYPE\) on \d{4}-\d\d-\d\d\)/);
    const after = await runCli(['docs', 'list', '1005', '--json'], acme());
    expect(JSON.parse(after.stdout).total_count).toBe(JSON.parse(before.stdout).total_count);
  });

  it('the same file again is refused, naming the stored document (exit 2); --allow-duplicate stores a second one', async () => {
    const k1 = join(directory, 'k1-e2e.pdf');
    writeFileSync(k1, '%PDF-1.4 k1\n');
    const first = await runCli(['docs', 'upload', '1005', k1, '--tax-year', '2022', '--json'], acme());
    expect(first.exitCode).toBe(0);
    const again = await runCli(['docs', 'upload', '1005', k1, '--tax-year', '2022'], acme());
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain(`k1-e2e.pdf is already on account 1005 for 2022 as document ${JSON.parse(first.stdout).id} (k1-e2e.pdf, uploaded `);
    const allowed = await runCli(['docs', 'upload', '1005', k1, '--tax-year', '2022', '--allow-duplicate', '--json'], acme());
    expect(allowed.exitCode).toBe(0);
    const listed = await runCli(['docs', 'list', '1005', '--tax-year', '2022', '--json'], acme());
    expect(JSON.parse(listed.stdout).documents.filter((document: { filename: string }) => document.filename === 'k1-e2e.pdf')).toHaveLength(2);
  });

  it('list on a terminal shows a table with a header', async () => {
    const result = await runCli(['docs', 'list', '1001', '--tax-year', '2024'], acme({ tty: true }));
    expect(result.exitCode).toBe(0);
    expect(withoutColor(result.stdout)).toMatch(/ID\s+FILENAME\s+TAX YEAR\s+DESCRIPTION\s+UPLOADED/);
    // An 80-column terminal: the dates take their short form first, the file names stay whole.
    expect(result.stdout).toMatch(/^7001 +w2-2024-northwind\.txt +2024 +.* +\d{4}-\d\d-\d\d$/m);
  });

  it('an empty list says so on stderr and exits 0', async () => {
    const result = await runCli(['docs', 'list', '1001', '--tax-year', '1999'], acme());
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('No documents for account 1001 in 1999.\n');
  });

  it('--all --json follows pages into ONE document', async () => {
    const result = await runCli(['docs', 'list', '1001', '--all', '--limit', '2', '--json'], acme());
    expect(result.exitCode).toBe(0);
    const document = JSON.parse(result.stdout);
    expect(document.has_more).toBe(false);
    expect(document.total_count).toBeGreaterThan(2);
    expect(document.documents).toHaveLength(document.total_count);
    expect(new Set(document.documents.map((item: { id: number }) => item.id)).size).toBe(document.total_count);
  });

  it('--ndjson prints one document a line', async () => {
    const result = await runCli(['docs', 'list', '1001', '--all', '--limit', '3', '--ndjson'], acme());
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines.length).toBeGreaterThan(3);
    expect(lines[0]).toEqual(expect.objectContaining({ id: expect.any(Number), filename: expect.any(String) }));
  });

  it('an unknown document exits 4', async () => {
    const result = await runCli(['docs', 'get', '999999', '--json'], acme());
    expect(result.exitCode).toBe(4);
    expect(errorBody(result.stderr).error.code).toBe('DOCUMENT_NOT_FOUND');
  });
});

describe('projects', () => {
  it('list on a terminal keeps statuses in colour and percentages whole', async () => {
    const result = await runCli(['projects', 'list', '1001'], acme({ tty: true }));
    expect(result.exitCode).toBe(0);
    // An 80-column terminal: the table fits it; the bars give way to their percentages, statuses stay whole.
    expect(result.stdout).toMatch(/ 20% /);
    expect(result.stdout).toMatch(/ 100% /);
    expect(result.stdout).toContain(`${ESC}[33mwaiting_on_client${ESC}[39m`);
  });

  it('list --json prints the service document', async () => {
    const result = await runCli(['projects', 'list', '1001', '--type', 'tax_return', '--json'], acme());
    expect(result.exitCode).toBe(0);
    const document = JSON.parse(result.stdout);
    expect(document.total_count).toBe(document.projects.length);
    expect(document.projects.every((project: { type: string }) => project.type === 'tax_return')).toBe(true);
  });

  it('an unknown --status is refused locally with the allowed values', async () => {
    const result = await runCli(['projects', 'list', '1001', '--status', 'done'], acme());
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--status must be one of: waiting_on_client, in_progress, in_review, completed');
  });

  it('status shows the outstanding items', async () => {
    const result = await runCli(['projects', 'status', '5001'], acme());
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('Outstanding:      3 items\n');
    expect(result.stdout).toContain('missing_document\thigh\tForm 1098 mortgage interest statement for 2025\t');
  });
});

describe('deliverables', () => {
  it('list --json prints the service document', async () => {
    const result = await runCli(['deliverables', 'list', '--account', '1001', '--json'], acme());
    expect(result.exitCode).toBe(0);
    const document = JSON.parse(result.stdout);
    expect(document.deliverables.length).toBeGreaterThan(0);
    expect(document.deliverables.every((item: { account_id: number }) => item.account_id === 1001)).toBe(true);
  });

  it('list on a terminal shows a table', async () => {
    const result = await runCli(['deliverables', 'list', '--type', 'tax_return'], acme({ tty: true }));
    expect(result.exitCode).toBe(0);
    expect(withoutColor(result.stdout)).toMatch(/ID\s+PROJECT\s+ACCOUNT\s+TYPE\s+STATUS\s+TITLE\s+PREPARED/);
  });

  it('get --open prints the view link when no browser can be opened', async () => {
    const result = await runCli(['deliverables', 'get', '5002', '--open'], acme({ env: { BROWSER: 'none' } }));
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^Deliverable \d+: /);
    const link = /View link:\s+(\S+)\n/.exec(result.stdout)?.[1];
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(result.stderr).toContain(link);
  });

  it('a project without a deliverable exits 4', async () => {
    const result = await runCli(['deliverables', 'get', '5001', '--json'], acme());
    expect(result.exitCode).toBe(4);
    expect(errorBody(result.stderr).error.code).toBe('DELIVERABLE_NOT_FOUND');
  });
});

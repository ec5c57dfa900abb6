import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli';
import { EXIT } from '../../src/errors';
import { CapturedStream } from '../helpers/context';
import { startMock, type RunningMock } from '../helpers/mock';

/** `--json FIELDS` (gh-style field selection), run in-process against a real mock server. */
let mock: RunningMock;
beforeAll(async () => {
  mock = await startMock();
});
afterAll(async () => {
  await mock?.close();
});

async function run(argv: string[], options: { configHome?: string; input?: string } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new CapturedStream({ isTTY: false });
  const stderr = new CapturedStream({ isTTY: false });
  const stdin = Object.assign(new PassThrough(), { isTTY: false });
  stdin.end(options.input ?? '');
  const env = { TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: mock.keys.acme, XDG_CONFIG_HOME: options.configHome ?? '/nonexistent-taxprep-config' };
  const code = await main(argv, { env, io: { stdout, stderr, stdin } });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe('--json FIELDS', () => {
  it('keeps only those fields of each list item, in the order asked, before or after the command', async () => {
    for (const argv of [['docs', 'list', '1001', '--json', 'filename,id'], ['--json', 'filename,id', 'docs', 'list', '1001']]) {
      const result = await run(argv);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      const document = JSON.parse(result.stdout) as { documents: Array<Record<string, unknown>>; total_count: number };
      expect(document.documents.length).toBeGreaterThan(0);
      for (const item of document.documents) expect(Object.keys(item)).toEqual(['filename', 'id']);
      expect(typeof document.total_count).toBe('number');
    }
  });

  it('applies to each line of --ndjson and to every page of --all', async () => {
    const ndjson = await run(['deliverables', 'list', '--all', '--ndjson', '--json', 'id,status', '--limit', '2']);
    expect(ndjson.code).toBe(0);
    const lines = ndjson.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) expect(Object.keys(line)).toEqual(['id', 'status']);
    const all = await run(['deliverables', 'list', '--all', '--json', 'id', '--limit', '2']);
    const document = JSON.parse(all.stdout) as { deliverables: unknown[]; has_more: boolean };
    expect(document.deliverables).toEqual(lines.map((line) => ({ id: line.id })));
    expect(document.has_more).toBe(false);
  });

  it('a failure under --ndjson is the JSON error document on stderr, as under --json; a usage error too', async () => {
    const missing = await run(['docs', 'list', '999999', '--all', '--ndjson']);
    expect(missing.code).toBe(EXIT.NOT_FOUND);
    expect(missing.stdout).toBe('');
    expect(JSON.parse(missing.stderr)).toMatchObject({ error: { code: 'ACCOUNT_NOT_FOUND', details: { account_id: 999999 } } });
    const usage = await run(['deliverables', 'list', '--ndjson', '--limit', '0']);
    expect(usage.code).toBe(EXIT.USAGE);
    expect(JSON.parse(usage.stderr)).toMatchObject({ error: { code: 'USAGE_ERROR' } });
  });

  it('keeps only those fields of a single document', async () => {
    const result = await run(['accounts', 'get', '1001', '--json', 'status,id']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ status: expect.any(String), id: 1001 });
  });

  it('plain --json is unchanged, and a following id or command is not taken for fields', async () => {
    const plain = await run(['accounts', 'get', '--json', '1001']);
    expect(Object.keys(JSON.parse(plain.stdout))).toEqual(expect.arrayContaining(['id', 'email', 'first_name', 'last_name', 'status']));
    const health = await run(['--json', 'health']);
    expect(health.code).toBe(0);
    expect(JSON.parse(health.stdout)).toMatchObject({ status: 'ok' });
  });

  it('an unknown field is a usage error listing the fields, and nothing is sent or printed', async () => {
    const before = mock.deps.requestLog.entries().length;
    const result = await run(['docs', 'list', '1001', '--json', 'id,size']);
    expect(result.code).toBe(EXIT.USAGE);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr)).toEqual({
      error: {
        code: 'USAGE_ERROR',
        message: '--json unknown field size; available: id, filename, tax_year, description, uploaded_at',
        details: { '--json': ['unknown field size; available: id, filename, tax_year, description, uploaded_at'] },
      },
    });
    expect(mock.deps.requestLog.entries()).toHaveLength(before);
  });

  it('a command without a document to pick from refuses fields', async () => {
    const result = await run(['whoami', '--json', 'profile']);
    expect(result.code).toBe(EXIT.USAGE);
    expect(JSON.parse(result.stderr).error.message).toBe('--json takes no fields with whoami: --json alone prints its whole output as JSON ("profile" was read as fields)');
  });

  it('a command without fields that takes a name keeps the word after --json as that name', async () => {
    const configHome = mkdtempSync(join(tmpdir(), 'taxprep-json-flags-'));
    expect((await run(['profiles', 'add', '--insecure-storage', 'acme', '--api-key-stdin', '--no-verify'], { configHome, input: `${mock.keys.acme}\n` })).code).toBe(0);
    const result = await run(['profiles', 'show', '--json', 'acme'], { configHome });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ name: 'acme' });
  });
});

describe('--jq EXPRESSION (jq itself, as WebAssembly)', () => {
  it('prints what the expression makes of the document: strings as text, the rest as JSON lines', async () => {
    const names = await run(['docs', 'list', '1001', '--tax-year', '2024', '--jq', '.documents[].filename']);
    expect(names).toMatchObject({ code: 0, stderr: '' });
    const listed = JSON.parse((await run(['docs', 'list', '1001', '--tax-year', '2024', '--json'])).stdout) as { documents: Array<{ filename: string }> };
    expect(names.stdout).toBe(listed.documents.map((document) => `${document.filename}\n`).join(''));
    expect((await run(['accounts', 'get', '1001', '--jq', '{id, status}'])).stdout).toMatch(/^\{"id":1001,"status":"[a-z_]+"\}\n$/);
    const email = (JSON.parse((await run(['accounts', 'get', '1001', '--json'])).stdout) as { email: string }).email;
    expect((await run(['api', 'GET', '/accounts/1001', '--jq', '.email'])).stdout).toBe(`${email}\n`);
  });

  it('sees the whole list with --all, and each line with --ndjson', async () => {
    const all = await run(['deliverables', 'list', '--all', '--limit', '2', '--jq', '[(.deliverables | length), .total_count, .has_more]']);
    const [count, total, hasMore] = JSON.parse(all.stdout) as [number, number, boolean];
    expect(count).toBeGreaterThan(2);
    expect([total, hasMore]).toEqual([count, false]);
    const ids = await run(['deliverables', 'list', '--all', '--ndjson', '--limit', '2', '--jq', '.id']);
    expect(ids.stdout.trim().split('\n')).toHaveLength(count);
  });

  it('applies after --json FIELDS', async () => {
    expect(JSON.parse((await run(['accounts', 'get', '1001', '--json', 'id', '--jq', '.'])).stdout)).toEqual({ id: 1001 });
  });

  it('an expression jq cannot compile is a usage error before anything is sent', async () => {
    const before = mock.deps.requestLog.entries().length;
    const result = await run(['docs', 'list', '1001', '--jq', '.documents |||']);
    expect(result.code).toBe(EXIT.USAGE);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr).error.message).toBe("--jq syntax error, unexpected '|' at <top-level>, line 1, column 13");
    expect(mock.deps.requestLog.entries()).toHaveLength(before);
  });

  it('an expression that fails on the document is a usage error naming jq\'s reason', async () => {
    const result = await run(['accounts', 'get', '1001', '--jq', '.status | keys']);
    expect(result.code).toBe(EXIT.USAGE);
    expect(JSON.parse(result.stderr).error.message).toMatch(/^--jq string \(".*"\) has no keys$/);
  });
});

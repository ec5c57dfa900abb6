import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DOCUMENT_MEDIA_TYPES, PAGE_SIZE } from '../../src/contract';
import type { DirectoryBlobStore } from '../../src/mock/blobStore';
import { startMock, type MockResponse, type RunningMock } from '../helpers/mock';

/** Demo data: account 1001 (Acme) has documents 7001-7005 and deliverable documents 7101-7102; 1005 has none; 2001 is Beacon's. */
const ACME_ACCOUNT = 1001;
const EMPTY_ACME_ACCOUNT = 1005;
const BEACON_ACCOUNT = 2001;
const BEACON_DOCUMENT = 8001;
const UPLOAD_MAX_BYTES = 64 * 1024;

interface Part {
  name: string;
  /** Present for a file part (an empty string is sent as `filename=""`). */
  filename?: string;
  contentType?: string;
  content: string | Buffer;
}

/** A multipart body written byte by byte, so tests can send what no well-behaved client would. */
function multipart(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = '----taxprep-test-boundary-7MA4YWxkTrZu0gW';
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename === undefined ? '' : `; filename="${part.filename}"`}`;
    const type = part.contentType === undefined ? '' : `Content-Type: ${part.contentType}\r\n`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`, 'utf8'));
    chunks.push(typeof part.content === 'string' ? Buffer.from(part.content, 'utf8') : part.content);
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

const pdf = (filename: string, content: string | Buffer = '%PDF-1.7 test'): Part => ({ name: 'file', filename, contentType: 'application/pdf', content });
const field = (name: string, content: string): Part => ({ name, content });

let mock: RunningMock;

/** Sends the multipart bytes as they are (`mock.request` would send a string body as UTF-8 text). */
async function upload(parts: Part[], options: { accountId?: number; key?: string } = {}): Promise<MockResponse> {
  const { body, contentType } = multipart(parts);
  const response = await fetch(`${mock.baseUrl}/accounts/${options.accountId ?? ACME_ACCOUNT}/documents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.key ?? mock.keys.acme}`, 'content-type': contentType },
    body,
  });
  const text = await response.text();
  return { status: response.status, headers: Object.fromEntries(response.headers), json: text === '' ? undefined : JSON.parse(text) };
}

/** The stored files: the mock's blob store is a directory store, which can list them. */
function blobNames(): Promise<string[]> {
  return (mock.deps.store.blobs as DirectoryBlobStore).list();
}

function documentCount(): number {
  return mock.deps.store.state.documents.length;
}

beforeAll(async () => {
  mock = await startMock({ uploadMaxBytes: UPLOAD_MAX_BYTES, rateLimits: [] });
});
afterAll(async () => {
  await mock.close();
});

describe('POST /accounts/:id/documents', () => {
  test('stores the file and answers 201 with every field of the document', async () => {
    const content = Buffer.from('%PDF-1.7\nW-2 2025 from Northwind\n');
    const response = await upload([field('tax_year', '2025'), field('description', 'W-2 from employer'), pdf('w2-2025.pdf', content)]);

    expect(response.status).toBe(201);
    expect(response.json).toEqual({
      id: expect.any(Number),
      account_id: ACME_ACCOUNT,
      filename: 'w2-2025.pdf',
      tax_year: 2025,
      description: 'W-2 from employer',
      file_size: content.length,
      file_type: 'application/pdf',
      uploaded_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const retrieved = await mock.request(`/documents/${response.json.id}`, { key: mock.keys.acme });
    expect(retrieved.status).toBe(200);
    expect(retrieved.json).toEqual(response.json);
    const stored = await fetch(`${mock.appUrl}/_mock/documents/${response.json.id}/content`);
    expect(Buffer.from(await stored.arrayBuffer())).toEqual(content);
  });

  test('accepts the text fields after the file, stores "" without a description, and keeps only the media type essence', async () => {
    const response = await upload([{ name: 'file', filename: 'notes.txt', contentType: 'Text/Plain; charset=utf-8', content: 'notes' }, field('tax_year', '2024')]);
    expect(response.status).toBe(201);
    expect(response.json).toMatchObject({ tax_year: 2024, description: '', file_type: 'text/plain', file_size: 5 });
  });

  test.each([
    ['../../etc/passwd', 'passwd'],
    ['C:\\\\Users\\\\pat\\\\y.pdf', 'y.pdf'],
    ['..', 'unnamed'],
    ['', 'unnamed'],
    ['   .hidden.pdf  ', 'hidden.pdf'],
    ['inv\u0007oice\u202e.pdf', 'invoice.pdf'],
    ['résumé 2025.pdf', 'résumé 2025.pdf'],
    [`${'a'.repeat(300)}.pdf`, `${'a'.repeat(251)}.pdf`],
  ])('stores the hostile filename %j as %j', async (sent, stored) => {
    const response = await upload([field('tax_year', '2025'), pdf(sent)]);
    expect(response.status).toBe(201);
    expect(response.json.filename).toBe(stored);
    const record = mock.deps.store.state.documents.find((document) => document.id === response.json.id);
    expect(record?.blob).toMatch(/^[0-9a-f]{32}$/);
  });

  test.each([
    ['no file part', [field('tax_year', '2025')], { file: ['is required'] }],
    ['an empty file', [field('tax_year', '2025'), pdf('empty.pdf', '')], { file: ['must not be empty'] }],
    ['no tax_year', [pdf('a.pdf')], { tax_year: ['is required'] }],
    ['a tax_year that is not a number', [field('tax_year', 'last year'), pdf('a.pdf')], { tax_year: ['must be a year from 1900 to 2100'] }],
    ['a tax_year out of range', [field('tax_year', '1899'), pdf('a.pdf')], { tax_year: ['must be a year from 1900 to 2100'] }],
    ['a fractional tax_year', [field('tax_year', '2025.5'), pdf('a.pdf')], { tax_year: ['must be a year from 1900 to 2100'] }],
    ['a description over 1000 characters', [field('tax_year', '2025'), field('description', 'x'.repeat(1001)), pdf('a.pdf')], { description: ['must be at most 1000 characters'] }],
    ['an unknown field', [field('tax_year', '2025'), field('year', '2025'), pdf('a.pdf')], { year: ['is not a field of this request'] }],
    ['a field sent twice', [field('tax_year', '2025'), field('tax_year', '2024'), pdf('a.pdf')], { tax_year: ['must be sent only once'] }],
    ['the file as a text field', [field('tax_year', '2025'), field('file', 'not a file')], { file: ['must be a file part (with a filename), not a text field', 'is required'] }],
    ['every problem at once', [field('tax_year', 'soon'), field('colour', 'blue')], { tax_year: ['must be a year from 1900 to 2100'], colour: ['is not a field of this request'], file: ['is required'] }],
  ])('%s: 400 VALIDATION_ERROR naming the field, nothing stored', async (_name, parts, details) => {
    const before = documentCount();
    const response = await upload(parts as Part[]);
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details });
    expect(documentCount()).toBe(before);
  });

  test('more than 8 text fields: 400 VALIDATION_ERROR on the form', async () => {
    const fields = Array.from({ length: 9 }, (_, index) => field(`note_${index}`, 'x'));
    const response = await upload([field('tax_year', '2025'), ...fields, pdf('a.pdf')]);
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { body: ['must have at most 8 text fields'] } });
  });

  test('a file part without a Content-Type is plain text (RFC 7578)', async () => {
    const response = await upload([field('tax_year', '2025'), { name: 'file', filename: 'notes.txt', content: 'plain' }]);
    expect(response.status).toBe(201);
    expect(response.json.file_type).toBe('text/plain');
  });

  test('two file parts: 400 VALIDATION_ERROR on file, and the first file is not kept', async () => {
    const before = documentCount();
    const response = await upload([field('tax_year', '2025'), pdf('a.pdf'), pdf('b.pdf')]);
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { file: ['must be sent only once (one file per upload)'] } });
    expect(documentCount()).toBe(before);
  });

  test('a file under another field name is refused', async () => {
    const response = await upload([field('tax_year', '2025'), { ...pdf('a.pdf'), name: 'document' }]);
    expect(response.status).toBe(400);
    expect(response.json.error.details).toEqual({ document: ['is not a field of this request (send the file as "file")'] });
  });

  test('a file over the upload limit: 413 PAYLOAD_TOO_LARGE with max_bytes, no document and no file left', async () => {
    const before = documentCount();
    const blobsBefore = await blobNames();
    const response = await upload([field('tax_year', '2025'), pdf('big.pdf', Buffer.alloc(UPLOAD_MAX_BYTES + 1, 1))]);
    expect(response.status).toBe(413);
    expect(response.json.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { max_bytes: UPLOAD_MAX_BYTES } });
    expect(documentCount()).toBe(before);
    expect(await blobNames()).toEqual(blobsBefore);
  });

  test('a file of exactly the upload limit is accepted', async () => {
    const response = await upload([field('tax_year', '2025'), pdf('limit.pdf', Buffer.alloc(UPLOAD_MAX_BYTES, 1))]);
    expect(response.status).toBe(201);
    expect(response.json.file_size).toBe(UPLOAD_MAX_BYTES);
  });

  test('a media type outside the list: 415 UNSUPPORTED_MEDIA_TYPE with provided and expected', async () => {
    const before = documentCount();
    const response = await upload([field('tax_year', '2025'), { name: 'file', filename: 'tool.exe', contentType: 'application/x-msdownload', content: 'MZ' }]);
    expect(response.status).toBe(415);
    expect(response.json.error).toMatchObject({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      details: { provided: 'application/x-msdownload', expected: [...DOCUMENT_MEDIA_TYPES] },
    });
    expect(documentCount()).toBe(before);
  });

  test('a JSON body instead of multipart: 415 expecting multipart/form-data', async () => {
    const response = await mock.request(`/accounts/${ACME_ACCOUNT}/documents`, { key: mock.keys.acme, body: { tax_year: 2025 } });
    expect(response.status).toBe(415);
    expect(response.json.error.details).toEqual({ provided: 'application/json', expected: ['multipart/form-data'] });
  });

  test('a multipart body without a boundary: 400 VALIDATION_ERROR, not a 5xx', async () => {
    const response = await mock.request(`/accounts/${ACME_ACCOUNT}/documents`, {
      key: mock.keys.acme,
      body: 'garbage',
      headers: { 'content-type': 'multipart/form-data' },
    });
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('VALIDATION_ERROR');
  });

  test("another partner's account: 403 ACCESS_DENIED and nothing stored", async () => {
    const before = documentCount();
    const blobsBefore = await blobNames();
    const response = await upload([field('tax_year', '2025'), pdf('a.pdf')], { accountId: BEACON_ACCOUNT });
    expect(response.status).toBe(403);
    expect(response.json.error).toMatchObject({ code: 'ACCESS_DENIED', details: { account_id: BEACON_ACCOUNT } });
    expect(documentCount()).toBe(before);
    expect(await blobNames()).toEqual(blobsBefore);
  });

  test('an unknown account: 404 ACCOUNT_NOT_FOUND', async () => {
    const response = await upload([field('tax_year', '2025'), pdf('a.pdf')], { accountId: 999_999 });
    expect(response.status).toBe(404);
    expect(response.json.error).toMatchObject({ code: 'ACCOUNT_NOT_FOUND', details: { account_id: 999_999 } });
  });

  test('a read-only key: 403 INSUFFICIENT_PERMISSIONS', async () => {
    const response = await upload([field('tax_year', '2025'), pdf('a.pdf')], { key: mock.keys.readOnly });
    expect(response.status).toBe(403);
    expect(response.json.error.code).toBe('INSUFFICIENT_PERMISSIONS');
  });
});

describe('GET /accounts/:id/documents', () => {
  let uploadedIds: number[];

  beforeAll(async () => {
    // Five uploads to an empty account: 2024, 2025, 2024, 2025, 2024, oldest first.
    uploadedIds = [];
    for (const year of [2024, 2025, 2024, 2025, 2024]) {
      const response = await upload([field('tax_year', String(year)), pdf(`doc-${year}.pdf`)], { accountId: EMPTY_ACME_ACCOUNT });
      expect(response.status).toBe(201);
      uploadedIds.push(response.json.id);
    }
  });

  const list = (query: string, key: string = mock.keys.acme) => mock.request(`/accounts/${EMPTY_ACME_ACCOUNT}/documents${query}`, { key });

  test('lists newest first, list items carry only their five fields', async () => {
    const response = await list('');
    expect(response.status).toBe(200);
    expect(response.json.documents.map((document: { id: number }) => document.id)).toEqual([...uploadedIds].reverse());
    expect(Object.keys(response.json.documents[0]).sort()).toEqual(['description', 'filename', 'id', 'tax_year', 'uploaded_at']);
    expect(response.json).toMatchObject({ total_count: 5, has_more: false });
  });

  test('filters by tax_year, total_count counts the matches', async () => {
    const response = await list('?tax_year=2024');
    expect(response.json.documents.map((document: { tax_year: number }) => document.tax_year)).toEqual([2024, 2024, 2024]);
    expect(response.json).toMatchObject({ total_count: 3, has_more: false });
  });

  test.each([
    ['?limit=1', 1, true],
    ['?limit=4', 4, true],
    ['?limit=5', 5, false],
    ['?limit=100', 5, false],
    ['?limit=2&offset=3', 2, false],
    ['?limit=2&offset=2', 2, true],
    ['?offset=4', 1, false],
    ['?offset=5', 0, false],
    ['?offset=500', 0, false],
  ])('%s: %i returned, has_more %s, total_count 5', async (query, returned, hasMore) => {
    const response = await list(query);
    expect(response.status).toBe(200);
    expect(response.json.documents).toHaveLength(returned);
    expect(response.json).toMatchObject({ total_count: 5, has_more: hasMore });
  });

  test('pages follow each other without overlap', async () => {
    const first = await list('?limit=2');
    const second = await list('?limit=2&offset=2');
    const third = await list('?limit=2&offset=4');
    const ids = [first, second, third].flatMap((page) => page.json.documents.map((document: { id: number }) => document.id));
    expect(ids).toEqual([...uploadedIds].reverse());
  });

  test(`the default page size is ${PAGE_SIZE.default}`, async () => {
    const response = await mock.request(`/accounts/${ACME_ACCOUNT}/documents`, { key: mock.keys.acme });
    expect(response.json.documents.length).toBeLessThanOrEqual(PAGE_SIZE.default);
    expect(response.json.total_count).toBeGreaterThan(0);
  });

  test.each([
    ['?limit=0', 'limit'],
    ['?limit=101', 'limit'],
    ['?limit=ten', 'limit'],
    ['?offset=-1', 'offset'],
    ['?tax_year=20x5', 'tax_year'],
  ])('%s: 400 INVALID_PARAMETERS naming %s', async (query, name) => {
    const response = await list(query);
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('INVALID_PARAMETERS');
    expect(Object.keys(response.json.error.details)).toEqual([name]);
  });

  test("another partner's account: 403 ACCESS_DENIED; Beacon sees only its own", async () => {
    const denied = await mock.request(`/accounts/${EMPTY_ACME_ACCOUNT}/documents`, { key: mock.keys.beacon });
    expect(denied.status).toBe(403);
    expect(denied.json.error).toMatchObject({ code: 'ACCESS_DENIED', details: { account_id: EMPTY_ACME_ACCOUNT } });
    const own = await mock.request(`/accounts/${BEACON_ACCOUNT}/documents`, { key: mock.keys.beacon });
    const ownerOf = (id: number) => mock.deps.store.state.documents.find((document) => document.id === id)?.account_id;
    expect(own.json.documents.map((document: { id: number }) => ownerOf(document.id))).toEqual(own.json.documents.map(() => BEACON_ACCOUNT));
  });
});

describe('GET /documents/:id', () => {
  test('an unknown document: 404 DOCUMENT_NOT_FOUND with document_id', async () => {
    const response = await mock.request('/documents/999999', { key: mock.keys.acme });
    expect(response.status).toBe(404);
    expect(response.json.error).toMatchObject({ code: 'DOCUMENT_NOT_FOUND', details: { document_id: 999_999 } });
  });

  test("another partner's document: 403 ACCESS_DENIED with document_id", async () => {
    const response = await mock.request(`/documents/${BEACON_DOCUMENT}`, { key: mock.keys.acme });
    expect(response.status).toBe(403);
    expect(response.json.error).toMatchObject({ code: 'ACCESS_DENIED', details: { document_id: BEACON_DOCUMENT } });
  });

  test('a malformed id: 400 INVALID_PARAMETERS', async () => {
    const response = await mock.request('/documents/abc', { key: mock.keys.acme });
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({ code: 'INVALID_PARAMETERS', details: { document_id: ['must be a positive integer'] } });
  });
});

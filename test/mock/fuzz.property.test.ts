import fc from 'fast-check';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_DETAILS, ERROR_STATUS, ErrorBody, type ErrorCode } from '../../src/contract';
import { openApiDocument } from '../../src/contract/openapi';
import { DEMO_API_KEYS } from '../../src/mock/seed';
import { createMockServer, type MockServer } from '../../src/mock/server';
import type { MockState } from '../../src/mock/state';

/**
 * Drives the running mock (real HTTP on 127.0.0.1) with generated requests from two partners'
 * keys: random JSON with prototype-named keys, wrong types, odd ids, out-of-range queries, broken
 * multipart, wrong methods and media types. Every answer must be below 500, every error in the
 * contract's shape with the status of its code, every answer to an operation of `/openapi.json`
 * with a status and code that the document lists for it, and no answer may show one partner another's ids,
 * emails or documents. The mock checks its own successful answers against the contract
 * (`validateResponses`), so an answer off the contract shows up here as a 500.
 */

const BATCHES = 500;
const BATCH_SIZE = 20;
const REQUESTS = BATCHES * BATCH_SIZE;
/** Generous, so that most requests get past the limiter; the last few hundred of each key meet it. */
const RATE_LIMIT = { limit: 2500, windowSeconds: 3600 };

type Partner = 'acme' | 'beacon';
const PARTNER_ID: Record<Partner, number> = { acme: 1, beacon: 2 };
const KEYS: Array<{ key: string | undefined; partner: Partner | undefined }> = [
  { key: DEMO_API_KEYS.acme, partner: 'acme' },
  { key: DEMO_API_KEYS.beacon, partner: 'beacon' },
  { key: DEMO_API_KEYS.readOnly, partner: 'acme' },
  { key: DEMO_API_KEYS.expired, partner: undefined },
  { key: undefined, partner: undefined },
  { key: 'tpk_notAKeyAtAll00000000000000000', partner: undefined },
];

/** Marked values each partner's data carries, so that a leak is found by looking for the mark. */
const MARK: Record<Partner, string> = { acme: 'acmesecret', beacon: 'beaconsecret' };

let server: MockServer;
let pool: Pool;

beforeAll(async () => {
  server = await createMockServer({ host: '127.0.0.1', port: 0, rateLimits: [RATE_LIMIT], validateResponses: true });
  pool = new Pool(server.appUrl, { connections: 16, pipelining: 1 });
  for (const partner of ['acme', 'beacon'] as const) {
    for (let i = 0; i < 3; i += 1) {
      const key = partner === 'acme' ? DEMO_API_KEYS.acme : DEMO_API_KEYS.beacon;
      const created = await send({ method: 'POST', path: '/v1beta/accounts', key, contentType: 'application/json', body: JSON.stringify(person(partner, `seed${i}`)) });
      expect(created.status).toBe(201);
      const form = new FormData();
      form.set('tax_year', '2024');
      form.set('description', `${MARK[partner]} notes ${i}`);
      form.set('file', new Blob([`${MARK[partner]} content ${i}`], { type: 'text/plain' }), `${MARK[partner]}-${i}.txt`);
      const upload = await fetch(`${server.baseUrl}/accounts/${JSON.parse(created.text).id}/documents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        body: form,
      });
      expect(upload.status).toBe(201);
    }
  }
});
afterAll(async () => {
  await pool.close();
  await server.close();
});

function person(partner: Partner, tag: string) {
  return { email: `${MARK[partner]}.${tag}@example.com`, first_name: `${MARK[partner]}${tag}`, last_name: 'Fuzz' };
}

interface GeneratedRequest {
  method: string;
  path: string;
  key: string | undefined;
  contentType: string | undefined;
  body: string | Buffer | undefined;
}

interface Answer {
  status: number;
  text: string;
}

async function send(request: GeneratedRequest): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (request.key !== undefined) headers.authorization = `Bearer ${request.key}`;
  if (request.contentType !== undefined) headers['content-type'] = request.contentType;
  const response = await pool.request({ method: request.method as 'GET', path: request.path, headers, body: request.body });
  return { status: response.statusCode, text: await response.body.text() };
}

// ---- generators ----

const PROTOTYPE_NAMES = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__', 'isPrototypeOf', '__defineGetter__'];
const FIELD_NAMES = [
  'email', 'first_name', 'last_name', 'spouse', 'send_invitation', 'user_email', 'expiry_hours', 'purpose', 'redirect_url',
  'send_notification', 'notification_settings', 'custom_subject', 'custom_message', 'tax_year', 'description', 'limit', 'offset',
  'status', 'account_id', 'type', 'project_type',
];

/** Ids: both partners' records, unknown ones, and spellings that must not name a record. */
const ODD_IDS = ['01001', '1001%20', '%201001', '+1001', '1e3', '-1', '0', '1.5', '0x3E9', 'abc', '%zz', '%00', '9007199254740993', '99999999999999999999', '%E2%80%AE1001', ''];
const idArb = fc.oneof(
  { arbitrary: fc.constantFrom(1001, 1002, 1003, 1005, 1006, 2001, 2002, 5001, 5002, 5003, 5101, 8101, 8102, 8201, 999_999).map(String), weight: 6 },
  { arbitrary: fc.constantFrom(...ODD_IDS), weight: 3 },
  { arbitrary: fc.integer({ min: -5, max: 10_000 }).map(String), weight: 1 },
);

const textArb = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom('A\u0000B', 'x\u202Egpj', 'tab\there', '', ' ', 'a'.repeat(60), 'acmesecret.seed0@example.com', 'beaconsecret.seed1@example.com'),
);
const scalarArb = fc.oneof(
  textArb,
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.double({ noNaN: true }),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('initial_access', 'expired_link', 'https://evil.example/x', 'https://app.example.com/welcome', 2024, 168, 0, 169),
);
const keyArb = fc.oneof({ arbitrary: fc.constantFrom(...FIELD_NAMES), weight: 5 }, { arbitrary: fc.constantFrom(...PROTOTYPE_NAMES), weight: 2 }, { arbitrary: fc.string({ maxLength: 6 }), weight: 1 });
const jsonObjectArb: fc.Arbitrary<Record<string, unknown>> = fc.letrec<{ object: Record<string, unknown> }>((tie) => ({
  object: fc.dictionary(keyArb, fc.oneof({ arbitrary: scalarArb, weight: 4 }, { arbitrary: tie('object'), weight: 1 }, { arbitrary: fc.array(scalarArb, { maxLength: 3 }), weight: 1 }), { maxKeys: 5 }),
})).object;

/** JSON text in which prototype-named keys are real keys (a JS object literal cannot hold `__proto__` as one). */
function jsonText(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => inner);
}

const validAccountArb = fc.record({
  email: fc.oneof(fc.constantFrom('acmesecret.seed0@example.com', 'beaconsecret.seed0@example.com'), fc.integer({ min: 0, max: 1e9 }).map((n) => `fuzz${n}@example.com`)),
  extra: fc.option(fc.tuple(keyArb, scalarArb), { nil: undefined }),
});

const jsonBodyArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { arbitrary: jsonObjectArb.map(jsonText), weight: 5 },
  {
    arbitrary: validAccountArb.map(({ email, extra }) => {
      const body: Record<string, unknown> = { email, first_name: 'Fuzz', last_name: 'Tester' };
      if (extra) Object.defineProperty(body, extra[0], { value: extra[1], enumerable: true });
      return jsonText(body);
    }),
    weight: 3,
  },
  { arbitrary: fc.constantFrom('{}', '{"expiry_hours":24}', '{"purpose":"initial_access","send_notification":true}'), weight: 2 },
  { arbitrary: fc.constantFrom('{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"x":1}}}', '{"a":', 'null', '[]', '"x"', '{}', '', '\u0000', '{"email":"a@b.co",}'), weight: 2 },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value)), weight: 1 },
  { arbitrary: fc.constant(undefined), weight: 1 },
);

const BOUNDARY = 'fuzzboundary';
const multipartArb = fc
  .record({
    fields: fc.array(fc.tuple(fc.oneof(fc.constantFrom('tax_year', 'description', 'file', 'extra'), fc.constantFrom(...PROTOTYPE_NAMES)), fc.oneof(textArb, fc.constantFrom('2024', '1899', '20x4'))), { maxLength: 4 }),
    file: fc.option(fc.record({ name: fc.oneof(fc.constant('file'), fc.constantFrom(...PROTOTYPE_NAMES)), type: fc.constantFrom('text/plain', 'application/pdf', 'application/x-msdownload', ''), content: fc.string({ maxLength: 40 }) }), { nil: undefined }),
    truncate: fc.boolean(),
    valid: fc.boolean(),
  })
  .map(({ fields, file, truncate, valid }) => {
    if (valid) {
      return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="tax_year"\r\n\r\n2024\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="ok.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${BOUNDARY}--\r\n`;
    }
    const parts = fields.map(([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
    if (file) parts.push(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${file.name}"; filename="f.txt"\r\nContent-Type: ${file.type}\r\n\r\n${file.content}\r\n`);
    const body = `${parts.join('')}--${BOUNDARY}--\r\n`;
    return truncate ? body.slice(0, Math.floor(body.length / 2)) : body;
  });

const queryArb = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom('limit', 'offset', 'tax_year', 'status', 'account_id', 'type', 'project_type'), fc.constantFrom(...PROTOTYPE_NAMES)),
      fc.oneof(fc.integer({ min: -10, max: 2_000_000_000 }).map(String), fc.constantFrom('', 'abc', '1e2', '0', '101', 'draft', 'in_progress', 'tax_return', '%zz', '01001'), idArb),
    ),
    { maxLength: 4 },
  )
  .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([name, value]) => `${name}=${value}`).join('&')}`));

/** Paths with the method each serves; requests mostly use that method, sometimes another. */
const ROUTES: Array<[string, string]> = [
  ['/accounts', 'POST'], ['/accounts/{id}', 'GET'], ['/accounts/{id}/login-link', 'POST'], ['/accounts/{id}/documents', 'POST'],
  ['/accounts/{id}/documents', 'GET'], ['/accounts/{id}/projects', 'GET'], ['/documents/{id}', 'GET'], ['/projects/{id}/status', 'GET'],
  ['/projects/{id}/deliverable', 'GET'], ['/deliverables', 'GET'], ['/health', 'GET'], ['/openapi.json', 'GET'], ['/nothing', 'GET'], ['/accounts/{id}/{id}', 'GET'],
];
const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain', 'application/x-www-form-urlencoded', `multipart/form-data; boundary=${BOUNDARY}`, 'multipart/form-data', undefined];

const requestArb: fc.Arbitrary<GeneratedRequest & { partner: Partner | undefined }> = fc
  .record({
    route: fc.constantFrom(...ROUTES),
    otherMethod: fc.oneof({ arbitrary: fc.constant(undefined), weight: 5 }, { arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'), weight: 1 }),
    ids: fc.tuple(idArb, idArb),
    query: queryArb,
    who: fc.oneof({ arbitrary: fc.constantFrom(0, 1), weight: 8 }, { arbitrary: fc.constantFrom(2, 3, 4, 5), weight: 1 }),
    contentType: fc.oneof({ arbitrary: fc.constant('right' as const), weight: 3 }, { arbitrary: fc.constantFrom(...CONTENT_TYPES), weight: 1 }),
    json: jsonBodyArb,
    multipart: multipartArb,
  })
  .map(({ route: [template, routeMethod], otherMethod, ids, query, who, contentType, json, multipart }) => {
    const method = otherMethod ?? routeMethod;
    const path = `/v1beta${template.replace('{id}', ids[0]).replace('{id}', ids[1])}${query}`;
    const upload = template.endsWith('/documents') && method === 'POST';
    const type = contentType === 'right' ? (upload ? `multipart/form-data; boundary=${BOUNDARY}` : 'application/json') : contentType;
    const carriesBody = method !== 'GET' && method !== 'HEAD';
    const body = !carriesBody ? undefined : type?.startsWith('multipart/') ? multipart : json;
    return { method, path, key: KEYS[who]!.key, partner: KEYS[who]!.partner, contentType: body === undefined ? undefined : type, body };
  });

// ---- checks ----

interface Tally {
  sent: number;
  byStatus: Map<number, number>;
}

/** Who owns the record a field names, from the running mock's own state. */
function ownerOf(state: MockState, kind: 'account' | 'document' | 'project' | 'deliverable', id: number): number | undefined {
  const accountOwner = (accountId: number | undefined) => state.accounts.find((account) => account.id === accountId)?.partner_id;
  switch (kind) {
    case 'account':
      return accountOwner(id);
    case 'document':
      return accountOwner(state.documents.find((document) => document.id === id)?.account_id);
    case 'project':
      return accountOwner(state.projects.find((project) => project.id === id)?.account_id);
    case 'deliverable': {
      const projectId = state.deliverables.find((deliverable) => deliverable.id === id)?.project_id;
      return accountOwner(state.projects.find((project) => project.id === projectId)?.account_id);
    }
  }
}

const KIND_OF_FIELD: Record<string, 'account' | 'document' | 'project' | 'deliverable'> = {
  account_id: 'account',
  existing_account_id: 'account',
  document_id: 'document',
  project_id: 'project',
  deliverable_id: 'deliverable',
};
const KIND_OF_LIST: Record<string, 'document' | 'project' | 'deliverable'> = { documents: 'document', projects: 'project', deliverables: 'deliverable' };
const KIND_OF_PATH: Array<[RegExp, 'account' | 'document' | 'project']> = [
  [/^\/v1beta\/accounts(\/[^/?]+)?(\?|$)/, 'account'],
  [/^\/v1beta\/accounts\/[^/]+\/documents(\?|$)|^\/v1beta\/documents\//, 'document'],
];

/** Every (kind, id) the answer names, with the kind read from the field or the list holding it. */
function namedIds(value: unknown, topKind: 'account' | 'document' | 'project' | undefined, found: Array<[string, number]> = [], listKind?: string): Array<[string, number]> {
  if (Array.isArray(value)) {
    for (const item of value) namedIds(item, undefined, found, listKind);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (typeof inner === 'number' && KIND_OF_FIELD[key]) found.push([KIND_OF_FIELD[key]!, inner]);
      else if (typeof inner === 'number' && key === 'id' && (listKind ?? topKind)) found.push([(listKind ?? topKind)!, inner]);
      else if (KIND_OF_LIST[key]) namedIds(inner, undefined, found, KIND_OF_LIST[key]);
      else if (key !== 'spouse' && typeof inner === 'object') namedIds(inner, undefined, found);
    }
  }
  return found;
}

interface DocumentedResponses {
  [status: string]: { 'x-error-codes'?: string[] };
}

/** The operations of `/openapi.json`, each with a pattern for its paths: what the document promises. */
const DOCUMENTED: Array<{ method: string; pattern: RegExp; responses: DocumentedResponses }> = Object.entries(
  openApiDocument({ baseUrl: 'http://127.0.0.1/v1beta' }).paths as Record<string, Record<string, { responses: DocumentedResponses }>>,
).flatMap(([path, operations]) =>
  Object.entries(operations).map(([method, operation]) => ({
    method: method.toUpperCase(),
    pattern: new RegExp(`^/v1beta${path.replace(/\{[a-z_]+\}/g, '[^/?]+')}(\\?|$)`),
    responses: operation.responses,
  })),
);

/** An answer to a documented operation (HEAD answers as GET) must have its status, and its error code, listed there. */
function checkDocumented(request: GeneratedRequest, status: number, code: string | undefined, where: string): void {
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  const operation = DOCUMENTED.find((candidate) => candidate.method === method && candidate.pattern.test(request.path));
  if (operation === undefined) return;
  const documented = operation.responses[String(status)];
  expect(documented, `${where}: status ${status} is not in /openapi.json`).toBeDefined();
  if (code !== undefined) expect(documented!['x-error-codes'], `${where}: ${code} is not in /openapi.json`).toContain(code);
}

function check(request: GeneratedRequest & { partner: Partner | undefined }, answer: Answer, tally: Tally): void {
  tally.sent += 1;
  tally.byStatus.set(answer.status, (tally.byStatus.get(answer.status) ?? 0) + 1);
  const where = `${request.method} ${request.path} (${request.contentType ?? 'no content type'}) -> ${answer.status} ${answer.text.slice(0, 300)}`;
  expect(answer.status, where).toBeLessThan(500);
  if (request.method === 'HEAD') {
    expect(answer.text, where).toBe('');
    checkDocumented(request, answer.status, undefined, where);
    return;
  }
  const body: unknown = JSON.parse(answer.text);
  checkDocumented(request, answer.status, answer.status >= 400 ? (body as { error?: { code?: string } }).error?.code : undefined, where);
  if (answer.status >= 400) {
    const parsed = ErrorBody.safeParse(body);
    expect(parsed.success, where).toBe(true);
    const { code, details } = parsed.data!.error;
    expect(ERROR_STATUS[code as ErrorCode], where).toBe(answer.status);
    const detailSchema = (ERROR_DETAILS as Partial<Record<string, { safeParse(input: unknown): { success: boolean } }>>)[code];
    if (details !== undefined && detailSchema) expect(detailSchema.safeParse(details).success, where).toBe(true);
    if (answer.status === 429) expect(details, where).toMatchObject({ limit: RATE_LIMIT.limit, window_seconds: RATE_LIMIT.windowSeconds });
  }
  if (request.partner === undefined || request.key === DEMO_API_KEYS.readOnly) return;

  const other: Partner = request.partner === 'acme' ? 'beacon' : 'acme';
  const sent = `${request.path} ${request.body?.toString() ?? ''}`;
  for (const token of answer.text.match(new RegExp(`${MARK[other]}[\\w.@-]*`, 'g')) ?? []) {
    expect(sent.includes(token), `${where}: shows ${other}'s ${token}`).toBe(true);
  }
  const topKind = KIND_OF_PATH.find(([pattern]) => pattern.test(request.path))?.[1];
  for (const [kind, id] of namedIds(body, answer.status < 300 ? topKind : undefined)) {
    const owner = ownerOf(server.deps.store.state, kind as 'account', id);
    if (owner === undefined || owner === PARTNER_ID[request.partner]) continue;
    // An id the caller sent itself may be echoed (ACCESS_DENIED names it): that tells it nothing new.
    expect(sent.includes(String(id)), `${where}: names ${other}'s ${kind} ${id}`).toBe(true);
  }
}

describe(`the running mock under ${REQUESTS} generated requests`, () => {
  it('never answers 5xx, answers every error in the contract shape, and never shows one partner the other\'s data', async () => {
    const tally: Tally = { sent: 0, byStatus: new Map() };
    await fc.assert(
      fc.asyncProperty(fc.array(requestArb, { minLength: BATCH_SIZE, maxLength: BATCH_SIZE }), async (batch) => {
        const answers = await Promise.all(batch.map((request) => send(request)));
        batch.forEach((request, index) => check(request, answers[index]!, tally));
      }),
      { numRuns: BATCHES, endOnFailure: true },
    );
    expect(tally.sent).toBe(REQUESTS);
    console.log(`fuzz: ${tally.sent} requests; ${[...tally.byStatus].sort(([a], [b]) => a - b).map(([status, count]) => `${status}: ${count}`).join(', ')}`);
    // The generators reach every class of answer, successes and refusals alike.
    for (const status of [200, 201, 400, 401, 403, 404, 405, 409, 415, 429]) expect(tally.byStatus.get(status) ?? 0, `answers with ${status}`).toBeGreaterThan(0);
    // About 4 s alone; 13-18 s on the shared 2-core machine under a full suite's load, past the default 20 s at times.
  }, 60_000);
});

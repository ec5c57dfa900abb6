import Ajv2020 from 'ajv/dist/2020';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, startMock, type MockResponse, type RunningMock } from '../helpers/mock';

/**
 * The published schema is the mock's rules: for every field of a JSON body, path and query of
 * `/openapi.json`, values at and beyond the schema's own bounds (min-1, min, max, max+1, the wrong
 * type, pattern misses) are judged by the schema and sent to the real mock, which must accept
 * exactly what the schema allows and refuse the rest with 400 naming the field. Nothing here knows
 * a field's rule: each value's fate comes from the document.
 */

type JsonSchema = Record<string, any>;
interface Operation {
  parameters?: Array<{ name: string; in: 'path' | 'query'; schema: JsonSchema }>;
  requestBody?: { required: boolean; content: Record<string, { schema: JsonSchema }> };
}

let mock: RunningMock;
let document: { paths: Record<string, Record<string, Operation>> };
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
let emailCounter = 0;

beforeAll(async () => {
  mock = await startMock({ rateLimits: [] });
  document = (await send(`${mock.baseUrl}/openapi.json`)).json;
});
afterAll(() => mock.close());

/** Text that no pattern of the service refuses, `length` code points long. */
const plain = (length: number) => 'a'.repeat(length);
/** A fresh address of exactly `length` characters (at least 14), so a create is never a duplicate. */
function uniqueEmail(length = 24): string {
  emailCounter += 1;
  const domain = `@example.com`;
  const stem = `b${emailCounter}x`;
  return stem + 'c'.repeat(Math.max(0, length - stem.length - domain.length)) + domain;
}

/** Values probing a string rule: its bounds, and the characters and shapes the service's patterns are about. */
function stringProbes(schema: JsonSchema): unknown[] {
  const probes: unknown[] = [42, null, '', ' ', '\u00A0\t', 'a\u0000b', 'a\tb', 'a\nb', 'a\r\nb', 'a\u007Fb', 'a\u0085b', 'a\u202Eb', 'a\u2066b', 'Zoë', 'x\uFEFF'];
  const min = schema.minLength as number | undefined;
  const max = schema.maxLength as number | undefined;
  if (min !== undefined && min > 0) probes.push(plain(min - 1), plain(min));
  if (max !== undefined) probes.push(plain(max), plain(max + 1));
  return probes;
}

function emailProbes(): unknown[] {
  return [
    uniqueEmail(),
    `.${uniqueEmail()}`,
    uniqueEmail().replace('@', '.@'),
    uniqueEmail().replace('x', 'x..y'),
    uniqueEmail().replace('@example.com', '@example'),
    uniqueEmail().replace('@', ''),
    uniqueEmail().replace('@', ' @'),
    uniqueEmail(254),
    uniqueEmail(255),
    42,
    '',
  ];
}

function integerProbes(schema: JsonSchema): unknown[] {
  const { minimum: min, maximum: max } = schema as { minimum: number; maximum: number };
  return [min - 1, min, max, max + 1, min + 0.5, String(min), true, null];
}

function probesOf(schema: JsonSchema): unknown[] {
  if (schema.type === 'integer') return integerProbes(schema);
  if (schema.type === 'boolean') return [true, false, 'true', 0];
  if (schema.enum) return [...schema.enum, `${schema.enum[0]}x`, '', 1];
  if (schema.type === 'string' && typeof schema.pattern === 'string' && schema.pattern.includes('@')) return emailProbes();
  if (schema.type === 'string' && schema.format === 'uri') return ['https://acme-tax.example/welcome', 'http://acme-tax.example/welcome', 'acme-tax.example', 42];
  if (schema.type === 'string') return stringProbes(schema);
  return [];
}

/** Each leaf field of a body schema with its dotted path. */
function leaves(schema: JsonSchema, prefix = ''): Array<{ path: string; schema: JsonSchema }> {
  return Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>).flatMap(([name, field]) =>
    field.type === 'object' ? leaves(field, `${prefix}${name}.`) : [{ path: `${prefix}${name}`, schema: field }],
  );
}

function withField(body: Record<string, any>, path: string, value: unknown): Record<string, any> {
  const copy = structuredClone(body);
  const names = path.split('.');
  let target = copy;
  for (const name of names.slice(0, -1)) target = target[name] ??= {};
  target[names.at(-1)!] = value;
  return copy;
}

/** The mock's answer is the schema's verdict: 2xx when allowed, else 400 naming the field (in details or, for a code of its own, in the message). */
function expectAgreement(allowed: boolean, response: MockResponse, field: string, value: unknown): void {
  const what = `${field} = ${JSON.stringify(value)?.slice(0, 40)}: ${JSON.stringify(response.json?.error ?? response.status)}`;
  if (allowed) {
    // 403, 404 and 409 are answers about a record (an unknown user, a taken email), not about the rule.
    expect([200, 201, 403, 404, 409], what).toContain(response.status);
    return;
  }
  expect(response.status, what).toBe(400);
  const error = response.json.error as { code: string; message: string; details?: Record<string, unknown> };
  if (error.code === 'VALIDATION_ERROR' || error.code === 'INVALID_PARAMETERS') expect(Object.keys(error.details ?? {}), what).toContain(field);
  else expect(error.message, what).toContain(field.split('.').at(-1));
}

const operation = (path: string, method: string) => document.paths[path]![method]!;

describe('/openapi.json is the mock\'s rules: values at and past each bound', () => {
  const cases: Array<[string, string, string, Record<string, any>]> = [
    ['POST /accounts', '/accounts', 'post', { first_name: 'Ada', last_name: 'Byron' }],
    ['POST /accounts with a spouse', '/accounts', 'post', { first_name: 'Ada', last_name: 'Byron', spouse: { first_name: 'Bo', last_name: 'Byron', send_invitation: false } }],
    ['POST /accounts/{account_id}/login-link', '/accounts/{account_id}/login-link', 'post', { send_notification: false }],
  ];

  it.each(cases)('%s: every field of the JSON body', async (_, path, method, base) => {
    const schema = operation(path, method).requestBody!.content['application/json']!.schema;
    const validate = ajv.compile(schema);
    const fresh = () => (path === '/accounts' ? withField(base.spouse ? withField(base, 'spouse.email', uniqueEmail()) : base, 'email', uniqueEmail()) : base);
    const verdicts = new Set<boolean>();
    for (const leaf of leaves(schema)) {
      if (!base.spouse && leaf.path.startsWith('spouse.')) continue;
      for (const value of probesOf(leaf.schema)) {
        const body = withField(fresh(), leaf.path, value);
        const allowed = validate(body);
        verdicts.add(allowed);
        const url = path.replace('{account_id}', '1001');
        expectAgreement(allowed, await mock.request(url, { key: mock.keys.acme, body }), leaf.path, value);
      }
    }
    // Both kinds of value were tried: a probe list that the schema always allows (or refuses) proves nothing.
    expect([...verdicts].sort()).toEqual([false, true]);
  });

  it('a required body is refused when absent, an optional one taken', async () => {
    for (const [path, method] of [['/accounts', 'post'], ['/accounts/{account_id}/login-link', 'post']] as const) {
      const required = operation(path, method).requestBody!.required;
      const response = await mock.request(path.replace('{account_id}', '1001'), { key: mock.keys.acme, method: 'POST' });
      expect(response.status, path).toBe(required ? 400 : 201);
    }
    expect(operation('/accounts', 'post').requestBody!.required).toBe(true);
  });

  it('every integer of a path or a query', async () => {
    let tried = 0;
    for (const [path, methods] of Object.entries(document.paths)) {
      const get = methods.get;
      if (!get?.parameters) continue;
      for (const parameter of get.parameters.filter((candidate) => candidate.schema.type === 'integer')) {
        for (const value of integerProbes(parameter.schema).filter((probe) => typeof probe === 'number')) {
          const params = new URLSearchParams();
          let url = path;
          if (parameter.in === 'path') url = url.replace(`{${parameter.name}}`, String(value));
          else params.set(parameter.name, String(value));
          // Other path parameters name a record of the demo data's first partner.
          url = url.replace('{account_id}', '1001').replace('{document_id}', '7001').replace('{project_id}', '5001');
          const response = await mock.request(`${url}${params.size > 0 ? `?${params}` : ''}`, { key: mock.keys.acme });
          expectAgreement(ajv.validate(parameter.schema, value), response, parameter.name, value);
          tried += 1;
        }
      }
    }
    expect(tried).toBeGreaterThan(20);
  });
});

import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpoints, ERROR_STATUS, type EndpointName } from '../../src/contract';
import { send, startMock, type RunningMock } from '../helpers/mock';

interface Operation {
  operationId: string;
  security: unknown[];
  parameters?: Array<{ name: string; in: string; required: boolean; schema: Record<string, unknown> }>;
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, { 'x-error-codes'?: string[]; content: Record<string, unknown> }>;
}
interface Document {
  openapi: string;
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
}

let mock: RunningMock;
let document: Document;
beforeAll(async () => {
  mock = await startMock({ rateLimits: [{ limit: 2, windowSeconds: 60 }] });
  const response = await send(`${mock.baseUrl}/openapi.json`);
  expect(response.status).toBe(200);
  document = response.json as Document;
});
afterAll(() => mock.close());

const operationOf = (name: EndpointName): Operation => {
  const endpoint = endpoints[name];
  return document.paths[endpoint.path.replace(/:([a-z_]+)/g, '{$1}')]![endpoint.method.toLowerCase()]!;
};
const codesOf = (operation: Operation, status: number) => operation.responses[String(status)]?.['x-error-codes'] ?? [];

describe('GET {base_url}/openapi.json', () => {
  it("states the mock's own upload rules, which the contract does not show: its size limit and the media types it takes", () => {
    const multipart = operationOf('uploadDocument').requestBody!.content['multipart/form-data'] as {
      schema: { properties: { file: Record<string, unknown> } };
      encoding: { file: { contentType: string } };
    };
    expect(multipart.schema.properties.file['x-max-bytes']).toBe(mock.deps.settings.uploadMaxBytes);
    expect(multipart.encoding.file.contentType.split(', ')).toContain('application/pdf');
  });

  it('is a valid OpenAPI 3.1 document describing this server', async () => {
    const result = await new Validator().validate(document as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers).toEqual([{ url: mock.baseUrl }]);
  });

  it('needs no key and is never rate-limited', async () => {
    const statuses = new Set<number>();
    for (let i = 0; i < 4; i += 1) {
      const response = await send(`${mock.baseUrl}/openapi.json`, { key: mock.keys.acme });
      statuses.add(response.status);
      expect(response.headers['x-ratelimit-limit']).toBeUndefined();
    }
    expect([...statuses]).toEqual([200]);
  });

  it.each(Object.keys(endpoints) as EndpointName[])('holds %s with its method, parameters, body, success and errors', (name) => {
    const endpoint = endpoints[name] as (typeof endpoints)[EndpointName] & { params?: unknown; query?: unknown; body?: unknown; multipart?: true; permission?: string };
    const operation = operationOf(name);
    expect(operation.operationId).toBe(name);

    const shape = (schema: unknown) => Object.keys((schema as { shape?: object } | undefined)?.shape ?? {});
    const parameters = operation.parameters ?? [];
    expect(parameters.filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name)).toEqual(shape(endpoint.params));
    expect(parameters.filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name)).toEqual(shape(endpoint.query));
    for (const parameter of parameters.filter((candidate) => candidate.in === 'path')) {
      expect(parameter).toMatchObject({ required: true, schema: { type: 'integer', minimum: 1 } });
    }

    const bodyType = endpoint.body === undefined ? undefined : endpoint.multipart ? 'multipart/form-data' : 'application/json';
    expect(operation.requestBody && Object.keys(operation.requestBody.content)).toEqual(bodyType && [bodyType]);
    expect(Object.keys(operation.responses[String(endpoint.successStatus)]!.content)).toEqual(['application/json']);

    expect(operation.security).toEqual(endpoint.permission === undefined ? [] : [{ apiKey: [] }]);
    const statuses = Object.keys(operation.responses).map(Number);
    for (const status of statuses.filter((candidate) => candidate >= 400)) {
      for (const code of codesOf(operation, status)) expect([code, ERROR_STATUS[code as keyof typeof ERROR_STATUS]]).toEqual([code, status]);
    }
    if (endpoint.permission !== undefined) {
      expect(codesOf(operation, 401)).toEqual(['INVALID_API_KEY', 'EXPIRED_API_KEY']);
      expect(codesOf(operation, 429)).toEqual(['RATE_LIMIT_EXCEEDED']);
    } else {
      expect(statuses).not.toContain(401);
    }
  });

  it("lists each operation's own codes from the contract", () => {
    expect(codesOf(operationOf('getAccount'), 404)).toEqual(['ACCOUNT_NOT_FOUND']);
    expect(codesOf(operationOf('getAccount'), 403)).toEqual(['INSUFFICIENT_PERMISSIONS', 'ACCESS_DENIED']);
    expect(codesOf(operationOf('getAccount'), 400)).toEqual(['INVALID_PARAMETERS']);
    expect(codesOf(operationOf('createAccount'), 400)).toEqual(['VALIDATION_ERROR', 'INVALID_JSON']);
    expect(codesOf(operationOf('createAccount'), 409)).toEqual(['DUPLICATE_EMAIL']);
    expect(codesOf(operationOf('createLoginLink'), 404)).toEqual(['ACCOUNT_NOT_FOUND', 'USER_NOT_FOUND']);
    expect(codesOf(operationOf('createLoginLink'), 400)).toEqual(expect.arrayContaining(['INVALID_EXPIRY', 'INVALID_REDIRECT_URL']));
    expect(codesOf(operationOf('createLoginLink'), 403)).toContain('ACCOUNT_SUSPENDED');
    expect(codesOf(operationOf('getProjectDeliverable'), 404)).toEqual(['PROJECT_NOT_FOUND', 'DELIVERABLE_NOT_FOUND']);
    expect(codesOf(operationOf('uploadDocument'), 413)).toEqual(['PAYLOAD_TOO_LARGE']);
    expect(codesOf(operationOf('uploadDocument'), 415)).toEqual(['UNSUPPORTED_MEDIA_TYPE']);
  });

  it('gives the rules of the fields: ranges, enums and lengths', () => {
    const limit = operationOf('listDocuments').parameters!.find((parameter) => parameter.name === 'limit')!;
    expect(limit).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100 } });
    const body = (operationOf('createAccount').requestBody!.content['application/json'] as { schema: { properties: Record<string, unknown>; required: string[] } }).schema;
    expect(body.required).toEqual(['email', 'first_name', 'last_name']);
    expect(body.properties.first_name).toMatchObject({ type: 'string', maxLength: 50 });
    const upload = (operationOf('uploadDocument').requestBody!.content['multipart/form-data'] as { schema: { required: string[] } }).schema;
    expect(upload.required).toEqual(['tax_year', 'file']);
  });
});

import * as z from 'zod';
import { BASE_PATH, endpoints, type Endpoint, type EndpointName } from './endpoints';
import { ERROR_DETAILS, ERROR_STATUS, ErrorBody, type ErrorCode } from './errors';
import { DOCUMENT_MEDIA_TYPES } from './uploads';

/**
 * The OpenAPI 3.1 document of the service, generated from the contract module (the endpoint table
 * and its zod schemas), so that partners' own tools read the same single source of truth as the
 * CLI and the mock. The mock serves it at `{base_url}/openapi.json`; `taxprep serve --openapi`
 * prints it. Loaded only by those two: it is no part of any other command's start-up.
 */

type JsonSchema = Record<string, unknown>;
type Operation = Record<string, unknown>;

/** Codes an operation answers beyond those that follow from its shape (`errorCodesOf`), as `partner-api.md` lists them. */
const OPERATION_ERRORS: Partial<Record<EndpointName, ErrorCode[]>> = {
  createAccount: ['DUPLICATE_EMAIL'],
  createLoginLink: ['USER_NOT_FOUND', 'INVALID_EXPIRY', 'INVALID_REDIRECT_URL', 'ACCOUNT_SUSPENDED'],
  getProjectDeliverable: ['DELIVERABLE_NOT_FOUND'],
};

/** The not-found code of each path parameter, answered when the id names no record. */
const NOT_FOUND_OF_PARAMETER: Record<string, ErrorCode> = {
  account_id: 'ACCOUNT_NOT_FOUND',
  document_id: 'DOCUMENT_NOT_FOUND',
  project_id: 'PROJECT_NOT_FOUND',
};

const ERROR_RESPONSE_SCHEMA = { $ref: '#/components/schemas/Error' };

/** Every error code an operation may answer, in the order the mock checks them (docs/contract-notes.md). */
export function errorCodesOf(name: EndpointName, endpoint: Endpoint): ErrorCode[] {
  const codes: ErrorCode[] = ['SERVICE_UNAVAILABLE'];
  if (endpoint.permission !== undefined) codes.push('INVALID_API_KEY', 'EXPIRED_API_KEY', 'INSUFFICIENT_PERMISSIONS', 'RATE_LIMIT_EXCEEDED');
  if (endpoint.body !== undefined) codes.push('UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE', 'VALIDATION_ERROR');
  if (endpoint.body !== undefined && !endpoint.multipart) codes.push('INVALID_JSON');
  if (endpoint.params !== undefined || endpoint.query !== undefined) codes.push('INVALID_PARAMETERS');
  for (const parameter of shapeKeys(endpoint.params)) codes.push('ACCESS_DENIED', NOT_FOUND_OF_PARAMETER[parameter]!);
  // A filter naming a record (`GET /deliverables?account_id=`) is refused as a path naming it is.
  for (const parameter of shapeKeys(endpoint.query)) {
    if (Object.hasOwn(NOT_FOUND_OF_PARAMETER, parameter)) codes.push('ACCESS_DENIED', NOT_FOUND_OF_PARAMETER[parameter]!);
  }
  // A write is refused when the service cannot store it (the mock: a full disk under --data-dir).
  if (endpoint.method === 'POST') codes.push('INSUFFICIENT_STORAGE');
  codes.push(...(OPERATION_ERRORS[name] ?? []));
  return [...new Set(codes)];
}

export interface OpenApiOptions {
  /** `{base_url}` of the server the document describes, `/v1beta` included. */
  baseUrl: string;
  /** The largest upload the server takes, when it says (the mock's `--max-upload-size`; the contract does not show one). */
  uploadMaxBytes?: number;
}

export function openApiDocument(options: OpenApiOptions): Record<string, unknown> {
  const paths: Record<string, Record<string, Operation>> = {};
  for (const [name, endpoint] of Object.entries(endpoints) as Array<[EndpointName, Endpoint]>) {
    const path = endpoint.path.replace(/:([a-z_]+)/g, '{$1}');
    (paths[path] ??= {})[endpoint.method.toLowerCase()] = operation(name, endpoint, options);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Partner Tax Preparation Service API',
      version: BASE_PATH.slice(1),
      description:
        'Generated from the contract module of taxprep (src/contract). Every error answers `{"error":{"code","message","details"?}}`; ' +
        'each response lists its codes. Rate-limited operations send X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset.',
    },
    servers: [{ url: options.baseUrl }],
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'A partner API key: `Authorization: Bearer tpk_...`.' } },
      schemas: { Error: jsonSchema(ErrorBody, 'output'), ...errorDetailSchemas() },
    },
  };
}

function operation(name: EndpointName, endpoint: Endpoint, options: OpenApiOptions): Operation {
  const parameters = [...parametersOf(endpoint.params, 'path'), ...parametersOf(endpoint.mockQuery ?? endpoint.query, 'query')];
  return {
    operationId: name,
    ...(endpoint.permission === undefined ? { security: [] } : { security: [{ apiKey: [] }], 'x-permission': endpoint.permission }),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(endpoint.body === undefined ? {} : { requestBody: requestBodyOf(endpoint, options) }),
    responses: {
      [String(endpoint.successStatus)]: {
        description: endpoint.successStatus === 201 ? 'Created' : 'OK',
        content: { 'application/json': { schema: jsonSchema(endpoint.response, 'output') } },
      },
      ...errorResponses(errorCodesOf(name, endpoint)),
    },
  };
}

function parametersOf(schema: z.ZodType | undefined, location: 'path' | 'query'): JsonSchema[] {
  if (!(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, z.ZodType>).map(([name, field]) => ({
    name,
    in: location,
    required: location === 'path' || !field.safeParse(undefined).success,
    schema: jsonSchema(field, 'input'),
  }));
}

/**
 * The file part states this server's own upload rules, which the contract leaves "not shown": the
 * media types it takes (`encoding.file.contentType`) and, when known, its size limit (`x-max-bytes`).
 */
function requestBodyOf(endpoint: Endpoint, options: OpenApiOptions): JsonSchema {
  const fields = jsonSchema(endpoint.mockBody ?? endpoint.body!, 'input');
  // Required unless an absent body (read as `{}`) is a valid one, as for the login link.
  if (!endpoint.multipart) return { required: !endpoint.body!.safeParse({}).success, content: { 'application/json': { schema: fields } } };
  const file = {
    type: 'string',
    contentMediaType: 'application/octet-stream',
    description: 'A file part with a filename (`Content-Disposition: form-data; name="file"; filename="..."`), which the document keeps.',
    ...(options.uploadMaxBytes === undefined ? {} : { 'x-max-bytes': options.uploadMaxBytes }),
  };
  const properties = { ...(fields.properties as JsonSchema), file };
  return {
    required: true,
    content: {
      'multipart/form-data': {
        schema: { ...fields, properties, required: [...((fields.required as string[] | undefined) ?? []), 'file'] },
        encoding: { file: { contentType: DOCUMENT_MEDIA_TYPES.join(', ') } },
      },
    },
  };
}

function errorResponses(codes: ErrorCode[]): Record<string, JsonSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  return Object.fromEntries(
    [...byStatus].sort(([a], [b]) => a - b).map(([status, statusCodes]) => [
      String(status),
      {
        description: statusCodes.join(', '),
        content: { 'application/json': { schema: ERROR_RESPONSE_SCHEMA } },
        'x-error-codes': statusCodes,
      },
    ]),
  );
}

/** `error.details` of each code that has details, as `ErrorDetails_<CODE>`. */
function errorDetailSchemas(): Record<string, JsonSchema> {
  return Object.fromEntries(Object.entries(ERROR_DETAILS).map(([code, schema]) => [`ErrorDetails_${code}`, jsonSchema(schema as z.ZodType, 'output')]));
}

function shapeKeys(schema: z.ZodType | undefined): string[] {
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
}

/**
 * A schema as OpenAPI 3.1 takes it (JSON Schema 2020-12, without `$schema`). A rule that takes a
 * number or its digits (`integer`, `pathId`) carries `type: integer` as metadata: the JSON number
 * is what clients send, so the alternatives zod sees are dropped.
 */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  // The schema's own method, not `z.toJSONSchema`: the standalone function pulls a processor for every
  // kind of schema into the zod chunk that every command loads.
  const result = schema.toJSONSchema({
    io,
    target: 'draft-2020-12',
    unrepresentable: 'any',
    override: ({ jsonSchema: node }) => {
      if (node.type === 'integer') delete node.anyOf;
    },
  }) as JsonSchema;
  delete result.$schema;
  return result;
}

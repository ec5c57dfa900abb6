import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import * as z from 'zod';
import { BASE_PATH, CANONICAL_ID, endpoints, pathId, type Endpoint, type EndpointName } from '../contract';
import { authenticate, identifyCaller, type Authenticated } from './auth';
import type { MockDeps } from './deps';
import { MockError, parseOrThrow } from './errors';
import { applyFaults, hasFaults, type RandomSource } from './faults';
import type { Handlers } from './handler';
import type { RateLimiter } from './rateLimit';
import { logAnswer } from './requestLog';

declare module 'fastify' {
  interface FastifyRequest {
    /** The partner and key behind the request, once authenticated; spread into the handler's input and logged. */
    mockAuth: Authenticated | null;
  }
}

export interface RouterOptions {
  limiter: RateLimiter;
  random: RandomSource;
  /** Parse every handler result with the endpoint's response schema (tests); a mismatch is a 500. */
  validateResponses: boolean;
}

type AnyHandler = (input: Record<string, unknown>, deps: MockDeps) => unknown;

/**
 * Registers every operation of the contract under `/v1beta`. Per request: faults, then the key
 * (endpoints with a permission), then the rate limit, all before the body is read, so a caller
 * without a valid key learns nothing from how its body was judged; then the media type, path and
 * query (`INVALID_PARAMETERS`), the JSON body (`VALIDATION_ERROR`), and finally the handler.
 *
 * Every request of the service runs through here, so the common case is kept cheap: an operation
 * without a body (GET) does all of it in its handler, synchronously unless a fault or the handler
 * itself needs to wait; only operations with a body use an `onRequest` hook, to refuse the caller
 * before the body is read.
 */
export function registerContractRoutes(app: FastifyInstance, deps: MockDeps, handlers: Handlers, options: RouterOptions): void {
  app.decorateRequest('mockAuth', null);

  for (const [name, endpoint] of Object.entries(endpoints) as Array<[EndpointName, Endpoint]>) {
    const route = contractRoute(name, endpoint, handlers[name] as unknown as AnyHandler, deps, options);
    if (!endpoint.multipart) {
      app.route(route);
      continue;
    }
    // The multipart parser, and the request fields it adds, only where files are uploaded: every
    // other request of the service is built faster without them.
    void app.register(async (uploads) => {
      await uploads.register(multipart, { limits: { fileSize: deps.settings.uploadMaxBytes } });
      uploads.route(route);
    });
  }
}

function contractRoute(name: EndpointName, endpoint: Endpoint, handler: AnyHandler, deps: MockDeps, options: RouterOptions): RouteOptions {
  const parseParams = paramsParser(endpoint.params);
  const send = (request: FastifyRequest, reply: FastifyReply, result: unknown) => {
    if (options.validateResponses) checkResponse(name, endpoint, result);
    logAnswer(deps, request, reply, endpoint.successStatus);
    reply.code(endpoint.successStatus).send(result);
  };
  const answer = (request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined => {
    const result = handler(
      {
        params: parseParams(request.params),
        query: endpoint.query ? parseOrThrow(endpoint.mockQuery ?? endpoint.query, request.query, 'INVALID_PARAMETERS') : undefined,
        // An absent body is an empty object: every field of the login-link request is optional.
        body: endpoint.body && !endpoint.multipart ? parseOrThrow(endpoint.mockBody ?? endpoint.body, request.body === undefined ? {} : request.body, 'VALIDATION_ERROR') : undefined,
        request,
        reply,
        ...request.mockAuth,
      },
      deps,
    );
    if (result instanceof Promise) return result.then((value) => send(request, reply, value));
    send(request, reply, result);
    return undefined;
  };
  const admit = (request: FastifyRequest, reply: FastifyReply) => admitCaller(request, reply, endpoint, deps, options.limiter);
  const faults = (request: FastifyRequest, reply: FastifyReply) =>
    applyFaults(deps.settings.faults, options.random, request, reply).then((proceed) => {
      if (!proceed) logAnswer(deps, request, reply, null);
      return proceed;
    });
  const url = BASE_PATH + endpoint.path;

  if (endpoint.method === 'GET') {
    return {
      method: endpoint.method,
      url,
      handler(request, reply) {
        if (hasFaults(deps.settings.faults)) {
          return faults(request, reply).then((proceed) => {
            if (!proceed) return undefined;
            admit(request, reply);
            return answer(request, reply);
          });
        }
        admit(request, reply);
        return answer(request, reply);
      },
    };
  }
  return {
    method: endpoint.method,
    url,
    onRequest: (request, reply, done) => {
      if (!hasFaults(deps.settings.faults)) return done(tryAdmit(admit, request, reply));
      faults(request, reply).then(
        (proceed) => done(proceed ? tryAdmit(admit, request, reply) : undefined),
        (error: Error) => done(error),
      );
    },
    preParsing: async (request, _reply, payload) => {
      checkMediaType(request, endpoint);
      return payload;
    },
    handler: answer,
  };
}

/**
 * Authenticates the caller (endpoints with a permission) and counts it against its rate limits,
 * setting the `X-RateLimit-*` headers; throws the contract's error otherwise.
 */
function admitCaller(request: FastifyRequest, reply: FastifyReply, endpoint: Endpoint, deps: MockDeps, limiter: RateLimiter): void {
  if (endpoint.permission === undefined) return;
  const auth = authenticate(deps, request.headers.authorization, endpoint.permission);
  request.mockAuth = auth;
  const status = limiter.admit(auth.apiKey.key_sha256);
  if (status) {
    reply.header('x-ratelimit-limit', status.limit);
    reply.header('x-ratelimit-remaining', status.remaining);
    reply.header('x-ratelimit-reset', status.resetEpochSeconds);
  }
}

/** For a hook's callback: the failure returned rather than thrown. */
function tryAdmit(admit: (request: FastifyRequest, reply: FastifyReply) => void, request: FastifyRequest, reply: FastifyReply): Error | undefined {
  try {
    admit(request, reply);
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

/**
 * Parses path parameters with the endpoint's schema. Every path parameter of the contract is a
 * `pathId`, and nearly every request spells it plainly (`/accounts/1001`): that case is read
 * without zod, which costs more than the rest of a request's own work; anything else (`007`, `x`,
 * too large) goes through the schema, for its error.
 */
function paramsParser(schema: z.ZodType | undefined): (params: unknown) => unknown {
  if (schema === undefined) return () => undefined;
  const names = schema instanceof z.ZodObject && Object.values(schema.shape).every((field) => field === pathId) ? Object.keys(schema.shape) : undefined;
  const slow = (params: unknown) => parseOrThrow(schema, params, 'INVALID_PARAMETERS');
  if (names === undefined) return slow;
  return (params) => {
    const parsed: Record<string, number> = {};
    for (const name of names) {
      const value = (params as Record<string, string | undefined>)[name];
      const id = value !== undefined && CANONICAL_ID.test(value) ? Number(value) : NaN;
      if (!(id <= Number.MAX_SAFE_INTEGER)) return slow(params);
      parsed[name] = id;
    }
    return parsed;
  };
}

const JSON_MEDIA_TYPE = 'application/json';
const MULTIPART_MEDIA_TYPE = 'multipart/form-data';

/** 415 unless the body is in the endpoint's media type; a JSON endpoint also accepts no body at all. */
function checkMediaType(request: FastifyRequest, endpoint: Endpoint): void {
  const header = request.headers['content-type'];
  const mediaType = header?.split(';')[0]!.trim().toLowerCase();
  const expected = endpoint.multipart ? MULTIPART_MEDIA_TYPE : JSON_MEDIA_TYPE;
  if (mediaType === expected) return;
  if (mediaType === undefined && !endpoint.multipart && !hasBody(request)) return;
  throw new MockError(
    'UNSUPPORTED_MEDIA_TYPE',
    `This operation takes ${expected === JSON_MEDIA_TYPE ? 'an' : 'a'} ${expected} body; the request's Content-Type was ${header === undefined ? 'missing' : `"${header}"`}.`,
    { provided: header ?? '(none)', expected: [expected] },
  );
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function checkResponse(name: EndpointName, endpoint: Endpoint, result: unknown): void {
  const parsed = endpoint.response.safeParse(result);
  if (!parsed.success) {
    throw new Error(`The ${name} handler answered outside the contract: ${parsed.error.message}`);
  }
}

/** For the not-found handler: the methods served at a path, when the path is known at all. */
export function createRouteIndex(app: FastifyInstance): (path: string) => string[] {
  const routes: Array<{ pattern: RegExp; method: string }> = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ pattern: pathPattern(route.url), method });
  });
  return (path) => [...new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method))];
}

export type RouteIndex = ReturnType<typeof createRouteIndex>;

function pathPattern(url: string): RegExp {
  return new RegExp(`^${url.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+').replace(/\*/g, '.*')}$`);
}

/** The paths of the operations that need a key: another method there is refused only after the key is checked. */
const KEYED_PATHS = Object.values(endpoints as Record<string, Endpoint>)
  .filter((endpoint) => endpoint.permission !== undefined)
  .map((endpoint) => pathPattern(BASE_PATH + endpoint.path));

/**
 * The answer to a request no route takes: 404 for an unknown path, 405 with `Allow` for a known
 * path and another method. Run in the not-found handler's `onRequest` hook, before any body is
 * read: a method that takes a body (`QUERY`, `PUT`) is refused as any other, never for its media
 * type. At a path that needs a key the key is checked first, as for the path's own methods.
 */
export function notFoundOrWrongMethod(index: RouteIndex, request: FastifyRequest, deps: MockDeps): MockError {
  const path = request.url.split('?')[0]!;
  const allowed = index(path);
  if (allowed.length === 0) {
    return new MockError('NOT_FOUND', `No route ${request.method} ${path}.`, { method: request.method, path });
  }
  if (KEYED_PATHS.some((pattern) => pattern.test(path))) {
    try {
      identifyCaller(deps, request.headers.authorization);
    } catch (error) {
      return error as MockError;
    }
  }
  return new MockError('METHOD_NOT_ALLOWED', `${path} does not accept ${request.method}; use ${allowed.join(' or ')}.`, {
    method: request.method,
    allowed_methods: allowed,
  }, { allow: allowed.join(', ') });
}

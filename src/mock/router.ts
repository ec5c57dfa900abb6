import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BASE_PATH, endpoints, redactApiKey, type Endpoint, type EndpointName } from '../contract';
import { authenticate, bearerKey, type Authenticated } from './auth';
import type { MockDeps } from './deps';
import { MockError, parseOrThrow } from './errors';
import { applyFaults, hasFaults, type RandomSource } from './faults';
import type { Handlers } from './handler';
import type { RateLimiter } from './rateLimit';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller as far as it is known, for the request log; null before authentication. */
    mockCaller: { apiKey: string | null; partnerId: number | null } | null;
    /** The partner and key behind the request, once authenticated; spread into the handler's input. */
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
 */
export function registerContractRoutes(app: FastifyInstance, deps: MockDeps, handlers: Handlers, options: RouterOptions): void {
  app.decorateRequest('mockCaller', null);
  app.decorateRequest('mockAuth', null);

  for (const [name, endpoint] of Object.entries(endpoints) as Array<[EndpointName, Endpoint]>) {
    const handler = handlers[name] as unknown as AnyHandler;
    app.route({
      method: endpoint.method,
      url: BASE_PATH + endpoint.path,
      // A callback hook, not an async one: this runs on every request, and most need no await.
      onRequest: (request, reply, done) => {
        const { authorization } = request.headers;
        request.mockCaller = { apiKey: authorization === undefined ? null : redactApiKey(bearerKey(authorization) ?? authorization), partnerId: null };
        if (!hasFaults(deps.settings.faults)) return done(admitCaller(request, reply, endpoint, deps, options.limiter));
        applyFaults(deps.settings.faults, options.random, request, reply).then(
          (proceed) => done(proceed ? admitCaller(request, reply, endpoint, deps, options.limiter) : undefined),
          (error: Error) => done(error),
        );
      },
      ...(endpoint.method === 'POST'
        ? {
            preParsing: async (request: FastifyRequest, _reply: unknown, payload: unknown) => {
              checkMediaType(request, endpoint);
              return payload;
            },
          }
        : {}),
      handler: async (request, reply) => {
        const input = {
          params: endpoint.params ? parseOrThrow(endpoint.params, request.params, 'INVALID_PARAMETERS') : undefined,
          query: endpoint.query ? parseOrThrow(endpoint.query, request.query, 'INVALID_PARAMETERS') : undefined,
          // An absent body is an empty object: every field of the login-link request is optional.
          body: endpoint.body && !endpoint.multipart ? parseOrThrow(endpoint.body, request.body === undefined ? {} : request.body, 'VALIDATION_ERROR') : undefined,
          request,
          reply,
          ...(request.mockAuth ?? {}),
        };
        const result = await handler(input, deps);
        if (options.validateResponses) checkResponse(name, endpoint, result);
        return reply.code(endpoint.successStatus).send(result);
      },
    });
  }
}

/**
 * Authenticates the caller (endpoints with a permission) and counts it against its rate limits.
 * Returns the failure rather than throwing it, for the hook's callback.
 */
function admitCaller(request: FastifyRequest, reply: FastifyReply, endpoint: Endpoint, deps: MockDeps, limiter: RateLimiter): Error | undefined {
  if (endpoint.permission === undefined) return undefined;
  try {
    const auth = authenticate(deps, request.headers.authorization, endpoint.permission);
    request.mockAuth = auth;
    request.mockCaller!.partnerId = auth.partner.id;
    const status = limiter.admit(auth.apiKey.key_sha256);
    if (status) {
      reply.headers({
        'x-ratelimit-limit': status.limit,
        'x-ratelimit-remaining': status.remaining,
        'x-ratelimit-reset': status.resetEpochSeconds,
      });
    }
    return undefined;
  } catch (error) {
    return error as Error;
  }
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
    `This operation takes a ${expected} body; the request's Content-Type was ${header === undefined ? 'missing' : `"${header}"`}.`,
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
    const pattern = new RegExp(`^${route.url.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+').replace(/\*/g, '.*')}$`);
    for (const method of [route.method].flat()) routes.push({ pattern, method });
  });
  return (path) => [...new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method))];
}

export type RouteIndex = ReturnType<typeof createRouteIndex>;

export function notFoundOrWrongMethod(index: RouteIndex, request: FastifyRequest): MockError {
  const path = request.url.split('?')[0]!;
  const allowed = index(path);
  if (allowed.length === 0) {
    return new MockError('NOT_FOUND', `No route ${request.method} ${path}.`, { method: request.method, path });
  }
  return new MockError('METHOD_NOT_ALLOWED', `${path} does not accept ${request.method}; use ${allowed.join(' or ')}.`, {
    method: request.method,
    allowed_methods: allowed,
  }, { allow: allowed.join(', ') });
}

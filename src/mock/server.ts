import { STATUS_CODES } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type onRequestHookHandler } from 'fastify';
import { BASE_PATH, DOCUMENT_MAX_BYTES, type Permission } from '../contract';
import { registerAppRoutes } from './appRoutes';
import { createClock } from './clock';
import { sha256Hex } from './crypto';
import { registerControls } from './controls';
import { BlobTooLargeError, type FaultSettings, type MockDeps, type MockSettings, type RateLimitWindow, type RecordedRequest } from './deps';
import { MockError } from './errors';
import type { RandomSource } from './faults';
import { resolveTimestamp, type Fixture } from './fixture';
import { createRateLimiter, type RateLimiter } from './rateLimit';
import { createRequestLog, logAnswer } from './requestLog';
import { registerOpenApiRoute } from './openApiRoute';
import { createRouteIndex, notFoundOrWrongMethod, registerContractRoutes } from './router';
import { handlers } from './routes';
import { DEMO_FIXTURE } from './seed';
import { createSimulation, type Simulation } from './simulation';
import type { MockState } from './state';
import { storageFullReason } from './persistence';
import { openStore } from './store';

// What `taxprep serve` needs of the mock, from this one module: the build makes it a bundle of its own.
export { DataDirError } from './store';
export { entryOf } from './requestLog';
export { FixtureError, loadFixtureFile } from './fixture';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 4010;
/** The contract's limits for a production key: 100 a minute and 10,000 a day. */
export const DEFAULT_RATE_LIMITS: readonly RateLimitWindow[] = [
  { limit: 100, windowSeconds: 60 },
  { limit: 10_000, windowSeconds: 86_400 },
];
/** Largest document upload: the contract module's limit, which the client checks too. */
export const DEFAULT_UPLOAD_MAX_BYTES = DOCUMENT_MAX_BYTES;
/** Largest JSON body: the biggest valid request is a few kilobytes. */
export const JSON_BODY_MAX_BYTES = 1024 * 1024;
export const NO_FAULTS: FaultSettings = { latencyMs: 0, errorRate: 0, dropRate: 0 };

/**
 * What one client may hold of the server (the contract is silent; docs/contract-notes.md): a
 * client that sends its request head slowly is answered 408 and dropped, an idle keep-alive
 * connection is closed, and connections beyond the cap are refused, so that a handful of slow or
 * idle clients can never stop `/health` from answering.
 */
export interface ConnectionLimits {
  /** Time to receive the request line and headers. */
  headersTimeoutMs: number;
  /** Time to receive the whole request, body included (a large upload on a slow link). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept. */
  keepAliveTimeoutMs: number;
  maxConnections: number;
  /** Largest request head (request line and headers); beyond it 414 or 431. */
  maxHeaderBytes: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 300_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1000,
  maxHeaderBytes: 16 * 1024,
};

export interface MockServerOptions {
  fixture?: Fixture;
  /** Keep state and uploads here across restarts; in memory when absent. */
  dataDir?: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Per key; [] turns rate limiting off. */
  rateLimits?: readonly RateLimitWindow[];
  uploadMaxBytes?: number;
  faults?: Partial<FaultSettings>;
  /** Check every answer against the contract's response schema (tests); off by default for speed. */
  validateResponses?: boolean;
  /** Decides injected faults; tests pass a constant. */
  random?: RandomSource;
  /** Told about every unexpected failure (answered 500); `serve` prints them on stderr. */
  onInternalError?: (error: unknown) => void;
  /** Told, in one line, of each request refused because the disk is full (answered 507). */
  onStorageFull?: (line: string) => void;
  /** Told, in one line, of what opening `dataDir` did that its owner should know (converting an old `state.json`). */
  onDataDirNotice?: (line: string) => void;
  connectionLimits?: Partial<ConnectionLimits>;
  /** Play the preparer's side with this seed (`serve --mock --simulate`); off when absent. */
  simulationSeed?: number;
  /** Each contract request as it is logged (`serve`'s terminal); called on the hot path, so it must be cheap. */
  onRequest?: (request: RecordedRequest) => void;
}

/** A key as `serve` prints it at start-up: the only moment the plain key is shown. */
export interface PrintedApiKey {
  key: string;
  label: string;
  partner_id: number;
  permissions: Permission[];
  expires_at: string | null;
}

export interface MockServer {
  app: FastifyInstance;
  deps: MockDeps;
  baseUrl: string;
  appUrl: string;
  keys: PrintedApiKey[];
  close(): Promise<void>;
}

/** Opens the store, builds the app and listens; the returned server is ready for requests. */
export async function createMockServer(options: MockServerOptions = {}): Promise<MockServer> {
  const fixture = options.fixture ?? DEMO_FIXTURE;
  const store = await openStore({ fixture, ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }), ...(options.onDataDirNotice ? { onNotice: options.onDataDirNotice } : {}) });
  const settings: MockSettings = {
    baseUrl: '',
    appUrl: '',
    rateLimits: [...(options.rateLimits ?? DEFAULT_RATE_LIMITS)],
    uploadMaxBytes: options.uploadMaxBytes ?? DEFAULT_UPLOAD_MAX_BYTES,
    faults: { ...NO_FAULTS, ...options.faults },
  };
  const deps: MockDeps = { store, clock: createClock(store), settings, requestLog: createRequestLog(undefined, options.onRequest) };
  let app: FastifyInstance | undefined;
  try {
    app = await buildMockApp(deps, {
      limiter: createRateLimiter(settings, deps.clock, () => store.state),
      random: options.random ?? Math.random,
      validateResponses: options.validateResponses ?? false,
      onInternalError: options.onInternalError ?? (() => {}),
      onStorageFull: options.onStorageFull ?? (() => {}),
      storage: options.dataDir === undefined ? 'its temporary directory' : `the data directory ${options.dataDir}`,
      connectionLimits: { ...DEFAULT_CONNECTION_LIMITS, ...options.connectionLimits },
      simulation: options.simulationSeed === undefined ? undefined : createSimulation(deps, options.simulationSeed),
    });
    await app.listen({ host: options.host ?? DEFAULT_HOST, port: options.port ?? DEFAULT_PORT });
  } catch (error) {
    await app?.close();
    await store.close();
    throw error;
  }
  const { port } = app.server.address() as AddressInfo;
  settings.appUrl = appUrlOf(options.host ?? DEFAULT_HOST, port);
  settings.baseUrl = baseUrlOf(options.host ?? DEFAULT_HOST, port);
  const server = app;
  return {
    app,
    deps,
    baseUrl: settings.baseUrl,
    appUrl: settings.appUrl,
    keys: printedKeys(fixture, store.state, deps.clock.now()),
    async close() {
      await server.close();
      await store.close();
    },
  };
}

/**
 * The fixture's plain keys, each with its expiry as an ISO timestamp even where the fixture gives
 * it relative to loading (`-30d`): the state's record when the state holds the key, else (a saved
 * state seeded from another fixture) the fixture's value resolved against the virtual clock.
 */
function printedKeys(fixture: Fixture, state: MockState, now: Date): PrintedApiKey[] {
  return fixture.partners.flatMap((partner) =>
    partner.api_keys.map((apiKey) => {
      const digest = sha256Hex(apiKey.key);
      const stored = state.apiKeys.find((record) => record.key_sha256 === digest);
      const expiresAt = stored ? stored.expires_at : apiKey.expires_at === null ? null : (resolveTimestamp(apiKey.expires_at, now) ?? null);
      return {
        key: apiKey.key,
        label: apiKey.label,
        partner_id: partner.id,
        permissions: [...apiKey.permissions],
        expires_at: expiresAt,
      };
    }),
  );
}

/** `{app_url}` of a mock listening on `host` and `port`. */
function appUrlOf(host: string, port: number): string {
  return `http://${hostInUrl(host)}:${port}`;
}

/** `{base_url}` of a mock listening on `host` and `port`. */
export function baseUrlOf(host: string, port: number): string {
  return appUrlOf(host, port) + BASE_PATH;
}

/** Links must work when pasted: a wildcard address is reached as localhost, IPv6 goes in brackets. */
function hostInUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

interface AppOptions {
  limiter: RateLimiter;
  random: RandomSource;
  validateResponses: boolean;
  onInternalError: (error: unknown) => void;
  onStorageFull: (line: string) => void;
  /** Where the mock stores what it is sent, as messages name it. */
  storage: string;
  connectionLimits: ConnectionLimits;
  simulation: Simulation | undefined;
}

/** The Fastify app of the mock: contract routes, `/_mock` controls and the app's landing pages. */
async function buildMockApp(deps: MockDeps, options: AppOptions): Promise<FastifyInstance> {
  const limits = options.connectionLimits;
  const app = Fastify({
    logger: false,
    bodyLimit: JSON_BODY_MAX_BYTES,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      maxHeaderSize: limits.maxHeaderBytes,
      // Node checks the two timeouts this often (30 s by default): a slow head would be held that much longer.
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
    },
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // HEAD on every GET route: the same answer (status, headers, checks, counting) without the body.
    exposeHeadRoutes: true,
    forceCloseConnections: true,
    // Failures found before routing get the contract's error body too.
    frameworkErrors: (error, request, reply) => {
      const badUrl = error.code === 'FST_ERR_BAD_URL';
      const answer = badUrl
        ? new MockError('INVALID_PARAMETERS', 'The request path is not a valid URL: it has malformed percent-encoding.', { path: ['has malformed percent-encoding'] })
        : new MockError('NOT_FOUND', 'No route matches the request.', { method: request.method, path: request.url.split('?')[0] ?? '' });
      void sendMockError(deps, request, reply, answer);
    },
    clientErrorHandler: (error, socket) => answerMalformedHttp(error, socket, limits.maxHeaderBytes),
  });
  app.server.maxConnections = limits.maxConnections;
  const routeIndex = createRouteIndex(app);

  replaceJsonParser(app);

  app.setErrorHandler((error, request, reply) => {
    const storageFull = storageFullReason(error);
    const answer =
      storageFull === undefined
        ? asMockError(error, request, deps.settings)
        : new MockError('INSUFFICIENT_STORAGE', `The mock could not store the request: ${options.storage} ${storageFull}. Nothing of it was kept; free some space and send it again.`);
    if (storageFull !== undefined) options.onStorageFull(`${request.method} ${request.url.split('?')[0]} answered 507: ${options.storage} ${storageFull}`);
    if (!answer) options.onInternalError(error);
    return sendMockError(deps, request, reply, answer ?? new MockError('INTERNAL_ERROR', 'The mock failed unexpectedly; this is a bug in taxprep.'));
  });
  // Refused in `onRequest`, before Fastify reads a body: for a method that takes one (`QUERY`,
  // `PUT`) it would first refuse a missing Content-Type, and a caller without a key would learn it.
  const refuseUnrouted: onRequestHookHandler = (request, _reply, done) => done(notFoundOrWrongMethod(routeIndex, request, deps));
  // Fastify's types list only the hooks after parsing; its 404 context takes `onRequest` all the same.
  // The handler is required: the hook has always answered before it would run.
  app.setNotFoundHandler({ onRequest: refuseUnrouted } as Parameters<typeof app.setNotFoundHandler>[0], (request) => {
    throw notFoundOrWrongMethod(routeIndex, request, deps);
  });
  // Every answer carries the mock's own time, so `Date` and the times in headers and bodies are on
  // one clock. Set on the raw response before Fastify sees the request (Node merges it into the
  // head): one comparison per request, where a hook would run in every route's path.
  app.server.prependListener('request', (_request, response) => {
    if (deps.store.state.clockOffsetMs !== 0) response.setHeader('date', deps.clock.now().toUTCString());
  });

  const { simulation } = options;
  // Only with --simulate: every request (controls and pages too) sees the records as of the virtual clock.
  if (simulation) {
    app.addHook('onRequest', (_request, _reply, done) => {
      if (simulation.due()) simulation.catchUp().then(() => done(), done);
      else done();
    });
  }
  registerContractRoutes(app, deps, handlers, options);
  registerControls(app, deps);
  registerAppRoutes(app, deps);
  registerOpenApiRoute(app, deps);
  await app.ready();
  return app;
}

function sendMockError(deps: MockDeps, request: FastifyRequest, reply: FastifyReply, error: MockError): FastifyReply {
  logAnswer(deps, request, reply, error.status);
  return reply.code(error.status).headers(error.headers).send(error.body());
}

/** Half the head: a request line longer than this in a head that overflows is what made it overflow. */
const uriShareOfHead = (maxHeaderBytes: number) => maxHeaderBytes / 2;

/**
 * A request Node's parser refused before any route saw it: answered in the contract's body, then
 * closed. A head over the limit is 414 when its request line (the URL) is the long part, else 431;
 * a head that took too long is 408; anything else is not HTTP at all.
 */
function answerMalformedHttp(error: Error & { code?: string; rawPacket?: unknown }, socket: Socket, maxHeaderBytes: number): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return;
  const answer = clientErrorAnswer(error, maxHeaderBytes);
  const body = JSON.stringify(answer.body());
  socket.end(
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function clientErrorAnswer(error: Error & { code?: string; rawPacket?: unknown }, maxHeaderBytes: number): MockError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW': {
      const lineEnd = Buffer.isBuffer(error.rawPacket) ? error.rawPacket.indexOf('\r\n') : -1;
      if (lineEnd === -1 || lineEnd > uriShareOfHead(maxHeaderBytes)) {
        return new MockError('URI_TOO_LONG', `The request URL is too long: the request line and headers may hold at most ${maxHeaderBytes} bytes.`, {
          max_bytes: maxHeaderBytes,
        });
      }
      return new MockError('HEADERS_TOO_LARGE', `The request headers are too large: the request line and headers may hold at most ${maxHeaderBytes} bytes.`, {
        max_bytes: maxHeaderBytes,
      });
    }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new MockError('REQUEST_TIMEOUT', 'The request was not received in time; the connection is closed.');
    default:
      return new MockError('VALIDATION_ERROR', 'The request is not well-formed HTTP/1.1.', { request: ['is not well-formed HTTP/1.1'] });
  }
}

/**
 * Fastify's own JSON parser, but an empty body is no body and bad JSON is `INVALID_JSON`. Keys
 * named `__proto__` or `constructor` are kept as the plain own properties `JSON.parse` makes of
 * them (Fastify's guard would refuse the whole body without naming the key): every body schema is
 * strict, so such a key is answered 400 `VALIDATION_ERROR` naming it, and never reaches a record.
 */
function replaceJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('ignore', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    parseJson(request, text, (error, value) => {
      if (error) done(new MockError('INVALID_JSON', `The request body is not valid JSON: ${error.message}`), undefined);
      else done(null, value);
    });
  });
}

/** The contract's answer for a failure, or undefined when the failure is a bug (500). */
function asMockError(error: unknown, request: FastifyRequest, settings: MockSettings): MockError | undefined {
  if (error instanceof MockError) return error;
  if (error instanceof BlobTooLargeError) return payloadTooLarge(error.maxBytes);
  const { code, statusCode } = error as Partial<FastifyError>;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return payloadTooLarge(JSON_BODY_MAX_BYTES);
  if (statusCode === 413) return payloadTooLarge(settings.uploadMaxBytes);
  if (statusCode === 415 || code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') {
    return new MockError('UNSUPPORTED_MEDIA_TYPE', 'The request body is not in a media type this operation accepts.', {
      provided: request.headers['content-type'] ?? '(none)',
      expected: ['application/json'],
    });
  }
  if (statusCode !== undefined && statusCode >= 400 && statusCode < 500) {
    return new MockError('VALIDATION_ERROR', `The request could not be read: ${(error as Error).message}.`, { body: [(error as Error).message] });
  }
  return undefined;
}

function payloadTooLarge(maxBytes: number): MockError<'PAYLOAD_TOO_LARGE'> {
  return new MockError('PAYLOAD_TOO_LARGE', `The request body is larger than the limit of ${maxBytes} bytes.`, { max_bytes: maxBytes });
}

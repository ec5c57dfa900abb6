import type { FastifyReply, FastifyRequest } from 'fastify';
import { BASE_PATH, redactApiKey } from '../contract';
import { bearerKey } from './auth';
import type { MockDeps, RecordedRequest, RequestLog, RequestLogEntry } from './deps';

/** The newest requests kept for `/_mock/requests`; older ones are dropped so a long run stays small. */
const REQUEST_LOG_CAPACITY = 1000;

/**
 * Recording is on every request's path, so it only stores what it is given; formatting the time
 * and redacting the key wait until someone reads the log.
 */
export function createRequestLog(capacity = REQUEST_LOG_CAPACITY, onRecord?: (request: RecordedRequest) => void): RequestLog {
  let recorded: RecordedRequest[] = [];
  return {
    record(request) {
      recorded.push(request);
      onRecord?.(request);
      // Trimmed in batches so that recording stays cheap under load.
      if (recorded.length >= capacity * 2) recorded = recorded.slice(-capacity);
    },
    entries: () => recorded.slice(-capacity).map(entryOf),
    clear() {
      recorded = [];
    },
  };
}

const CONTRACT_PATH_PREFIX = `${BASE_PATH}/`;

/**
 * Logs a contract request as it is answered (`status`), or as its connection is dropped by an
 * injected fault (null). Called where the mock sends, rather than from an `onResponse` hook: a
 * hook costs every request more than all the mock's own work. Controls and the app's pages are
 * not logged.
 */
export function logAnswer(deps: MockDeps, request: FastifyRequest, reply: FastifyReply, status: number | null): void {
  if (!request.url.startsWith(CONTRACT_PATH_PREFIX)) return;
  deps.requestLog.record({
    atMs: deps.clock.nowMs(),
    method: request.method,
    path: request.url,
    status,
    authorization: request.headers.authorization,
    partner_id: request.mockAuth?.partner.id ?? null,
    duration_ms: Math.round(reply.elapsedTime),
  });
}

/** A recorded request as `/_mock/requests` shows it: the time as ISO 8601, the key redacted. */
export function entryOf(request: RecordedRequest): RequestLogEntry {
  const { atMs, authorization, ...rest } = request;
  return { at: new Date(atMs).toISOString(), ...rest, api_key: loggedApiKey(authorization) };
}

/** The caller's key as the log shows it: redacted, whether or not it was valid. */
function loggedApiKey(authorization: string | undefined): string | null {
  return authorization === undefined ? null : redactApiKey(bearerKey(authorization) ?? authorization);
}

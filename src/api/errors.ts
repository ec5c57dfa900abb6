import { ErrorBody } from '../contract/errors';
import { endsInVersion } from '../contract/version';
import { ApiError, NetworkError, NotTheApiError } from '../errors';
import { sanitizeDeep, sanitizeLine } from '../output/sanitize';
import type { NetworkFailureKind } from './retry';
import { formatDuration } from '../lib/duration';

/** Who holds the key, for hints: "profile \"acme\"" or "TAXPREP_API_KEY". */
export interface ErrorContext {
  keySource: string;
  /** For the hint of a wrong base URL. */
  baseUrl: string;
}

function field(details: Record<string, unknown> | undefined, name: string): string | undefined {
  const value = details?.[name];
  return value === undefined || value === null ? undefined : String(value);
}

/** What to do next, by the service's error code (then by status). */
export function hintFor(status: number, body: ErrorBody, context: ErrorContext): string | undefined {
  const details = body.error.details;
  switch (body.error.code) {
    case 'INVALID_API_KEY':
      return `The key from ${context.keySource} was refused. Set a valid key with \`taxprep profiles add <name>\` or the TAXPREP_API_KEY environment variable.`;
    case 'EXPIRED_API_KEY':
      return `The key from ${context.keySource} has expired. Ask the service operator for a new key, then store it with \`taxprep profiles add <name>\`.`;
    case 'INSUFFICIENT_PERMISSIONS': {
      const permission = field(details, 'required_permission');
      return `This key lacks the ${permission ?? 'required'} permission. Ask the service operator to grant it, or use a profile whose key has it (--profile).`;
    }
    case 'ACCESS_DENIED':
      // The service's message already says whose record it is: the hint says only what to check.
      return 'Check the id, and that this is the right profile (`taxprep whoami` shows the one in use).';
    case 'ACCOUNT_SUSPENDED':
      return 'The account is suspended. Contact support to reactivate it; no login link can be generated until then.';
    case 'RATE_LIMIT_EXCEEDED': {
      const resetAt = field(details, 'reset_at');
      return `The key's rate limit is used up${resetAt ? ` until ${resetAt}` : ''}. Run the command again after that.`;
    }
    case 'DUPLICATE_EMAIL': {
      const existing = field(details, 'existing_account_id');
      return existing ? `An account with this email exists: see \`taxprep accounts get ${existing}\`.` : undefined;
    }
  }
  if (status >= 500) return 'The service failed. Try again later; if it persists, report it with the output of --verbose.';
  return undefined;
}

export const NOT_THE_API_MESSAGE = "this does not look like the service's API: check the base URL (it should end in /v1beta)";

/** What a command that uses the settings tells a wrong base URL to do. */
export const CHANGE_SETTINGS = 'Show the settings with `taxprep whoami`; change them with `taxprep profiles add <name> --base-url https://.../v1beta` or TAXPREP_BASE_URL.';

/** A wrong base URL answers, but not in the service's shapes: HTML, plain text, a foreign 404. */
export function notTheApi(status: number, text: string, baseUrl: string): NotTheApiError {
  const snippet = bodySnippet(text, QUOTED_BODY_CHARACTERS);
  return notTheApiWith({ status, base_url: baseUrl, ...(snippet ? { body: snippet } : {}) }, CHANGE_SETTINGS);
}

/** The same error with other advice (`profiles add`, whose base URL is not in the settings yet). */
export function notTheApiWith(details: Record<string, unknown>, advice: string, prefix = ''): NotTheApiError {
  const snippet = typeof details.body === 'string' ? details.body : '';
  return new NotTheApiError(`${NOT_THE_API_MESSAGE}${prefix}`, {
    details,
    hint: `${String(details.base_url)} answered HTTP ${String(details.status)}${snippet ? ` with "${snippet}"` : ''}. ${advice}`,
  });
}

/** The 404 codes that name a kind of record: an answer with one of them came from the API (see `apiErrorFrom`). */
const RECORD_NOT_FOUND_CODES: ReadonlySet<string> = new Set(['ACCOUNT_NOT_FOUND', 'USER_NOT_FOUND', 'DELIVERABLE_NOT_FOUND', 'DOCUMENT_NOT_FOUND', 'PROJECT_NOT_FOUND']);

/**
 * The error for a non-2xx answer. Everything the service wrote is sanitised here, once, before it
 * can reach a terminal. A 404 without the contract's error body is a wrong base URL, not a missing
 * record; so is a 404 that names no kind of record (a server's "No route") from a base URL that
 * lacks the contract's `/v1beta`. Any other status without the body still yields an error with a
 * code of its own: `HTTP_<status>`.
 */
export function apiErrorFrom(status: number, text: string, context: ErrorContext, retryAfterMs?: number): ApiError | NotTheApiError {
  let body: ErrorBody | undefined;
  try {
    const parsed = ErrorBody.safeParse(JSON.parse(text));
    if (parsed.success) body = parsed.data;
  } catch {
    // Not JSON: described below from the status alone.
  }
  if (status === 404 && (body === undefined || (!RECORD_NOT_FOUND_CODES.has(body.error.code) && !endsInVersion(context.baseUrl)))) {
    return notTheApi(status, text, context.baseUrl);
  }
  body ??= { error: { code: `HTTP_${status}`, message: describeStatus(status, text) } };
  const clean: ErrorBody = { error: { code: sanitizeLine(body.error.code), message: sanitizeLine(body.error.message) } };
  if (body.error.details !== undefined) clean.error.details = sanitizeDeep(body.error.details) as Record<string, unknown>;
  const options: { hint?: string; retryAfterSeconds?: number } = {};
  const hint = hintFor(status, clean, context);
  if (hint !== undefined) options.hint = hint;
  if (retryAfterMs !== undefined) options.retryAfterSeconds = Math.ceil(retryAfterMs / 1000);
  return new ApiError(status, clean, options);
}

/** How much of a body an error quotes: with its sentence around it, one line of 80 columns. */
export const QUOTED_BODY_CHARACTERS = 48;

/**
 * The start of a body, one printable line, for messages: whole words up to `maxCharacters`, and
 * `…` when there is more, so a quote never ends mid-word without saying so (a single word longer
 * than that is cut, and marked).
 */
export function bodySnippet(text: string, maxCharacters = 120): string {
  const line = sanitizeLine(text).replace(/\s+/g, ' ').trim();
  if ([...line].length <= maxCharacters) return line;
  const room = [...line].slice(0, maxCharacters - 1).join('');
  const wordEnd = room.lastIndexOf(' ');
  return `${wordEnd > 0 ? room.slice(0, wordEnd) : room}…`;
}

function describeStatus(status: number, text: string): string {
  if (status >= 300 && status < 400) {
    const snippet = bodySnippet(text);
    return `the service answered HTTP ${status} with a redirect, which taxprep does not follow with a key${snippet ? `: ${snippet}` : ''}`;
  }
  const snippet = bodySnippet(text, QUOTED_BODY_CHARACTERS);
  return snippet === ''
    ? `the service answered HTTP ${status} with no error body`
    : `the service answered HTTP ${status} with a body that is not the service's error format: ${snippet}`;
}

/** Failures in which no connection was ever made, so the request never reached the service. */
const NEVER_SENT: ReadonlySet<NetworkFailureKind> = new Set(['refused', 'connect-timeout', 'dns']);

/** The error for a request that got no answer. */
export function networkErrorFrom(kind: NetworkFailureKind, origin: string, timeoutMs: number, cause: unknown): NetworkError {
  const checkUrl = 'Check the base URL with `taxprep whoami`, and any HTTPS_PROXY / NO_PROXY settings.';
  const common = { cause, mayHaveReachedService: !NEVER_SENT.has(kind) };
  switch (kind) {
    case 'refused':
      return new NetworkError('NETWORK_ERROR', `nothing is listening at ${origin}: is the service (or \`taxprep serve --mock\`) running?`, { hint: checkUrl, ...common });
    case 'connect-timeout':
      return new NetworkError('TIMEOUT', `could not connect to ${origin} in time`, { hint: checkUrl, ...common });
    case 'timeout':
      return new NetworkError('TIMEOUT', `no answer from ${origin} within ${formatDuration(timeoutMs)}`, {
        hint: 'Raise --timeout (e.g. --timeout 2m) if the service is slow, or check it is healthy with `taxprep health`.',
        ...common,
      });
    case 'reset':
      return new NetworkError('NETWORK_ERROR', `the connection to ${origin} was closed before an answer arrived`, { hint: 'Try again; a request that changes data may have been done, so check before repeating it.', ...common });
    case 'dns':
      return new NetworkError('NETWORK_ERROR', `cannot resolve the host of ${origin}`, { hint: checkUrl, ...common });
    default:
      return new NetworkError('NETWORK_ERROR', `the request to ${origin} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { hint: checkUrl, ...common });
  }
}

const FAILURE_BY_CODE: Record<string, NetworkFailureKind> = {
  ECONNREFUSED: 'refused',
  UND_ERR_CONNECT_TIMEOUT: 'connect-timeout',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  UND_ERR_SOCKET: 'reset',
  UND_ERR_CLOSED: 'reset',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
};

/**
 * The first error code that `accept` takes in an error or its causes: undici and Node nest the
 * system error in `cause` or `errors`. With the message of the error that carries it.
 */
export function codeInCauses(error: unknown, accept: (code: string) => boolean): { code: string; message: string } | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const current = queue.shift();
    if (current === null || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    const { code, cause, errors, message } = current as { code?: unknown; cause?: unknown; errors?: unknown; message?: unknown };
    if (typeof code === 'string' && accept(code)) return { code, message: typeof message === 'string' ? message : code };
    queue.push(cause, ...(Array.isArray(errors) ? errors : []));
  }
  return undefined;
}

/** Classifies undici's and Node's errors by the system error's code. */
export function classifyNetworkFailure(error: unknown): NetworkFailureKind {
  const found = codeInCauses(error, (code) => Object.hasOwn(FAILURE_BY_CODE, code));
  return found === undefined ? 'other' : FAILURE_BY_CODE[found.code]!;
}

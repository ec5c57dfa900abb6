import type { ErrorBody } from './contract/errors';

/**
 * Exit codes: few, distinct, documented (`taxprep help exit-codes`) and decided only here.
 * Scripts and cron jobs branch on them, so a number never changes meaning.
 */
export const EXIT = {
  OK: 0,
  /** A bug in taxprep: an unexpected failure. */
  INTERNAL: 1,
  /** Bad flags, arguments, files or local settings; nothing was sent. */
  USAGE: 2,
  /** No key, or the service refused the key: invalid, expired, without permission, or another partner's record. */
  AUTH: 3,
  /** The account, user, document, project or deliverable does not exist. */
  NOT_FOUND: 4,
  /** The service refused the request as asked: validation, duplicate email, suspended account. */
  REJECTED: 5,
  /** Still rate limited after retrying. */
  RATE_LIMITED: 6,
  /** No answer: connection refused or reset, DNS, proxy, or timeout. */
  NETWORK: 7,
  /** The service failed (5xx) or answered something that is not the contract. */
  SERVER: 8,
  /**
   * `projects status --watch --exit-status` only: --timeout ended the watch while the project was
   * still pending. The same number as SERVER, as `gh pr checks --watch` uses 8 for "pending".
   */
  STILL_PENDING: 8,
  /** A batch finished, but some of its items failed (each is reported). */
  PARTIAL: 9,
  /** Another taxprep run holds the same ledger's lock (an overlapping cron run of a batch command); nothing was sent. */
  LOCKED: 10,
  /** The base URL answered, but not as the service's API does (a foreign 404, an HTML page): a wrong base URL. */
  NOT_THE_API: 11,
  /** A safety limit of taxprep stopped the command: --max-pages, or an answer larger than --max-response-size. */
  LIMIT: 12,
  /** The shared store of taxprep's state (PostgreSQL, docs/team.md) could not be used: down, refusing the role, restarted, full, or of a newer schema. */
  STATE_STORE: 13,
  /** The output could not be written (a full disk, an I/O error): EX_IOERR of sysexits.h. */
  OUTPUT_FAILED: 74,
  /** Stopped by Ctrl-C (SIGINT), after saying what was done; 128 + 2, as shells report it. */
  INTERRUPTED: 130,
  /** The reader of the output went away (`| head -1`): 128 + SIGPIPE, as shells report git and gh there. */
  OUTPUT_CLOSED: 141,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export type ExitName = keyof typeof EXIT;

/**
 * One line each, by name, for `taxprep help exit-codes`, taxprep(1) and the exit codes each
 * command's page lists (src/commands/exitCodes.ts).
 */
export const EXIT_CODE_MEANINGS: ReadonlyArray<[ExitName, string]> = [
  ['OK', 'success (an empty list is a success too)'],
  ['INTERNAL', 'unexpected failure inside taxprep (a bug: run again with --verbose and report it)'],
  ['USAGE', 'bad flags, arguments, input files or settings; nothing was sent'],
  ['AUTH', 'no API key, or the key was refused (INVALID_API_KEY, EXPIRED_API_KEY, INSUFFICIENT_PERMISSIONS, ACCESS_DENIED)'],
  ['NOT_FOUND', 'the record does not exist (ACCOUNT_NOT_FOUND, USER_NOT_FOUND, DOCUMENT_NOT_FOUND, PROJECT_NOT_FOUND, DELIVERABLE_NOT_FOUND)'],
  ['REJECTED', 'the service refused the request (VALIDATION_ERROR, INVALID_*, DUPLICATE_EMAIL, ACCOUNT_SUSPENDED, 413, 415)'],
  ['RATE_LIMITED', 'still rate limited after retrying (RATE_LIMIT_EXCEEDED)'],
  ['NETWORK', 'the service could not be reached, or did not answer in time'],
  ['SERVER', 'the service failed (5xx) or its answer did not match the contract'],
  ['STILL_PENDING', '`projects status --watch --exit-status` only: --timeout ended the watch while the project was still pending'],
  ['PARTIAL', 'a batch finished but some items failed; each failure is reported'],
  ['LOCKED', 'another taxprep run is using the same ledger (overlapping runs of a batch command); nothing was sent'],
  ['NOT_THE_API', 'the base URL does not answer like the service\'s API (a foreign 404, HTML or non-JSON): check that it ends in /v1beta'],
  ['LIMIT', 'a safety limit stopped the command: more pages than --max-pages, or an answer larger than --max-response-size'],
  ['STATE_STORE', 'the shared state store (TAXPREP_STATE_URL) could not be used: unreachable, role refused, restarted, full, or a newer schema; nothing unrecorded was sent: run again'],
  ['OUTPUT_FAILED', 'the output could not be written (OUTPUT_FAILED: a full disk, an I/O error); what was done before is done'],
  ['INTERRUPTED', 'stopped by Ctrl-C (SIGINT) after saying what was already done'],
  ['OUTPUT_CLOSED', 'the reader of the output went away (a pipe into `head -1`, closed); nothing is printed about it'],
];

/** Every failure taxprep reports: a code, a message that says what to do next, and an exit code. */
export abstract class CliError extends Error {
  abstract readonly exitCode: ExitCode;
  /** Machine code, the service's own for API errors (`ACCOUNT_NOT_FOUND`), ours otherwise (`USAGE_ERROR`). */
  abstract readonly code: string;
  readonly details: Record<string, unknown> | undefined;
  /** What to do next, printed after the message on a terminal. */
  readonly hint: string | undefined;

  constructor(message: string, options: { details?: Record<string, unknown>; hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.details = options.details;
    this.hint = options.hint;
    this.name = new.target.name;
  }

  /** The error in the service's error-body shape, for `--json` on stderr. */
  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message };
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

/** Bad flags, arguments or local input. `details` maps field names to messages, like `VALIDATION_ERROR`. */
export class UsageError extends CliError {
  readonly exitCode = EXIT.USAGE;
  readonly code = 'USAGE_ERROR';
}

/** No usable key before any request was made (none configured, or one that cannot be a key). */
export class MissingCredentialsError extends CliError {
  readonly exitCode = EXIT.AUTH;
  readonly code = 'NO_API_KEY';
}

/**
 * A configured key that cannot be a key (not `<prefix>_<random>`): refused before any request,
 * with the code and hint the service would give, so scripts see one code for a bad key.
 */
export class MalformedApiKeyError extends CliError {
  readonly exitCode = EXIT.AUTH;
  readonly code = 'INVALID_API_KEY';
}

/** The service answered with an error body (or a non-2xx status without one). */
export class ApiError extends CliError {
  readonly exitCode: ExitCode;
  readonly code: string;
  constructor(
    readonly status: number,
    body: ErrorBody,
    options: { hint?: string; retryAfterSeconds?: number } = {},
  ) {
    super(body.error.message, { details: body.error.details, hint: options.hint });
    this.code = body.error.code;
    this.exitCode = exitCodeForStatus(status, body.error.code);
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
  readonly retryAfterSeconds: number | undefined;
}

/** No answer: refused, reset, DNS, proxy failure or timeout. `code` is `NETWORK_ERROR` or `TIMEOUT`. */
export class NetworkError extends CliError {
  readonly exitCode = EXIT.NETWORK;
  /**
   * False only when the request provably never left (refused, unknown host, no connection in
   * time), so the service did nothing; a timeout or a reset may have come after it acted.
   */
  readonly mayHaveReachedService: boolean;
  constructor(
    readonly code: 'NETWORK_ERROR' | 'TIMEOUT' | 'TLS_ERROR',
    message: string,
    options: { hint?: string; cause?: unknown; details?: Record<string, unknown>; mayHaveReachedService?: boolean } = {},
  ) {
    super(message, options);
    this.mayHaveReachedService = options.mayHaveReachedService ?? true;
  }
}

/** The service answered something the contract does not allow (bad JSON, wrong shape). */
export class ProtocolError extends CliError {
  readonly exitCode = EXIT.SERVER;
  readonly code = 'INVALID_RESPONSE';
}

/** The base URL reached something that is not the service's API (NOT_THE_API). */
export class NotTheApiError extends CliError {
  readonly exitCode = EXIT.NOT_THE_API;
  readonly code = 'NOT_THE_API';
}

/** A limit taxprep sets for its own safety was reached; `code` says which. */
export class LimitError extends CliError {
  readonly exitCode = EXIT.LIMIT;
  constructor(
    readonly code: 'TOO_MANY_PAGES' | 'RESPONSE_TOO_LARGE',
    message: string,
    options: { hint?: string; details?: Record<string, unknown> } = {},
  ) {
    super(message, options);
  }
}

/** Ctrl-C stopped the command; what was done before it is reported first. */
export class InterruptedError extends CliError {
  readonly exitCode = EXIT.INTERRUPTED;
  readonly code = 'INTERRUPTED';
}

const OUTPUT_FAILURES: Record<string, string> = {
  ENOSPC: 'the device is full',
  EDQUOT: 'the disk quota is used up',
  EFBIG: 'the file is too large',
  EIO: 'an input/output error',
};

/**
 * Standard output cannot be written: its reader went away (EPIPE) or its device failed (ENOSPC,
 * EIO). Not a `CliError` on purpose: no command can recover from it, so the code that handles a
 * command's own failures (a batch's per-item errors) lets it through, and it ends the run wherever
 * it arises; `main` reports it (src/cli.ts).
 */
export class OutputError extends Error {
  readonly code: string;
  readonly exitCode: ExitCode;
  /** False for a closed pipe, which ends quietly. */
  readonly reported: boolean;
  constructor(cause: unknown) {
    const systemCode = String((cause as { code?: unknown } | null)?.code ?? 'EIO');
    const closed = systemCode === 'EPIPE';
    const what = OUTPUT_FAILURES[systemCode] ?? (cause instanceof Error ? cause.message : String(cause));
    super(closed ? 'the reader of the output went away' : `cannot write the output: ${what} (${systemCode})`, { cause });
    this.name = 'OutputError';
    this.code = closed ? 'OUTPUT_CLOSED' : 'OUTPUT_FAILED';
    this.exitCode = closed ? EXIT.OUTPUT_CLOSED : EXIT.OUTPUT_FAILED;
    this.reported = !closed;
  }

  readonly hint = 'The output stopped part-way; what was done before is done (a login-link batch stops sending, and its ledger says what it sent). Free some space or send the output elsewhere, then run again.';
}

/** A ledger is locked by another live run; `details` names its pid, host and start. */
export class LedgerLockedError extends CliError {
  readonly exitCode = EXIT.LOCKED;
  readonly code = 'LEDGER_LOCKED';
}

/**
 * The shared store of taxprep's state (src/state/) failed: the message names the store (its URL
 * without a password) and what to do. Nothing was sent that was not recorded first, so a run
 * stopped by it is resumed by running it again.
 */
export class StateStoreError extends CliError {
  readonly exitCode = EXIT.STATE_STORE;
  readonly code = 'STATE_STORE';
}

const EXIT_BY_CODE: Record<string, ExitCode> = {
  INVALID_API_KEY: EXIT.AUTH,
  EXPIRED_API_KEY: EXIT.AUTH,
  INSUFFICIENT_PERMISSIONS: EXIT.AUTH,
  ACCESS_DENIED: EXIT.AUTH,
  ACCOUNT_SUSPENDED: EXIT.REJECTED,
  RATE_LIMIT_EXCEEDED: EXIT.RATE_LIMITED,
};

/** The exit code of a service error: by its code where the code decides, otherwise by status class. */
export function exitCodeForStatus(status: number, code: string): ExitCode {
  const byCode = EXIT_BY_CODE[code];
  if (byCode !== undefined) return byCode;
  if (status === 401 || status === 403) return EXIT.AUTH;
  if (status === 404) return EXIT.NOT_FOUND;
  if (status === 429) return EXIT.RATE_LIMITED;
  if (status >= 400 && status < 500) return EXIT.REJECTED;
  return EXIT.SERVER;
}

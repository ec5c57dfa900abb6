import type { ApiResponse } from '../api/types';
import { ApiError, CliError, MissingCredentialsError, NetworkError, NotTheApiError, StateStoreError } from '../errors';
import { crashPoint } from '../lib/crashPoints';
import type { RateLimitPacer } from './pacer';

/**
 * Whether a failed write provably changed nothing at the service: it answered 4xx, or never got
 * the request. A timeout, a reset, a 5xx or an unreadable 2xx may each have been acted on.
 */
export function provablyNotApplied(error: unknown): boolean {
  if (error instanceof ApiError) return error.status < 500;
  return error instanceof NetworkError && !error.mayHaveReachedService;
}

/**
 * A failure that no later item can escape: the key is refused or out of quota, or the service
 * cannot be reached, or the shared store that records what was done cannot be used. A batch stops
 * starting items and exits with the failure's own code.
 */
export function isGlobalFailure(error: unknown): boolean {
  // A wrong base URL (NotTheApiError) fails every item alike; so does a shared store that went away.
  if (error instanceof NetworkError || error instanceof MissingCredentialsError || error instanceof NotTheApiError || error instanceof StateStoreError) return true;
  return error instanceof ApiError && ['INVALID_API_KEY', 'EXPIRED_API_KEY', 'INSUFFICIENT_PERMISSIONS', 'RATE_LIMIT_EXCEEDED'].includes(error.code);
}

/** How one write of a batch is kept exact in its ledger; see `sendTracked`. */
export interface TrackedWrite<T> {
  /** Makes the intent durable before the request leaves; returns its id. */
  recordIntent(): Promise<string>;
  /** The request itself. */
  send(): Promise<ApiResponse<T>>;
  /** The service provably did nothing (`provablyNotApplied`): the intent is settled by this line. */
  recordRefused(intent: string, error: CliError): Promise<void>;
  /** The answer arrived: the line that settles the intent with what the service made. */
  recordDone(intent: string, response: ApiResponse<T>): Promise<void>;
  /** The service's time at the answer when the answer tells it (a `created_at`), for the pacer. */
  serviceNow?(response: ApiResponse<T>): number | undefined;
}

/**
 * Sends one write paced to the key's rate limit, with the ledger kept exact: the intent is on disk
 * before the request leaves, and the answer is recorded after it arrives. When the service
 * provably did nothing the intent is settled as refused and the error rethrown; any other failure
 * leaves the intent open (uncertain), since the write may have happened. A kill at any of the
 * named crash points leaves the ledger in a state the next run resolves without a duplicate.
 */
export async function sendTracked<T>(write: TrackedWrite<T>, options: { pacer?: RateLimitPacer; signal?: AbortSignal }): Promise<{ intent: string; response: ApiResponse<T> }> {
  const sequence = await options.pacer?.acquire(options.signal);
  let intent: string;
  let response: ApiResponse<T>;
  let sent = false;
  try {
    crashPoint('batch.before-intent');
    intent = await write.recordIntent();
    crashPoint('batch.after-intent');
    try {
      sent = true;
      response = await write.send();
    } catch (error) {
      if (provablyNotApplied(error)) await write.recordRefused(intent, error as CliError);
      throw error;
    }
  } catch (error) {
    // A request that went out may have been counted against the rate limit, even when refused.
    if (sequence !== undefined) {
      if (sent) options.pacer!.fail(sequence);
      else options.pacer!.release(sequence);
    }
    throw error;
  }
  if (sequence !== undefined) options.pacer!.record(sequence, response.headers, write.serviceNow?.(response));
  crashPoint('batch.after-request');
  await write.recordDone(intent, response);
  crashPoint('batch.after-record');
  return { intent, response };
}

import { ApiError, CliError, EXIT } from '../errors';
import type { TolerantResponseOf } from './tolerant';
import type { ApiClient, ApiResponse } from './types';

/**
 * Whether the service accepts a key: one cheap read the contract defines on every partner's data,
 * `GET /deliverables?limit=N`, which answers 200 to a good key and 401 to a bad one (the contract
 * has no "who am I" endpoint). A 403 INSUFFICIENT_PERMISSIONS still proves the key valid: it only
 * lacks `deliverables:read`. `whoami`, `profiles add` and `doctor` all ask this way.
 */
export interface KeyCheck {
  request: string;
  /** The HTTP status of the answer; null when there was none. */
  status: number | null;
  result: 'accepted' | 'refused' | 'failed';
  code?: string;
}

export interface KeyCheckOutcome {
  check: KeyCheck;
  /** Why the key was refused, or why the check could not be made. */
  error?: CliError;
  /** The page read, when the key was accepted with `deliverables:read`. */
  page?: ApiResponse<TolerantResponseOf<'listDeliverables'>>;
}

function keyCheckRequest(limit: number): string {
  return `GET /deliverables?limit=${limit}`;
}

export async function checkKey(api: Pick<ApiClient, 'call'>, limit = 1): Promise<KeyCheckOutcome> {
  const request = keyCheckRequest(limit);
  try {
    const page = await api.call('listDeliverables', { query: { limit } });
    return { check: { request, status: page.status, result: 'accepted' }, page };
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    const status = error instanceof ApiError ? error.status : null;
    if (error.code === 'INSUFFICIENT_PERMISSIONS') return { check: { request, status, result: 'accepted', code: error.code } };
    return { check: { request, status, result: error.exitCode === EXIT.AUTH ? 'refused' : 'failed', code: error.code }, error };
  }
}

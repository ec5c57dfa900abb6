import { describe, expect, it } from 'vitest';
import { classifyNetworkFailure, networkErrorFrom } from '../../src/api/errors';
import type { NetworkFailureKind } from '../../src/api/retry';
import { provablyNotApplied as madeNoLink } from '../../src/batch/send';
import { ApiError, NetworkError } from '../../src/errors';

const systemError = (code: string) => Object.assign(new Error(code), { code });

describe('did the request reach the service? decided where the error is made', () => {
  it.each<[string, unknown, NetworkFailureKind, boolean]>([
    ['a refused connection', systemError('ECONNREFUSED'), 'refused', false],
    ['an unknown host', new TypeError('fetch failed', { cause: systemError('ENOTFOUND') }), 'dns', false],
    ['no connection in time', systemError('UND_ERR_CONNECT_TIMEOUT'), 'connect-timeout', false],
    ['a refusal inside an AggregateError', new AggregateError([systemError('ECONNREFUSED')]), 'refused', false],
    ['a reset', systemError('ECONNRESET'), 'reset', true],
    ['an unknown failure', new Error('proxy said no'), 'other', true],
  ])('%s', (_name, cause, kind, reached) => {
    expect(classifyNetworkFailure(cause)).toBe(kind);
    const error = networkErrorFrom(kind, 'http://127.0.0.1:1', 1000, cause);
    expect(error.mayHaveReachedService).toBe(reached);
    expect(madeNoLink(error)).toBe(!reached);
  });

  it('a timeout may have reached it; a 4xx answer made nothing, a 5xx may have', () => {
    expect(networkErrorFrom('timeout', 'http://x', 1000, undefined).mayHaveReachedService).toBe(true);
    expect(new NetworkError('NETWORK_ERROR', 'made elsewhere').mayHaveReachedService).toBe(true);
    expect(madeNoLink(new ApiError(404, { error: { code: 'ACCOUNT_NOT_FOUND', message: 'no' } }))).toBe(true);
    expect(madeNoLink(new ApiError(503, { error: { code: 'SERVICE_UNAVAILABLE', message: 'later' } }))).toBe(false);
  });
});

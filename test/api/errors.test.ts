import { describe, expect, it } from 'vitest';
import { apiErrorFrom, classifyNetworkFailure, networkErrorFrom, QUOTED_BODY_CHARACTERS } from '../../src/api/errors';
import type { NetworkFailureKind } from '../../src/api/retry';
import { provablyNotApplied as madeNoLink } from '../../src/batch/send';
import { ApiError, NetworkError, NotTheApiError } from '../../src/errors';

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

describe('an answer without the contract\'s error body, quoted', () => {
  const context = { keySource: 'TAXPREP_API_KEY', baseUrl: 'http://127.0.0.1:4010/v1beta' };
  const page = `<html><head><title>Welcome to nginx!</title></head><body>${'If you see this page, the web server is working. '.repeat(4)}</body></html>`;

  it('a 5xx with a body that is not the error format says so, quoting a whole-word excerpt marked as cut', () => {
    const error = apiErrorFrom(500, '{"message":"Internal Server Error","trace":"at handler (/srv/app.js:12:5) at process"}', context) as ApiError;
    expect(error.code).toBe('HTTP_500');
    expect(error.message).toBe('the service answered HTTP 500 with a body that is not the service\'s error format: {"message":"Internal Server Error","trace":"at…');
  });

  it('a 5xx with no body at all says that', () => {
    expect((apiErrorFrom(503, '  ', context) as ApiError).message).toBe('the service answered HTTP 503 with no error body');
  });

  it('a wrong base URL (NOT_THE_API) quotes a short excerpt of whole words with an ellipsis, fitting 80 columns', () => {
    const error = apiErrorFrom(404, page, context) as NotTheApiError;
    expect(error).toBeInstanceOf(NotTheApiError);
    const excerpt = String(error.details!.body);
    expect(excerpt.endsWith('…')).toBe(true);
    // Whole words: what is quoted is followed, in the body, by a space.
    const quoted = excerpt.slice(0, -1);
    expect(page.startsWith(quoted)).toBe(true);
    expect(page[quoted.length]).toBe(' ');
    expect(error.hint).toContain(`answered HTTP 404 with "${excerpt}".`);
    expect(`  answered HTTP 404 with "${excerpt}".`.length).toBeLessThanOrEqual(80);
  });

  it('a short body is quoted whole, without a marker; one long word is cut and marked', () => {
    expect((apiErrorFrom(404, 'Not Found', context) as NotTheApiError).details!.body).toBe('Not Found');
    const word = 'x'.repeat(200);
    expect((apiErrorFrom(404, word, context) as NotTheApiError).details!.body).toBe(`${'x'.repeat(QUOTED_BODY_CHARACTERS - 1)}…`);
  });
});

import type { ApiClient } from '../../api/types';

/** Said up front and never passed: doctor's requests count against the key's quota too. */
export const REQUEST_BUDGET = 15;

/** The reads doctor makes, each one counted. */
export type CountedApi = Pick<ApiClient, 'call' | 'raw'> & {
  /** Requests sent so far. */
  used(): number;
  /** Headers of the latest answer to a request that carried the key (for the quota). */
  latestHeaders(): Record<string, string> | undefined;
};

/**
 * The client with every request counted against `budget` (the client must not retry, so that one
 * call is one request). Passing the budget is a bug in doctor's plan, not something to report.
 */
export function countedApi(api: Pick<ApiClient, 'call' | 'raw'>, budget = REQUEST_BUDGET): CountedApi {
  let used = 0;
  let latest: Record<string, string> | undefined;
  const spend = () => {
    if (used >= budget) throw new Error(`doctor planned more than its ${budget} requests`);
    used += 1;
  };
  const call: ApiClient['call'] = async (name, input) => {
    spend();
    const answer = await api.call(name, input);
    if (name !== 'health') latest = answer.headers;
    return answer;
  };
  return {
    call,
    async raw(method, path, options) {
      spend();
      const answer = await api.raw(method, path, options);
      if (options?.anonymous !== true && answer.status >= 200 && answer.status < 300) latest = answer.headers;
      return answer;
    },
    used: () => used,
    latestHeaders: () => latest,
  };
}

import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { RecordedRequest } from '../../src/mock/deps';
import { parseFixture } from '../../src/mock/fixture';
import { BATCH_KEYS, batchFixture } from '../e2e/login-link.fixture';
import { makeHome } from './cli';
import { startMock, type RunningMock } from './mock';

export interface BatchMock {
  /** The mock of the test file, started before its first test. */
  mock(): RunningMock;
  /** The HOME of the current test, fresh for each. */
  home(): string;
  /** The environment that points a run at the mock with the acme key, without colour. */
  env(): Record<string, string>;
}

/**
 * For a test file of in-process batch runs: one mock of `accounts` batch-fixture accounts without
 * rate limits, its store reset, its rate limits and request log cleared, and a fresh HOME before
 * each test. `onRequest` sees each request as the mock answers it (to act at an exact moment).
 */
export function batchMockPerFile(options: { accounts: number; onRequest?: (request: RecordedRequest) => void }): BatchMock {
  let mock: RunningMock | undefined;
  let home = '';
  beforeAll(async () => {
    mock = await startMock({ fixture: parseFixture(batchFixture({ accounts: options.accounts })), rateLimits: [], ...(options.onRequest === undefined ? {} : { onRequest: options.onRequest }) });
  });
  afterAll(() => mock?.close());
  beforeEach(async () => {
    await mock!.deps.store.reset();
    mock!.deps.settings.rateLimits = [];
    mock!.deps.requestLog.clear();
    home = makeHome();
  });
  return {
    mock: () => mock!,
    home: () => home,
    env: () => ({ TAXPREP_BASE_URL: mock!.baseUrl, TAXPREP_API_KEY: BATCH_KEYS.acme, NO_COLOR: '1' }),
  };
}

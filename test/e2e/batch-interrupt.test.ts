import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFixture } from '../../src/mock/fixture';
import { makeHome, runCli, startCli } from '../helpers/cli';
import { startMock, type RunningMock } from '../helpers/mock';
import { BATCH_KEYS, FIRST_ACCOUNT_ID, batchFixture } from './login-link.fixture';

/** Ctrl-C in a login-link batch: the engine's behaviour, the same as in accounts import. */

const ACCOUNTS = 30;
let mock: RunningMock;

beforeAll(async () => {
  mock = await startMock({ fixture: parseFixture(batchFixture({ accounts: ACCOUNTS })), rateLimits: [] });
});
afterAll(() => mock.close());

describe('login-link --from, interrupted by Ctrl-C', () => {
  it('finishes the requests in flight, records them, prints the summary and exits 130; the same batch then resumes', async () => {
    const home = makeHome();
    const ids = join(home, 'ids.txt');
    writeFileSync(ids, `${Array.from({ length: ACCOUNTS }, (_, index) => FIRST_ACCOUNT_ID + index).join('\n')}\n`);
    const env = { TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: BATCH_KEYS.acme };
    const args = ['--json', 'login-link', '--from', ids, '--concurrency', '2', '--no-notify'];
    mock.deps.settings.faults.latencyMs = 30;
    const { child, result } = startCli(args, { home, env, stdin: 'ignore' });
    for (let waited = 0; mock.deps.store.state.loginLinks.length < 3; waited += 10) {
      if (waited > 20_000) throw new Error('no link was generated');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    child.kill('SIGINT');
    const stopped = await result;
    mock.deps.settings.faults.latencyMs = 0;
    expect(stopped.exitCode).toBe(130);
    const { error } = JSON.parse(String(stopped.stderr).trim().split('\n').at(-1)!);
    expect(error.code).toBe('INTERRUPTED');
    expect(error.message).toMatch(/^interrupted: login links: \d+ generated, 0 failed, 0 skipped, \d+ not sent in /);
    const made = mock.deps.store.state.loginLinks.length;
    expect(made).toBeLessThan(ACCOUNTS);
    // Every link the service made was answered, printed and recorded: none is left uncertain.
    expect(String(stopped.stdout).trim().split('\n')).toHaveLength(made);
    const ledger = readFileSync(join(home, '.local', 'share', 'taxprep', 'login-links.ndjson'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(ledger.filter((entry) => entry.type === 'issued')).toHaveLength(made);
    expect(ledger.filter((entry) => entry.type === 'intent')).toHaveLength(made);

    const resumed = await runCli(args, { home, env });
    expect(resumed.exitCode).toBe(0);
    expect(mock.deps.store.state.loginLinks).toHaveLength(ACCOUNTS);
  });
});

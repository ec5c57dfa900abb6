import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFixture } from '../../src/mock/fixture';
import { makeHome, runCli } from '../helpers/cli';
import { startMock, type RunningMock } from '../helpers/mock';
import { BATCH_KEYS, FIRST_ACCOUNT_ID, batchFixture } from './login-link.fixture';

/**
 * The mock's clock is one clock: after `POST /_mock/clock {"advance":"6d12h"}` (as docs/mock.md
 * suggests for moving projects on) its `Date`, its rate-limit reset times and its records are all
 * six and a half days ahead of this machine, and the CLI, which places reset times by the
 * service's own `Date`, waits for a window as it does on a clock in step.
 */

const WINDOW = { limit: 3, windowSeconds: 2 };
let mock: RunningMock;

beforeAll(async () => {
  mock = await startMock({ fixture: parseFixture(batchFixture({ accounts: 2 })), rateLimits: [WINDOW] });
  const advanced = await mock.request('/_mock/clock', { body: { advance: '6d12h' } });
  expect(advanced.status).toBe(200);
});
afterAll(() => mock.close());

const env = () => ({ TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: BATCH_KEYS.acme, NO_COLOR: '1' });

describe('after a clock advance of 6d12h', () => {
  it("every time an answer shows is on the mock's clock: Date, X-RateLimit-Reset, a 429's Retry-After and reset_at", async () => {
    const aheadMs = 6.5 * 86_400_000;
    const answers = [];
    for (let index = 0; index <= WINDOW.limit; index += 1) answers.push(await mock.request(`/accounts/${FIRST_ACCOUNT_ID}`, { key: BATCH_KEYS.acme }));
    const [first] = answers;
    const dateMs = Date.parse(first!.headers.date!);
    expect(Math.abs(dateMs - (Date.now() + aheadMs))).toBeLessThan(5000);
    const resetMs = Number(first!.headers['x-ratelimit-reset']) * 1000;
    expect(resetMs - dateMs).toBeGreaterThan(0);
    expect(resetMs - dateMs).toBeLessThanOrEqual(WINDOW.windowSeconds * 1000 + 1000);

    const refused = answers.at(-1)!;
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(WINDOW.windowSeconds);
    expect(Date.parse(refused.json.error.details.reset_at) - Date.parse(refused.headers.date!)).toBeLessThanOrEqual(WINDOW.windowSeconds * 1000 + 1000);
  });

  it('a batch waits for the rate-limit window and finishes, exit 0; doctor then passes', async () => {
    const home = makeHome();
    const dir = mkdtempSync(join(tmpdir(), 'taxprep-advanced-clock-'));
    const files = ['a', 'b', 'c', 'd', 'e'].map((name) => `${FIRST_ACCOUNT_ID}/2025/${name}.pdf`);
    for (const file of files) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      writeFileSync(join(dir, file), `%PDF-1.4 ${file}\n`);
    }
    // The window the first test spent leaves it, on the mock's clock.
    await mock.request('/_mock/clock', { body: { advance: `${WINDOW.windowSeconds}s` } });
    mock.deps.requestLog.clear();
    const sync = await runCli(['--json', 'docs', 'sync', dir], { env: env(), home });
    expect(sync.stderr).not.toMatch(/allows no more until/);
    expect(sync.exitCode).toBe(0);
    const uploaded = sync.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(uploaded).toHaveLength(files.length);
    // More requests than one window holds went out, none of them refused: the batch waited for the window.
    const sent = mock.deps.requestLog.entries().filter((entry) => entry.path.startsWith('/v1beta/accounts/'));
    expect(sent.length).toBeGreaterThan(WINDOW.limit);
    expect(sent.filter((entry) => entry.status === 429)).toEqual([]);

    // Doctor's budget needs more than the tiny window: give it the contract's limit.
    await mock.request('/_mock/rate-limits', { method: 'PUT', body: { windows: [{ limit: 100, window_seconds: 60 }] } });
    const doctor = await runCli(['doctor', '--json'], { env: env(), home });
    const report = JSON.parse(doctor.stdout) as { passed: boolean; checks: Array<{ name: string; status: string; detail: string }> };
    expect(report.checks.filter((entry) => entry.status === 'fail')).toEqual([]);
    expect(report.passed).toBe(true);
    expect(doctor.exitCode).toBe(0);
    // The clock check sees the advance as what it is: the service's clock 6d 12h ahead of this one.
    expect(report.checks.find((entry) => entry.name === 'skew')!.detail).toMatch(/^this machine's clock is 6d 12h\b.* behind the service/);
  });
});

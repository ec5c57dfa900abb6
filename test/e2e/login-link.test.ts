import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFixture } from '../../src/mock/fixture';
import { makeHome, runCli, withoutColor } from '../helpers/cli';
import { startMock, type RunningMock } from '../helpers/mock';
import { BATCH_KEYS, FIRST_ACCOUNT_ID, batchFixture } from './login-link.fixture';

/** `bin/taxprep login-link` as people and pipes see it: a pseudo-terminal, then a pipe. */

const SUSPENDED = FIRST_ACCOUNT_ID + 3;
let mock: RunningMock;
beforeAll(async () => {
  mock = await startMock({ fixture: parseFixture(batchFixture({ accounts: 10, suspended: [SUSPENDED] })), rateLimits: [] });
});
afterAll(() => mock.close());

const env = () => ({ TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: BATCH_KEYS.acme });
const ids = Array.from({ length: 6 }, (_, index) => String(FIRST_ACCOUNT_ID + index));

describe('login-link on a terminal', () => {
  it('prints a line per item as it finishes, a progress counter with rate and ETA, and the summary', async () => {
    const result = await runCli(['login-link', ...ids, '--yes'], { env: env(), tty: true });
    expect(result.exitCode).toBe(9);
    const screen = result.stdout;
    // At the pseudo-terminal's 80 columns the link goes whole onto a line of its own.
    expect(screen).toMatch(new RegExp(`✓\\S*  ${FIRST_ACCOUNT_ID}  client\\.${FIRST_ACCOUNT_ID}@example\\.com  expires \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC \\(in (6|7) days\\)\\n {3}http://127\\.0\\.0\\.1:\\d+/auth/partner-login/[\\w-]+\\n`));
    expect(screen).toMatch(new RegExp(`✗\\S*  ${SUSPENDED}  -  ACCOUNT_SUSPENDED  `));
    expect(screen).toMatch(/6\/6 {2}100% {2}[\d.]+\/s {2}ETA 0s/);
    expect(screen).toMatch(/login links: 5 generated, 1 failed, 0 skipped in (\d+ms|[\d.]+s)/);
  });

  it('shows one link as a card, and the ledger as a table expiring soonest first', async () => {
    const home = makeHome();
    const card = await runCli(['login-link', ids[0]!, '--expiry-hours', '2', '--yes'], { env: env(), tty: true, home });
    expect(card.exitCode).toBe(0);
    expect(card.stdout).toContain(`Login link for account ${FIRST_ACCOUNT_ID}`);
    expect(card.stdout).toMatch(/Expires:\s+\S+ \S+ UTC \(in 2 hours\)/);
    await runCli(['login-link', ids[1]!], { env: env(), home });

    const ledger = await runCli(['login-link', 'ledger'], { env: env(), tty: true, home });
    expect(ledger.exitCode).toBe(0);
    // The pseudo-terminal is 80 columns wide: the table is fitted to it, the account column kept whole.
    const rows = ledger.stdout.split('\n').filter((line) => /^\d+ /.test(line));
    expect(rows.map((row) => row.split(' ')[0])).toEqual([ids[0], ids[1]]);
    expect(Math.max(...ledger.stdout.split('\n').map((line) => withoutColor(line).length))).toBeLessThanOrEqual(80);
    expect(rows[0]).toContain('valid');
  });
});

describe('login-link in a pipe', () => {
  it('prints tab-separated lines and no progress; reads ids from stdin', async () => {
    const result = await runCli(['login-link', '--from', '-'], { env: env(), input: `${ids.join('\n')}\n` });
    expect(result.exitCode).toBe(9);
    const lines = result.stdout.trim().split('\n').map((line) => line.split('\t'));
    expect(lines.map((cells) => cells[0]).sort()).toEqual(['failed', 'issued', 'issued', 'issued', 'issued', 'issued']);
    expect(lines.filter((cells) => cells[0] === 'failed')).toEqual([['failed', String(SUSPENDED), '-', 'ACCOUNT_SUSPENDED', expect.stringContaining('suspended')]]);
    expect(result.stderr).not.toContain('ETA');
    expect(result.stderr).not.toContain('\x1b');
    expect(result.stderr.trim()).toMatch(new RegExp(`^login links: 5 generated, 1 failed, 0 skipped in (\\d+ms|[\\d.]+s) \\([\\d.]+/s\\)\nfailed: ${SUSPENDED} ACCOUNT_SUSPENDED$`));
  });
});

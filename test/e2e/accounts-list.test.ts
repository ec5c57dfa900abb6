import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, registerSecret, runCli } from '../helpers/cli';
import { startServeMock, type ServedMock } from '../helpers/serveMock';

/**
 * Issue 21, case 6: `accounts list` was "unknown command". It lists the accounts this machine knows
 * for the service (ledgers, deliverable list) with where each was seen, and says the service has
 * no account list.
 */

let mock: ServedMock;

beforeAll(async () => {
  mock = await startServeMock();
  for (const key of Object.values(mock.keys)) registerSecret(key);
});
afterAll(async () => {
  await mock?.stop();
});

describe('accounts list', () => {
  it('lists the ledgers\' accounts and the deliverable list\'s, with where each was seen, and says the service has none', async () => {
    const home = makeHome();
    const env = { TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: mock.keys['Acme production key']! };
    const created = await runCli(['--json', 'accounts', 'create', '--email', 'listed@example.com', '--first-name', 'Lis', '--last-name', 'Ted'], { home, env });
    const id = JSON.parse(created.stdout).id as number;

    const json = await runCli(['accounts', 'list', '--json'], { home, env });
    expect(json.exitCode).toBe(0);
    const document = JSON.parse(json.stdout);
    expect(document).toMatchObject({ service: new URL(mock.baseUrl).origin, deliverables_read: true });
    expect(document.accounts).toContainEqual({ account_id: id, email: 'listed@example.com', seen_in: ['accounts create', 'login-link'] });
    const fromDeliverables = document.accounts.filter((account: { seen_in: string[] }) => account.seen_in.includes('deliverable list'));
    expect(fromDeliverables.length).toBeGreaterThan(0);
    for (const account of document.accounts) expect(Object.keys(account).sort()).toEqual(['account_id', 'email', 'seen_in']);
    expect(json.stderr).toContain('The service has no list of accounts');

    const table = await runCli(['accounts', 'list'], { home, env });
    expect(table.stdout).toMatch(new RegExp(`^${id}\\s+listed@example\\.com\\s+accounts create, login-link$`, 'm'));
    expect(table.stderr).toContain('an account in none of these is not shown');

    const help = await runCli(['accounts', 'list', '--help']);
    expect(help.stdout).toContain('The service has no endpoint that lists accounts');
  });
});

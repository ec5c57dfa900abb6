import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHome, registerSecret, runCli, withoutColor } from '../helpers/cli';
import { startServeMock, type ServedMock } from '../helpers/serveMock';

/**
 * Issue 21, case 6: `accounts list` was "unknown command". It lists the accounts this machine knows
 * for the service (ledgers, deliverable list) with where each was seen, and says the service has
 * no account list. Case 9: `accounts import --dry-run` on a terminal printed raw JSON bodies wrapped
 * over lines; import result lines were not aligned as the README shows.
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

describe('accounts import on a terminal', () => {
  it('--dry-run prints a table of what would be sent, JSON only with --json; result lines are aligned', async () => {
    const home = makeHome();
    const env = { TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: mock.keys['Acme production key']!, COLUMNS: '80' };
    const clients = join(home, 'clients.csv');
    writeFileSync(
      clients,
      'email,first_name,last_name,spouse_email,spouse_first_name,spouse_last_name,send_invitation\n' +
        'jo@t.example.com,Jo,Roe,,,,\n' +
        'samantha.longname@terminal.example.com,Samantha,Lee,kim.lee@terminal.example.com,Kim,Lee,false\n' +
        'maria.gonzalez@example.com,María,González,,,,\n',
    );
    const dry = await runCli(['accounts', 'import', clients, '--dry-run'], { home, env, tty: true });
    expect(dry.exitCode).toBe(0);
    const screen = withoutColor(dry.stdout);
    // At 80 columns: emails and names whole; what cannot fit is left out, said under the table.
    expect(screen).toMatch(/^PLAN +LINE +EMAIL +NAME$/m);
    expect(screen).toMatch(/^create +line 3 +samantha\.longname@terminal\.example\.com +Samantha Lee$/m);
    expect(screen).toMatch(/^create +line 4 +maria\.gonzalez@example\.com +María González$/m);
    expect(screen).toContain('(SPOUSE, ACCOUNT not shown at 80 columns; --json has every field)');
    const wide = withoutColor((await runCli(['accounts', 'import', clients, '--dry-run'], { home, env: { ...env, TAXPREP_FORCE_TTY: '120' } })).stdout);
    expect(wide).toMatch(/^create +line 3 +samantha\.longname@terminal\.example\.com +Samantha Lee +kim\.lee@terminal\.example\.com \(not +-$/m);
    expect(screen).not.toContain('…');
    expect(screen).not.toContain('{"');
    const json = await runCli(['--json', 'accounts', 'import', clients, '--dry-run'], { home, env });
    expect(JSON.parse(json.stdout.split('\n')[0]!)).toMatchObject({ line: 2, plan: 'create', body: { email: 'jo@t.example.com' } });

    const run = await runCli(['accounts', 'import', clients, '--concurrency', '1'], { home, env, tty: true });
    // Each line as it stays on the screen: after the progress line it overwrote (`\r`, erase to the end).
    const lines = withoutColor(run.stdout)
      .split('\n')
      .map((line) => line.split('\r').pop()!.replace(/\u001b\[K/g, ''))
      .filter((line) => /^[✓=] /.test(line));
    expect(lines).toHaveLength(3);
    // The account id of every line starts in the same column: status, line and email are padded.
    const idColumn = (line: string) => line.search(/\d+$/);
    expect(new Set(lines.map(idColumn)).size).toBe(1);
    expect(lines.find((line) => line.includes('maria.gonzalez'))).toMatch(/^= exists +line 4 +maria\.gonzalez@example\.com +1001$/);
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors';
import { defaultPathOf } from '../../src/batch/ledger';
import { ACCOUNTS, AccountsLedger } from '../../src/batch/ledgers/accounts';
import { Ledger } from '../../src/batch/ledgers/loginLinks';
import { addOrigin, describeSources, gatherAccounts, type AccountSources } from '../../src/follow/accounts';
import { createTestContext } from '../helpers/context';

/**
 * Which accounts `status` and `watch` look at: gathered from `--accounts`, and from the ledgers of
 * this machine at this service only; and the one line that tells a person where they came from.
 */

const BASE_URL = 'http://127.0.0.1:4010/v1beta';
const ORIGIN = 'http://127.0.0.1:4010';
const at = new Date('2026-11-23T10:00:00Z');

/** A data home with an accounts ledger (1001 created, 1002 imported here; 1009 at another service) and a login-link ledger at `linksPath` (1002 and 1003 here, 1008 elsewhere). */
async function ledgers(): Promise<{ env: Record<string, string>; linksPath: string; home: string }> {
  const home = mkdtempSync(join(tmpdir(), 'taxprep-follow-accounts-'));
  const env = { XDG_DATA_HOME: join(home, 'data') };
  const accounts = await AccountsLedger.open(defaultPathOf(ACCOUNTS, env));
  const who = { origin: ORIGIN, profile: 'acme', at };
  await accounts.recordAccount('created', { ...who, email: 'jane@example.com', account_id: 1001, source: 'create' });
  await accounts.recordAccount('created', { ...who, email: 'john@example.com', account_id: 1002, source: 'import' });
  await accounts.recordAccount('created', { ...who, origin: 'https://other.example', email: 'ann@example.com', account_id: 1009, source: 'create' });
  await accounts.close();
  // A --ledger of its own, not the default path: only where the option says is read.
  const linksPath = join(home, 'links.ndjson');
  const links = await Ledger.open(linksPath);
  const link = { user_email: 'pat@example.com', purpose: 'expired_link', expires_at: '2026-11-30T10:00:00Z', created_at: '2026-11-23T11:00:00Z' };
  const meta = { profile: 'acme', at };
  for (const [origin, accountId] of [[ORIGIN, 1002], [ORIGIN, 1003], ['https://other.example', 1008]] as const) {
    const target = { origin, account_id: accountId, user_email: null };
    await links.recordIssued(await links.recordIntent(target, meta), target, link, meta);
  }
  await links.close();
  return { env, linksPath, home };
}

const plain = (sources: AccountSources) => ({
  origins: Object.fromEntries([...sources.origins].map(([account, set]) => [account, [...set]])),
  fileLines: Object.fromEntries(sources.fileLines),
  ledgerCounts: Object.fromEntries(sources.ledgerCounts),
});

describe('gatherAccounts', () => {
  it('takes the accounts of --accounts and of the ledgers at this service, counting each ledger command once per account', async () => {
    const { env, linksPath, home } = await ledgers();
    const file = join(home, 'clients.csv');
    // 1004 twice (two holders of one account): the first line is the one messages name.
    writeFileSync(file, 'account_id,user_email\n1004,a@example.com\n1001,\n1004,b@example.com\n');
    const t = createTestContext({ env });
    const sources = await gatherAccounts(t.ctx, { accountsFile: file, loginLinksLedger: linksPath, baseUrl: BASE_URL });
    expect(plain(sources)).toEqual({
      origins: { 1001: ['file', 'ledger'], 1002: ['ledger'], 1003: ['ledger'], 1004: ['file'] },
      fileLines: { 1001: `${file} line 3`, 1004: `${file} line 2` },
      ledgerCounts: { 'accounts create': 1, 'accounts import': 1, 'login-link': 2 },
    });
    expect([...sources.origins.keys()]).toEqual([1004, 1001, 1002, 1003]);
  });

  it('finds the accounts of an import\'s own input by email, in the accounts ledger of this service', async () => {
    const { env, home } = await ledgers();
    const file = join(home, 'import.csv');
    writeFileSync(file, 'email,first_name,last_name\njohn@example.com,John,Okafor\njane@example.com,Jane,Doe\n');
    const t = createTestContext({ env });
    const sources = await gatherAccounts(t.ctx, { accountsFile: file, loginLinksLedger: join(home, 'none.ndjson'), baseUrl: BASE_URL });
    expect(plain(sources).fileLines).toEqual({ 1002: `${file} line 2`, 1001: `${file} line 3` });
    // The same emails at another service are not these accounts.
    const elsewhere = gatherAccounts(t.ctx, { accountsFile: file, loginLinksLedger: join(home, 'none.ndjson'), baseUrl: 'https://third.example/v1beta' });
    await expect(elsewhere).rejects.toThrow(/\n  line 2 names john@example\.com, whose account the accounts ledger does not know at this service/);
  });

  it('names --accounts when its file cannot be read', async () => {
    const { env, home } = await ledgers();
    const missing = join(home, 'missing.txt');
    const error = await gatherAccounts(createTestContext({ env }).ctx, { accountsFile: missing, loginLinksLedger: undefined, baseUrl: BASE_URL }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(`--accounts ${missing}: no such file`);
  });
});

describe('describeSources', () => {
  const sources = (): AccountSources => ({ origins: new Map(), fileLines: new Map(), ledgerCounts: new Map() });

  it('says how many accounts came from each place, and from which command of the ledgers', async () => {
    const { env, linksPath, home } = await ledgers();
    const file = join(home, 'clients.txt');
    writeFileSync(file, '1001\n1004\n');
    const gathered = await gatherAccounts(createTestContext({ env }).ctx, { accountsFile: file, loginLinksLedger: linksPath, baseUrl: BASE_URL });
    addOrigin(gathered, 1004, 'deliverables');
    addOrigin(gathered, 1005, 'deliverables');
    expect(describeSources(gathered, file)).toBe(
      `5 accounts (2 from the deliverable list, 2 from ${file}, 3 from the ledgers: accounts create 1, accounts import 1, login-link 2)`,
    );
  });

  it('leaves out the file when none was given, the commands when no ledger named one, and says one account in the singular', () => {
    const one = sources();
    addOrigin(one, 1001, 'deliverables');
    expect(describeSources(one, undefined)).toBe('1 account (1 from the deliverable list, 0 from the ledgers)');
    expect(describeSources(sources(), '-')).toBe('0 accounts (0 from the deliverable list, 0 from stdin, 0 from the ledgers)');
  });
});

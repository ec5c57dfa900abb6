import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAccountInput } from '../../src/batch/accountInput';
import { readImport } from '../../src/commands/accounts/importInput';
import { UsageError } from '../../src/errors';
import { makeHome, runMain } from '../helpers/cli';

/**
 * Issue 21, case 2: the renewal recipe's input is the import's. One reader (src/batch/accountInput.ts)
 * takes ids, an account_id CSV or NDJSON, the file an import read and the results file it wrote.
 */

function usageError(run: () => unknown): UsageError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
  throw new Error('expected a usage error');
}

const ledger = new Map([
  ['jane.roe@example.com', 2002],
  ['sam.lee@example.com', 2003],
]);
const lookup = (email: string) => ledger.get(email.toLowerCase());

describe("the import's own files as account input", () => {
  it("reads the import's CSV, finding each holder's account in the accounts ledger and an invited spouse's link", () => {
    const csv =
      'email,first_name,last_name,spouse_email,spouse_first_name,spouse_last_name,send_invitation\n' +
      'jane.roe@example.com,Jane,"Roe, Jr",,,,\n' +
      'sam.lee@example.com,Sam,Lee,kim.lee@example.com,Kim,Lee,\n';
    expect(parseAccountInput(csv, 'clients.csv', lookup)).toEqual({
      format: 'csv',
      items: [
        { origin: 'line 2', account_id: 2002 },
        { origin: 'line 3', account_id: 2003 },
        { origin: 'line 3', account_id: 2003, user_email: 'kim.lee@example.com' },
      ],
    });
  });

  it('leaves out a spouse who was not invited (no link came with the account)', () => {
    const csv = 'email,first_name,last_name,spouse_email,spouse_first_name,spouse_last_name,send_invitation\nsam.lee@example.com,Sam,Lee,kim.lee@example.com,Kim,Lee,no\n';
    expect(parseAccountInput(csv, 'clients.csv', lookup).items).toEqual([{ origin: 'line 2', account_id: 2003 }]);
  });

  it('names each email the accounts ledger does not know, once per line', () => {
    const error = usageError(() => parseAccountInput('email,first_name,last_name\nnew@example.com,N,E\njane.roe@example.com,J,R\n', 'clients.csv', lookup));
    expect(error.message).toBe(
      'clients.csv has 1 bad line; nothing was sent:\n  line 2 names new@example.com, whose account the accounts ledger does not know at this service (import it first, or give its account_id)',
    );
  });

  it("reads the import's --results file (CSV and NDJSON), leaving out failed rows", () => {
    const csv = 'line,email,status,account_id,error_code,error_message\n2,jane.roe@example.com,created,2002,,\n3,x@example.com,failed,,DUPLICATE_EMAIL,taken\n4,m@example.com,exists,1001,,\n';
    expect(parseAccountInput(csv, 'results.csv').items).toEqual([
      { origin: 'line 2', account_id: 2002 },
      { origin: 'line 4', account_id: 1001 },
    ]);
    const ndjson = '{"line":2,"email":"jane.roe@example.com","status":"created","account_id":2002,"error_code":null,"error_message":null}\n';
    expect(parseAccountInput(ndjson, 'results.ndjson').items).toEqual([{ origin: 'line 1', account_id: 2002 }]);
  });

  it('says once that a file has no column naming an account, with the columns it has and those it accepts', () => {
    const rows = Array.from({ length: 15 }, (_, index) => `Client ${index},Name,x`).join('\n');
    const error = usageError(() => parseAccountInput(`name,first,last\n${rows}\n`, 'clients.csv', lookup));
    expect(error.message).toBe('clients.csv has no column that names an account: it has the columns "name", "first", "last"');
    expect(error.hint).toContain('Give an account_id column');
    expect(error.hint).toContain('the --results file of an import');
  });
});

describe('a CSV whose header breaks the CSV rules', () => {
  it('is refused as a usage error naming the file and the line (exit 2), never as an unexpected failure', async () => {
    const home = makeHome();
    const env = { TAXPREP_BASE_URL: 'http://127.0.0.1:9', TAXPREP_API_KEY: 'tpk_test_inputs_0000000000000000' };
    const cases: Array<[string, string, string]> = [
      ['unclosed.csv', '"account_id\n1001\n', 'line 1: a quoted field is not closed'],
      ['quote.csv', '\naccount_id,purpose"x\n1001,a\n', 'line 2: a quote may only start a field ("..."); write "" for a quote inside a quoted field'],
      ['after.csv', '"account_id"x,purpose\n1001,a\n', 'line 1: unexpected text after a closing quote'],
    ];
    for (const [name, text, problem] of cases) {
      const path = join(home, name);
      writeFileSync(path, text);
      for (const args of [['login-link', '--from', path], ['login-link', 'renew', '--from', path, '--within', '24h', '--dry-run']]) {
        const result = await runMain(args, { home, env });
        expect({ exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr }).toEqual({ exitCode: 2, stdout: '', stderr: `error: ${path}: ${problem}\n` });
      }
    }
  });

  it('reads a header whose quoted name spans lines, as the rest of the CSV is read (login-link --from, accounts import)', () => {
    expect(parseAccountInput('account_id,"purpose\n"\n1001,support_request\n', 'spans.csv').items).toEqual([{ origin: 'line 3', account_id: 1001, purpose: 'support_request' }]);
    expect(readImport('email,first_name,"last_name\n"\njane@example.com,Jane,Roe\n', 'spans.csv').rows).toEqual([{ line: 3, email: 'jane@example.com', body: { email: 'jane@example.com', first_name: 'Jane', last_name: 'Roe' } }]);
  });
});

describe('the count of bad lines', () => {
  it('is of lines, not of problems: a line that breaks two rules is one bad line, both rules listed', () => {
    expect(usageError(() => parseAccountInput('account_id,expiry_hours\nabc,500\n1002,24\n', 'links.csv')).message).toBe(
      'links.csv has 1 bad line; nothing was sent:\n  line 2: account_id must be a positive integer\n  line 2: expiry_hours must be an integer from 1 to 168',
    );
  });
});

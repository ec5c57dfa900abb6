import { describe, expect, it } from 'vitest';
import { parseAccountInput } from '../../src/batch/accountInput';
import { UsageError } from '../../src/errors';

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

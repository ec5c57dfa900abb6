import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { booleanCell, itemsFromArguments, parseAccountInput, readAccountInput } from '../../src/batch/accountInput';
import { defaultPathOf } from '../../src/batch/ledger';
import { ACCOUNTS, AccountsLedger } from '../../src/batch/ledgers/accounts';
import { readImport } from '../../src/commands/accounts/importInput';
import { UsageError } from '../../src/errors';
import { fileBackend } from '../../src/state/backend';
import type { Context } from '../../src/types';
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

  it("reads the invited spouse of an import's results (spouse_email) as a user of the account, whose link is renewed too", () => {
    const csv = 'line,email,status,account_id,spouse_email,error_code,error_message\n2,jane.roe@example.com,created,2002,sam.roe@example.com,,\n3,m@example.com,exists,1001,,,\n4,f@example.com,failed,,gone@example.com,DUPLICATE_EMAIL,taken\n';
    expect(parseAccountInput(csv, 'results.csv').items).toEqual([
      { origin: 'line 2', account_id: 2002 },
      { origin: 'line 2', account_id: 2002, user_email: 'sam.roe@example.com' },
      { origin: 'line 3', account_id: 1001 },
    ]);
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

describe('which format and shape a file has, from its first line', () => {
  const items = (text: string, lookup?: (email: string) => number | undefined) => parseAccountInput(text, 'f', lookup);

  it('one id a line, even when its first line is a comment with a comma', () => {
    expect(items('# accounts, one a line\r\n  # indented comment\r\n1001\r\n\r\n 1002\r\n')).toEqual({
      format: 'ids',
      items: [
        { origin: 'line 3', account_id: 1001 },
        { origin: 'line 5', account_id: 1002 },
      ],
    });
  });

  it('a CSV whose only column is a known one, quoted or padded', () => {
    expect(items('"account_id"\n1001\n')).toEqual({ format: 'csv', items: [{ origin: 'line 2', account_id: 1001 }] });
    expect(items('" account_id"\n1001\n')).toEqual({ format: 'csv', items: [{ origin: 'line 2', account_id: 1001 }] });
    expect(items('email\njane.roe@example.com\n', lookup)).toEqual({ format: 'csv', items: [{ origin: 'line 2', account_id: 2002 }] });
  });

  it("an import's results with only the columns that matter; an NDJSON import by its email key", () => {
    expect(items('status,account_id\ncreated,1001\nfailed,\nexists,1002\n').items).toEqual([
      { origin: 'line 2', account_id: 1001 },
      { origin: 'line 4', account_id: 1002 },
    ]);
    expect(items('{"email":"jane.roe@example.com","first_name":"Jane"}\n{"email":"sam.lee@example.com","spouse_email":"kim.lee@example.com"}\n', lookup)).toEqual({
      format: 'ndjson',
      items: [
        { origin: 'line 1', account_id: 2002 },
        { origin: 'line 2', account_id: 2003 },
        { origin: 'line 2', account_id: 2003, user_email: 'kim.lee@example.com' },
      ],
    });
  });

  it('a column of another shape beside account_id is refused as unknown, with the link columns', () => {
    const linkColumns = 'columns are account_id, user_email, purpose, expiry_hours';
    expect(usageError(() => items('account_id,email\n1001,a@b.co\n')).message).toBe(`f: line 1: unknown column "email"; ${linkColumns}`);
    expect(usageError(() => items('line,account_id\n2,1001\n')).message).toBe(`f: line 1: unknown column "line"; ${linkColumns}`);
    expect(usageError(() => items('status,account_id,purpose\ncreated,1001,x\n')).message).toBe(`f: line 1: unknown column "status"; ${linkColumns}`);
    expect(usageError(() => items('{"account_id":1,"status":"created","purpose":"x"}\n')).message).toBe(
      `f has 1 bad line; nothing was sent:\n  line 1 has unknown field "status"; fields are account_id, user_email, purpose, expiry_hours`,
    );
  });

  it('no column naming an account: said with the columns there are (none for an NDJSON line that is not an object of them) and those taken', () => {
    const hint =
      'Give an account_id column (with user_email, purpose, expiry_hours if you like), the file an accounts import read (its email column, ' +
      'looked up in the accounts ledger), the --results file of an import, or one account id a line.';
    for (const [text, has] of [
      ['line\n2\n', 'the columns "line"'],
      ['email,notes\na@b.co,x\n', 'the columns "email", "notes"'],
      ['{}\n', 'no columns'],
      ['{oops\n', 'no columns'],
      ['{"user_email":"a@b.co"}\n', 'the columns "user_email"'],
    ]) {
      const error = usageError(() => items(text!));
      expect(error.message).toBe(`f has no column that names an account: it has ${has}`);
      expect(error.hint).toBe(hint);
    }
  });

  it('nothing to read: with how to give ids when the file is empty, plainly when every line is a comment or a failed result', () => {
    const empty = usageError(() => items('\uFEFF\n \n'));
    expect([empty.message, empty.hint]).toEqual(['f holds no account ids', 'Give one account id a line, a CSV with an account_id column, or NDJSON objects.']);
    for (const text of ['# none yet\n', 'status,account_id,error_code\nfailed,,DUPLICATE_EMAIL\n']) {
      const none = usageError(() => items(text));
      expect([none.message, none.hint]).toEqual(['f holds no account ids', undefined]);
    }
  });
});

describe("the lines of an import's files", () => {
  const items = (text: string) => parseAccountInput(text, 'f', lookup).items;
  const header = 'email,first_name,last_name,spouse_email,spouse_first_name,spouse_last_name,send_invitation\n';

  it("an invited spouse's link: send_invitation given as any word of yes, or left out; none for a word of no", () => {
    const rows = (invitation: string) => items(`${header}sam.lee@example.com,Sam,Lee,kim.lee@example.com,Kim,Lee,${invitation}\n`).length;
    for (const yes of ['', 'TRUE', 'Yes', '1', 'maybe']) expect(rows(yes)).toBe(2);
    for (const no of ['FALSE', 'No', '0']) expect(rows(no)).toBe(1);
    expect(items('{"email":"sam.lee@example.com","spouse_email":"kim.lee@example.com","send_invitation":false}\n')).toEqual([{ origin: 'line 1', account_id: 2003 }]);
    expect(items('{"email":"sam.lee@example.com","spouse_email":"kim.lee@example.com","send_invitation":true}\n')).toHaveLength(2);
    expect(items('{"email":"sam.lee@example.com","send_invitation":true}\n')).toEqual([{ origin: 'line 1', account_id: 2003 }]);
  });

  it('a line without an email, or one that is not JSON, cannot be read; an unknown email is printed on one line', () => {
    const error = usageError(() => items('{"email":"jane.roe@example.com"}\n{"first_name":"Jo"}\n{"email":7}\n{oops\n{"email":"new\\u001b[2J@example.com"}\n'));
    expect(error.message).toBe(
      'f has 4 bad lines; nothing was sent:\n' +
        '  line 2 has no email to find its account by\n' +
        '  line 3 has no email to find its account by\n' +
        '  line 4 is not valid JSON (NDJSON needs one JSON object a line)\n' +
        '  line 5 names new@example.com, whose account the accounts ledger does not know at this service (import it first, or give its account_id)',
    );
  });

  it('without the accounts ledger, no email is known', () => {
    expect(usageError(() => parseAccountInput('email\njane.roe@example.com\n', 'f')).message).toContain('line 2 names jane.roe@example.com, whose account the accounts ledger does not know');
  });

  it("a results file's line that cannot be read, or has no account, is named; its other columns are not checked", () => {
    expect(usageError(() => items('{"status":"created","account_id":2002}\n[2]\n{"status":"exists"}\n')).message).toBe(
      'f has 2 bad lines; nothing was sent:\n  line 2 must be a JSON object such as {"account_id": 1001}\n  line 3: account_id is required',
    );
    expect(items('line,email,status,account_id\n2,not an email,created,2002\n')).toEqual([{ origin: 'line 2', account_id: 2002 }]);
  });
});

describe('the same user twice', () => {
  it('is the same account and user email, whatever its case; the same account for another user, or for the account alone, is not', () => {
    const csv = 'account_id,user_email\n1001,Jane@Example.com\n1001,kim@example.com\n1001,\n1001,jane@example.com\n1001,\n';
    expect(usageError(() => parseAccountInput(csv, 'f')).message).toBe(
      'f has 2 bad lines; nothing was sent:\n' +
        '  line 5: account 1001 (jane@example.com) repeats line 2; a second link would invalidate the first\n' +
        '  line 6: account 1001 repeats line 4; a second link would invalidate the first',
    );
    expect(parseAccountInput('account_id,user_email\n1001,jane@example.com\n1001,kim@example.com\n1001,\n', 'f').items).toHaveLength(3);
  });
});

describe('ids on the command line', () => {
  it('are named by position, as a bad line of the command line', () => {
    expect(usageError(() => itemsFromArguments(['1001', '-5', '1001'])).message).toBe(
      'the command line has 2 bad lines; nothing was sent:\n  argument 2: account_id must be a positive integer\n  argument 3: account 1001 repeats argument 1; a second link would invalidate the first',
    );
    expect(itemsFromArguments(['1001', '1002'])).toEqual([
      { origin: 'argument 1', account_id: 1001 },
      { origin: 'argument 2', account_id: 1002 },
    ]);
  });
});

describe('booleanCell', () => {
  it('reads the words a spreadsheet writes for true and false, in any case; anything else is left as it is', () => {
    expect(['true', 'Yes', '1', 'TRUE'].map(booleanCell)).toEqual([true, true, true, true]);
    expect(['false', 'NO', '0', 'False'].map(booleanCell)).toEqual([false, false, false, false]);
    expect(['y', '', 'off'].map(booleanCell)).toEqual(['y', '', 'off']);
    expect([true, false, 1, null].map(booleanCell)).toEqual([true, false, 1, null]);
  });
});

describe('readAccountInput', () => {
  const ORIGIN = 'http://127.0.0.1:4010';

  async function setUp(): Promise<{ dir: string; env: Record<string, string> }> {
    const dir = mkdtempSync(join(tmpdir(), 'taxprep-account-input-'));
    const env = { XDG_DATA_HOME: join(dir, 'data'), HOME: dir };
    const ledger = await AccountsLedger.open(defaultPathOf(ACCOUNTS, env));
    for (const [origin, email, account_id] of [
      [ORIGIN, 'jane.roe@example.com', 2002],
      ['http://127.0.0.1:4011', 'sam.lee@example.com', 2003],
    ] as const) {
      await ledger.recordAccount('created', { origin, email, account_id, source: 'import', profile: null, at: new Date(0) });
    }
    await ledger.close();
    return { dir, env };
  }
  const ctxOf = (env: Record<string, string>, stdin: string[] = []) => ({ env, io: { stdin: Readable.from(stdin) }, state: async () => fileBackend(env) }) as unknown as Pick<Context, 'io' | 'env' | 'state'>;

  it("finds an import's emails in the accounts ledger, at the service's origin only", async () => {
    const { dir, env } = await setUp();
    const path = join(dir, 'clients.csv');
    writeFileSync(path, 'email,first_name\njane.roe@example.com,Jane\nsam.lee@example.com,Sam\n');
    const error = await readAccountInput(ctxOf(env), path, '--from', async () => `${ORIGIN}/v1`).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(
      `${path} has 1 bad line; nothing was sent:\n  line 3 names sam.lee@example.com, whose account the accounts ledger does not know at this service (import it first, or give its account_id)`,
    );
    writeFileSync(path, 'email\nJane.Roe@example.com\n');
    expect(await readAccountInput(ctxOf(env), path, '--from', async () => `${ORIGIN}/v1`)).toEqual([{ origin: 'line 2', account_id: 2002 }]);
  });

  it('reads stdin for `-` (named stdin), and asks for the service only for an import', async () => {
    const { env } = await setUp();
    const noService = async (): Promise<string> => {
      throw new Error('the service was asked for');
    };
    expect(await readAccountInput(ctxOf(env, ['1001\n1002\n']), '-', '--accounts', noService)).toEqual([
      { origin: 'line 1', account_id: 1001 },
      { origin: 'line 2', account_id: 1002 },
    ]);
    const error = await readAccountInput(ctxOf(env, ['x\n']), '-', '--accounts', noService).catch((caught: unknown) => caught);
    expect((error as UsageError).message).toBe('stdin has 1 bad line; nothing was sent:\n  line 1: account_id must be a positive integer');
  });

  it('names the flag when the file cannot be read', async () => {
    const { dir, env } = await setUp();
    const error = await readAccountInput(ctxOf(env), join(dir, 'gone.txt'), '--accounts', async () => ORIGIN).catch((caught: unknown) => caught);
    expect((error as UsageError).message).toBe(`--accounts ${join(dir, 'gone.txt')}: no such file`);
  });
});

describe('the edges of reading account input', () => {
  it('takes a first line for a column name only when it is one, whole or quoted whole: a quote inside makes it a bad id', () => {
    expect(usageError(() => parseAccountInput('acc"ount_id\n1001\n', 'f')).message).toBe('f has 1 bad line; nothing was sent:\n  line 1: account_id must be a positive integer');
  });

  it('drops a byte-order mark at the start only: one inside a value is kept', () => {
    for (const start of ['\uFEFF', '']) {
      expect(parseAccountInput(`${start}{"account_id":1001,"purpose":"a\uFEFFb"}\n`, 'f').items).toEqual([{ origin: 'line 1', account_id: 1001, purpose: 'a\uFEFFb' }]);
    }
  });

  it('lists every rule a value breaks, in one line', () => {
    expect(usageError(() => parseAccountInput(`account_id,user_email\n1001,${'x'.repeat(300)}\n`, 'f')).message).toBe(
      'f has 1 bad line; nothing was sent:\n  line 2: user_email must be at most 254 characters; must be a valid email address',
    );
  });
});
